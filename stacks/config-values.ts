/**
 * Config values as Pulumi hands them over (`key → text`), decoded and parsed with the stack schema. No Pulumi import
 * here: the CLI's stack sweep reads a stack's config through it without loading the Pulumi SDK (pulumi-config.ts is the
 * program's reader, over the runtime).
 */
import { ConfigError, parseStackConfig, rawFromPulumiConfig, type ParsedStackConfig } from "../config/schema.js";
import { PROJECT } from "../config/sections.js";

/** Pulumi hands object-valued config to programs as JSON text; plain strings stay strings. */
export function decodeConfigValue(value: string): unknown {
  const t = value.trim();
  if (!/^[[{]/.test(t) && !/^(true|false|null|-?\d+(\.\d+)?)$/.test(t)) return value;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return value;
  }
}

/**
 * Parses config values as Pulumi hands them over (`key → text`, e.g. `pulumi.runtime.allConfig()`
 * or the Automation API's `getAllConfig()` values) with the stack schema, requiring the password
 * when auth is on. The password's value never enters the schema: only whether it is set, and
 * whether as a secret (`isSecret`).
 * @throws ConfigError naming every problem by key path.
 */
export function parseConfigValues(all: Record<string, string>, isSecret: (key: string) => boolean): ParsedStackConfig {
  const decoded: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(all)) {
    decoded[key] =
      key === `${PROJECT}:password` ? (isSecret(key) ? { secure: "(set)" } : "(plain text)") : decodeConfigValue(value);
  }
  const { raw, issues } = rawFromPulumiConfig(decoded);
  try {
    const parsed = parseStackConfig(raw, { requirePassword: true });
    if (issues.length > 0) throw new ConfigError(issues);
    return parsed;
  } catch (err) {
    if (err instanceof ConfigError && err.issues !== issues && issues.length > 0)
      throw new ConfigError([...issues, ...err.issues]);
    throw err;
  }
}
