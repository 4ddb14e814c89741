/**
 * AZ failback (a POSIX sh loop in the ConfigMap, started in the background by each cluster
 * member's entrypoint, like the heal step). After a failover the promoted replica sits in another
 * zone, so one zone can end up holding more than half of the primaries: losing it then loses the
 * majority. Nothing else moves a primary back. This loop does, with no controller and no API
 * access: every member reads `CLUSTER SHARDS` from its own server (Valkey >= 9.1 gossips each
 * node's `availability-zone`, set from the pod's zone by the start script, and reports it there;
 * 9.0 reports none, so the loop would wait forever: config refuses cluster mode on a 9.0 image
 * tag, valkey-io/valkey#3156) and decides alone.
 *
 * A member acts (`CLUSTER FAILOVER` on itself, the safe manual failover that waits for the offsets
 * to match with clients paused) only when all of these hold, in `confirmRounds` rounds in a row:
 * - `cluster_state:ok`, and every online primary of a shard with slots has a known zone;
 * - it is an online replica whose primary's zone Z holds more than half of the primaries;
 * - moving one primary into its own zone leaves that zone at no more than half;
 * - its replication offset is within `maxLagBytes` of its primary's, and its own INFO says
 *   `master_link_status:up`;
 * - of every member that qualifies, it has the lowest node ID (one failback at a time; all
 *   members compute the same answer from the same gossip).
 * After acting it waits `cooldownSeconds`. The loop ends when the server is gone. A round asks its
 * server everything it reads (zone, CLUSTER INFO, CLUSTER MYID, CLUSTER SHARDS) in one valkey-cli
 * process, split by the markers the server echoes between the answers (failback-round.awk); a
 * round whose call was cut before its last marker decides nothing. One process a question was
 * 35 ms of CPU a round on this machine against 13 ms (docs/measurements.md, 2026-12-03 evening).
 *
 * With `zoneFile`, each round also keeps the server's `availability-zone` (set by the start
 * script, or by the ClusterBootstrap's CONFIG SET where the pod has no zone label: Kubernetes
 * < 1.35) in that file on the data volume, which the start script reads on the next start.
 */
import { VALKEY_PORT } from "../vocabulary/ports.js";
import { cliTimeout, DEFAULT_CLI_TIMEOUT_SECONDS, localHost } from "./sh-cli.js";
import { renderShellFile, shellFile } from "./shell-file.js";

export interface AzFailbackScriptOptions {
  /** @default VALKEY_PORT */
  port?: number;
  /** Address of this pod's own server. @default DEFAULT_LOCAL_HOST */
  localHost?: string;
  /** Seconds between rounds. @default 10 */
  intervalSeconds?: number;
  /** Rounds in a row the same imbalance must be seen before acting. @default 3 */
  confirmRounds?: number;
  /** Seconds to wait after a failback before deciding again. @default 60 */
  cooldownSeconds?: number;
  /** A replica further behind its primary than this does not act. @default 1 MiB */
  maxLagBytes?: number;
  /** @default DEFAULT_CLI_TIMEOUT_SECONDS */
  cliTimeoutSeconds?: number;
  /** Keep the server's `availability-zone` in this file (start-script.ts zoneFileOf). @default not kept */
  zoneFile?: string;
}

function wholeNumber(name: string, v: number, min: number): number {
  if (!Number.isInteger(v) || v < min)
    throw new Error(`AZ failback: ${name} must be a whole number >= ${min}, got ${v}`);
  return v;
}

/**
 * awk over one round's batched replies (CONFIG GET availability-zone, CLUSTER INFO, CLUSTER MYID, CLUSTER SHARDS, each
 * after a marker the server echoes), then the decision over the shards: prints `zone <z>`, `me <id>`, then `unsettled`
 * or the decision's line (pod/scripts/failback-round.awk before failback-decision.awk, as the script includes them).
 */
export function failbackRoundAwk(): string {
  return `${shellFile("failback-round.awk")}\n${shellFile("failback-decision.awk")}`;
}

export function renderAzFailbackScript(o: AzFailbackScriptOptions = {}): string {
  if (failbackRoundAwk().includes("'"))
    throw new Error("AZ failback: the awk programs must not contain a single quote");
  if (o.zoneFile !== undefined && (o.zoneFile === "" || o.zoneFile.includes("'")))
    throw new Error("AZ failback: zoneFile must be a path without a single quote");
  return renderShellFile("cluster-failback.sh", {
    port: wholeNumber("port", o.port ?? VALKEY_PORT, 1),
    local_host: localHost(o.localHost),
    interval: wholeNumber("intervalSeconds", o.intervalSeconds ?? 10, 1),
    confirm: wholeNumber("confirmRounds", o.confirmRounds ?? 3, 1),
    cooldown: wholeNumber("cooldownSeconds", o.cooldownSeconds ?? 60, 1),
    max_lag: wholeNumber("maxLagBytes", o.maxLagBytes ?? 1024 * 1024, 0),
    zone_file: o.zoneFile ?? "",
    cli_timeout: cliTimeout(o.cliTimeoutSeconds ?? DEFAULT_CLI_TIMEOUT_SECONDS),
  });
}
