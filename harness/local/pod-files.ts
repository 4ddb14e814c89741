/**
 * A pod definition (pod/definition.ts) run as a local process: its files written into the
 * process's directory (0600: valkey.conf may be followed by secrets in its includes, and a
 * script needs only `sh` to read it), its command as the launch, and every environment variable
 * it reads required of the caller, as a pod spec must set them.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CLI_AUTH_ENV, missingEnv, type PodDefinition } from "../../pod/definition.js";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import type { LaunchCommand } from "./valkey-process.js";

/** Writes `def.files` into `dir` (which must be the definition's `configDir`) and returns its command with `env`. */
export function launchPod(what: string, def: PodDefinition, dir: string, env: Record<string, string>): LaunchCommand {
  const missing = missingEnv(def, env);
  if (missing.length > 0)
    throw new Error(`${what}: the pod's scripts read ${missing.join(", ")}, which the local launch does not set`);
  for (const [name, text] of Object.entries(def.files)) writeFileSync(join(dir, name), text, { mode: 0o600 });
  const [command, ...args] = def.command;
  if (command === undefined) throw new Error(`${what}: the pod definition has no command`);
  return { command, args, env };
}

/**
 * What a local pod's environment always holds, as its image would: the server's directory first
 * on PATH (the scripts run `valkey-server`), VALKEY_CLI, and with a password the cli's auth
 * variables (CLI_AUTH_ENV), never argv. `server`: the valkey-server the pod runs (its image's),
 * @default resolveBinaries()'s (an upgrade drill starts on an older one).
 */
export function localPodEnv(password: string | undefined, server?: string): Record<string, string> {
  const bin = resolveBinaries();
  const env: Record<string, string> = {
    PATH: `${dirname(server ?? bin.server.path)}:${process.env.PATH ?? ""}`,
    VALKEY_CLI: bin.cli.path,
  };
  if (password !== undefined) for (const name of CLI_AUTH_ENV) env[name] = password;
  return env;
}

/**
 * The pod's mounted Secret, locally: `<dir>/secret/password` (0600 in a 0700 dir), written when there is a password.
 */
export function writePasswordFile(dir: string, password: string | undefined): string {
  const file = join(dir, "secret", "password");
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  if (password !== undefined) writeFileSync(file, password, { mode: 0o600 });
  return file;
}
