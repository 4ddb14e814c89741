/**
 * The readiness probe of a Valkey pod (pod/scripts/readiness.sh, its values filled in by
 * pod/shell-file.ts, in the ConfigMap): ready means synced,
 * not merely alive, so a rollout or a node drain (the PDB counts unready pods) waits for it.
 *
 * - the server answers PING with PONG (not LOADING, not an error);
 * - a replica: `master_link_status:up` and no sync in progress (a replica still in its initial
 *   sync, or cut off from its primary, is not ready);
 * - cluster mode: `cluster_state:ok`, except before the bootstrap: a member that knows of no
 *   assigned slot at all (`cluster_slots_assigned:0`: fresh pods, or met but not yet given slots)
 *   is ready on PONG, since the bootstrap waits for the pods to be ready before it assigns slots;
 *   with `restore`, so is a member that knows no other node (`cluster_known_nodes:1`): a new
 *   stack's restored member claimed its snapshot's slots by itself at start-up and waits for the
 *   bootstrap too.
 *
 * Every valkey-cli call is bounded (sh-cli.ts); the password is only in the environment. The
 * reason for "not ready" goes to stderr, which the kubelet records in the probe's event.
 */
import type { ValkeyMode } from "../config/types.js";
import { VALKEY_PORT } from "../vocabulary/ports.js";
import { cliTimeout, DEFAULT_CLI_TIMEOUT_SECONDS, localHost } from "./sh-cli.js";
import { renderShellFile } from "./shell-file.js";

export interface ReadinessScriptOptions {
  mode: ValkeyMode;
  /** @default VALKEY_PORT */
  port?: number;
  /** Address of this pod's own server. @default DEFAULT_LOCAL_HOST */
  localHost?: string;
  /** Bound of one valkey-cli call; keep (calls x bound) below the probe's timeoutSeconds. @default 2 */
  cliTimeoutSeconds?: number;
  /**
   * `restore.from` is set (cluster mode): a member that has met nobody is ready on PONG too, as a
   * restored member claims its snapshot's slots by itself. @default false
   */
  restore?: boolean;
}

/** Three calls at most (PING, INFO replication, CLUSTER INFO). */
export const READINESS_CLI_CALLS = 3;

export function renderReadinessScript(o: ReadinessScriptOptions): string {
  return renderShellFile("readiness.sh", {
    mode: o.mode,
    restore: o.restore === true ? "yes" : "no",
    port: o.port ?? VALKEY_PORT,
    local_host: localHost(o.localHost),
    cli_timeout: cliTimeout(o.cliTimeoutSeconds ?? Math.min(2, DEFAULT_CLI_TIMEOUT_SECONDS)),
  });
}
