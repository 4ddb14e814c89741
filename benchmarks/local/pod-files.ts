/**
 * A pod definition (pod/definition.ts) run as a local process: its files written into the
 * process's directory (0600: valkey.conf may be followed by secrets in its includes, and a
 * script needs only `sh` to read it), its command as the launch, and every environment variable
 * it reads required of the caller, as a pod spec must set them.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { missingEnv, type PodDefinition } from "../../pod/definition.js";
import type { LaunchCommand } from "./valkey-process.js";

/** Writes `def.files` into `dir` (which must be the definition's `configDir`) and returns its command with `env`. */
export function launchPod(what: string, def: PodDefinition, dir: string, env: Record<string, string>): LaunchCommand {
  const missing = missingEnv(def, env);
  if (missing.length > 0) throw new Error(`${what}: the pod's scripts read ${missing.join(", ")}, which the local launch does not set`);
  for (const [name, text] of Object.entries(def.files)) writeFileSync(join(dir, name), text, { mode: 0o600 });
  const [command, ...args] = def.command;
  if (command === undefined) throw new Error(`${what}: the pod definition has no command`);
  return { command, args, env };
}
