/**
 * Reads the running stack's config from the Pulumi runtime and parses it once with the stack
 * schema, before any resource exists. Used by `stacks/index.ts`; inline Automation API programs
 * call it too, or pass an already parsed config straight to `runProgram`.
 */
import * as pulumi from "@pulumi/pulumi";
import * as runtimeConfig from "@pulumi/pulumi/runtime/config.js";
import { ConfigError, type ParsedStackConfig } from "../config/schema.js";
import { PROJECT } from "../config/sections.js";
import { parseConfigValues } from "./config-values.js";

export interface LoadedPulumiConfig extends ParsedStackConfig {
  /** The Valkey password as a Pulumi secret; undefined when auth is off. */
  passwordSecret: pulumi.Output<string> | undefined;
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
