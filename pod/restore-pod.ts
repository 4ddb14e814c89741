/**
 * The restore steps of a member, defined once: restore.sh (pod/restore-script.ts) and its two
 * steps, `fetch` (an AWS CLI image) then `place` (the Valkey image), before valkey-server starts.
 * The StatefulSet runs them as two init containers (components/valkey/restore-init.ts); a local
 * member runs them in its launch before the server (harness/backup/local-backup.ts). Both take
 * the commands and the environment names from here.
 */
import { RESTORE_MESSAGE_ENV } from "./restore-message.js";
import { renderRestoreScript, type RestoreScriptOptions } from "./restore-script.js";
import type { ScriptStep } from "./script-step.js";

/** The script's file name (the ConfigMap key, the local file). */
export const RESTORE_SCRIPT = "restore.sh";

/** The environment restore.sh reads (pod/restore-script.ts says what each holds). */
export const RESTORE_ENV = {
  from: "RESTORE_FROM",
  /** The shard; without it, the ordinal of POD_NAME. */
  shard: "RESTORE_SHARD",
  podName: "POD_NAME",
  peers: "RESTORE_PEERS",
  peersDns: "RESTORE_PEERS_DNS",
  peersPort: "RESTORE_PEERS_PORT",
  messageFile: RESTORE_MESSAGE_ENV,
} as const;

export interface RestorePodDefinition {
  files: Record<string, string>;
  fetch: ScriptStep;
  place: ScriptStep;
}

/**
 * The two steps with restore.sh in `configDir`: `fetch` needs RESTORE_FROM (the shard comes from
 * RESTORE_SHARD, else the ordinal of POD_NAME: the script fails naming both when neither is set);
 * `place` reads what fetch staged on the data volume, and the peers when they are given.
 */
export function restoreSteps(configDir: string): Omit<RestorePodDefinition, "files"> {
  const sh = (step: string) => ["sh", `${configDir}/${RESTORE_SCRIPT}`, step];
  return { fetch: { command: sh("fetch"), env: [RESTORE_ENV.from] }, place: { command: sh("place"), env: [] } };
}

/** restore.sh for `o`, in `configDir`, and its two steps. */
export function restorePod(o: RestoreScriptOptions & { configDir: string }): RestorePodDefinition {
  const { configDir, ...script } = o;
  return { files: { [RESTORE_SCRIPT]: renderRestoreScript(script) }, ...restoreSteps(configDir) };
}
