/**
 * The readiness probe (a POSIX sh script in the ConfigMap) of a Valkey pod: ready means synced,
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
import { boundedCliLines, DEFAULT_CLI_TIMEOUT_SECONDS, localHostLine } from "./sh-cli.js";

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
   * restored member claims its snapshot's slots by itself. Off, the text is as before the restore
   * existed (a stack without it keeps its ConfigMap). @default false
   */
  restore?: boolean;
}

/** Three calls at most (PING, INFO replication, CLUSTER INFO). */
export const READINESS_CLI_CALLS = 3;

export function renderReadinessScript(o: ReadinessScriptOptions): string {
  const port = o.port ?? VALKEY_PORT;
  const lines = [
    `#!/bin/sh`,
    `# Readiness probe of a Valkey pod (${o.mode} mode), rendered by valkey-on-eks. Exit 0 = ready.`,
    `set -u`,
    `port=${port}`,
    localHostLine(o.localHost),
    `not_ready() { echo "not ready: $*" >&2; exit 1; }`,
    ...boundedCliLines(o.cliTimeoutSeconds ?? Math.min(2, DEFAULT_CLI_TIMEOUT_SECONDS)),
    `answer=$(local_cli ping 2>&1) || not_ready "PING failed: $answer"`,
    `[ "$answer" = PONG ] || not_ready "PING answered: $answer"`,
    `repl=$(local_cli info replication 2>&1) || not_ready "INFO replication failed"`,
    `case "$repl" in`,
    `  *role:slave*)`,
    `    case "$repl" in *master_link_status:up*) ;; *) not_ready "replica whose link to its primary is down" ;; esac`,
    `    case "$repl" in *master_sync_in_progress:1*) not_ready "replica still in its initial sync" ;; esac`,
    `    ;;`,
    `esac`,
  ];
  if (o.mode === "cluster") {
    lines.push(
      `info=$(local_cli cluster info 2>&1) || not_ready "CLUSTER INFO failed"`,
      `case "$info" in *cluster_state:ok*) exit 0 ;; esac`,
      ...(o.restore === true
        ? [
            `# Not bootstrapped yet: no slot assigned anywhere this node knows of, or it has met nobody (a new stack's restored member claimed its snapshot's slots by itself).`,
            `case "$info" in *"cluster_known_nodes:1"[!0-9]*) exit 0 ;; esac`,
          ]
        : [`# Not bootstrapped yet: no slot assigned anywhere this node knows of.`]),
      `case "$info" in *"cluster_slots_assigned:0"[!0-9]*) exit 0 ;; esac`,
      `not_ready "cluster_state is not ok"`,
    );
  } else {
    lines.push(`exit 0`);
  }
  return lines.join("\n") + "\n";
}
