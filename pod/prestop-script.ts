/**
 * The cluster member's preStop hook: pod/scripts/cluster-prestop.sh, with its values filled in
 * (pod/shell-file.ts), in the ConfigMap. A primary that serves
 * slots hands them over before it stops: it runs `CLUSTER FAILOVER` on a SYNCED replica and waits
 * until that replica reports itself primary and this node reports itself replica.
 *
 * Synced means, asked of the replica itself: `master_link_status:up`, no sync in progress, and
 * `slave_repl_offset` within `maxLagBytes` of this primary's `master_repl_offset` (the manual
 * failover then closes the last gap with clients paused). Of several, the one with the highest
 * offset. A replica still in its initial sync or cut off from this primary is never chosen: the
 * pod then stops without a failover and the cluster's own failure detection takes over, which is
 * no worse than promoting a replica that lacks data.
 *
 * Anything else (a replica, a primary without slots or synced replica, a server that does not
 * answer) lets the pod stop at once. Every valkey-cli call is bounded (sh-cli.ts), so a hung
 * connect cannot eat the grace period; the password comes from VALKEYCLI_AUTH / REDISCLI_AUTH in
 * the container environment, never from argv.
 */
import { VALKEY_PORT } from "../vocabulary/ports.js";
import { cliTimeout, DEFAULT_CLI_TIMEOUT_SECONDS, localHost } from "./sh-cli.js";
import { renderShellFile } from "./shell-file.js";

export interface PreStopScriptOptions {
  /** This node's client port. @default VALKEY_PORT */
  port?: number;
  /** Address of this pod's own server. @default DEFAULT_LOCAL_HOST */
  localHost?: string;
  /** How long to wait for the role switch; keep it below terminationGracePeriodSeconds. @default 30 */
  timeoutSeconds?: number;
  /** A replica further behind than this (bytes of replication stream) is not chosen. @default 1 MiB */
  maxLagBytes?: number;
  /** Bound of one valkey-cli call. @default DEFAULT_CLI_TIMEOUT_SECONDS */
  cliTimeoutSeconds?: number;
}

export const DEFAULT_FAILOVER_TIMEOUT_SECONDS = 30;
export const DEFAULT_MAX_FAILOVER_LAG_BYTES = 1024 * 1024;

export function renderPreStopScript(o: PreStopScriptOptions = {}): string {
  const port = o.port ?? VALKEY_PORT;
  const timeout = o.timeoutSeconds ?? DEFAULT_FAILOVER_TIMEOUT_SECONDS;
  const maxLag = o.maxLagBytes ?? DEFAULT_MAX_FAILOVER_LAG_BYTES;
  if (!Number.isInteger(maxLag) || maxLag < 0)
    throw new Error(`preStop: maxLagBytes must be a whole number >= 0, got ${maxLag}`);
  return renderShellFile("cluster-prestop.sh", {
    port,
    local_host: localHost(o.localHost),
    timeout,
    max_lag: maxLag,
    cli_timeout: cliTimeout(o.cliTimeoutSeconds ?? DEFAULT_CLI_TIMEOUT_SECONDS),
  });
}
