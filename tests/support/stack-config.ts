/** The issues a stack config is refused with, for the config tests. */
import { ConfigError, parseStackConfig } from "../../config/schema.js";

/** The issues `parseStackConfig(raw)` refuses `raw` with; [] when it parses. Any other error is thrown. */
export function configIssues(raw: unknown): { path: string; message: string }[] {
  try {
    parseStackConfig(raw);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => ({ path: i.path, message: i.message }));
    throw err;
  }
  return [];
}
