/**
 * Reads the running stack's config from the Pulumi runtime and parses it once with the stack
 * schema, before any resource exists. Used by `stacks/index.ts`; inline Automation API programs
 * call it too, or pass an already parsed config straight to `runProgram`.
 */
import * as pulumi from "@pulumi/pulumi";
import * as runtimeConfig from "@pulumi/pulumi/runtime/config.js";
import { ConfigError, parseStackConfig, rawFromPulumiConfig, type ParsedStackConfig } from "../config/schema.js";
import { PROJECT } from "../config/sections.js";

export interface LoadedPulumiConfig extends ParsedStackConfig {
  /** The Valkey password as a Pulumi secret; undefined when auth is off. */
  passwordSecret: pulumi.Output<string> | undefined;
}

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
 * Whether the runtime holds `key` as a secret. The Node SDK marks this function internal; when a
 * future SDK drops it, every set password is treated as a secret (Pulumi's getSecret still keeps
 * it encrypted in state) and the plain-text check is left to `vbench config`.
 */
function isSecretKey(key: string): boolean {
  const fn = (runtimeConfig as unknown as { isConfigSecret?: (k: string) => boolean }).isConfigSecret;
  return typeof fn === "function" ? fn(key) : true;
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

/**
 * Parses `allConfig` (the `valkey-on-eks:*` keys and `aws:region`) with the stack schema,
 * requiring the password when auth is on.
 * @throws pulumi.RunError carrying the schema's message (every problem by key path), so
 * `pulumi up` prints it without a stack trace and creates nothing.
 */
export function loadPulumiConfig(all: Record<string, string> = pulumi.runtime.allConfig()): LoadedPulumiConfig {
  try {
    const parsed = parseConfigValues(all, isSecretKey);
    const passwordSecret = parsed.config.valkey.auth.enabled
      ? new pulumi.Config(PROJECT).requireSecret("password")
      : undefined;
    return { ...parsed, passwordSecret };
  } catch (err) {
    if (err instanceof ConfigError) throw new pulumi.RunError(err.message);
    throw err;
  }
}
