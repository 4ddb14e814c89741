/** A stack file's config for a command that reads one (`--file`): a bad file is a usage error naming it. */
import { ConfigError, StackFileError, loadStackFile } from "../../config/schema.js";
import type { StackConfig } from "../../config/types.js";
import { UsageError } from "./errors.js";

export function stackConfigOrUsage(file: string): StackConfig {
  try {
    return loadStackFile(file).config;
  } catch (err) {
    if (err instanceof StackFileError || err instanceof ConfigError)
      throw new UsageError(
        `${file}: ${err.message.split("\n")[0] ?? ""} (vbench config --file ${file} lists every problem)`,
      );
    throw err;
  }
}
