/**
 * The replication member's start decision, pod/scripts/replication-start.sh, a fragment of the
 * entrypoint (start.sh includes it; it runs when Sentinel is on). The same rendered text runs in the pods
 * and, under `sh`, in local mode (harness/local/sentinel-topology.ts). The Sentinels' list and
 * this member's port are rendered in; the per-member values come in environment variables:
 *
 *   VALKEY_ANNOUNCE_HOST  this member's stable name/address (what Sentinel reports for it)
 *   VALKEY_ANNOUNCE_IP    optional second identity Sentinel may report (an IP)
 *   POD_NAME              the ordinal (`<statefulset>-<n>`)
 *   VALKEY_CLI            the cli binary (default valkey-cli; redis-cli speaks the same)
 *   REDISCLI_AUTH         set by the script from the password file: the Sentinels' password
 *                         reaches the cli through the environment, never argv
 *
 * Decision (written to the replication include as `replicaof <host> <port>`, or left empty):
 * 1. Ask every Sentinel `SENTINEL GET-MASTER-ADDR-BY-NAME`, with a connect timeout. While the
 *    reachable ones disagree (a failover in flight), ask again, up to the agreement wait; then
 *    the most frequent answer wins.
 * 2. A known primary that is not me: start as its replica. A restarted old primary therefore
 *    always rejoins as a replica of the promoted one. It starts with `replica-priority 0` (no
 *    Sentinel promotes it, SENTINEL FAILOVER included) and a background loop sets
 *    RELEASED_REPLICA_PRIORITY once INFO replication shows its first sync since this start done:
 *    before that it holds only its own AOF, and after every member crashed the Sentinels' own
 *    failover at o_down would otherwise promote a replica that came back first (measured on real
 *    processes: `+selected-slave` of a never-linked replica; tests/harness/restarted-replicas.test.ts).
 * 3. The Sentinels name ME (a restart faster than their failover finished). Read every reachable
 *    Sentinel's `SENTINEL MASTER` (flags s_down/o_down/failover_in_progress, last-ok-ping-reply,
 *    down-after-milliseconds) and `SENTINEL REPLICAS` (per replica: flags, role-reported,
 *    master-host/-port, master-link-status, as that replica's own INFO last told the Sentinel),
 *    from the Sentinels not in TILT⁴:
 *
 *   | live replicas¹ | data dir | Sentinel state                                   | decision                        |
 *   |----------------|----------|--------------------------------------------------|---------------------------------|
 *   | ≥ 1            | any      | any (up, s_down, o_down, failover in progress)   | hand over²: never serve         |
 *   | ≥ 1            | data     | every answer NOGOODSLAVE, none failing over,     | primary (its data is the newest)|
 *   |                |          | no replica master / linked elsewhere³            |                                 |
 *   | 0              | any      | a failover in progress, or a replica master /    | wait (bounded) for the Sentinels|
 *   |                |          | linked elsewhere³                                | to name another, or to settle   |
 *   | 0              | any      | otherwise (even s_down/o_down: nobody to promote)| primary                         |
 *
 *    ¹ up in one Sentinel's view: flags without s_down/o_down/disconnected, role-reported slave, and
 *      linked to a primary since it started (`master-link-down-time` ≥ 0; a replica that restarted and
 *      never linked reports -1 s, Sentinel -1000 ms). A replica that restarted too (the `all` fault)
 *      holds only its own AOF, which can be behind this member: handing it the primary role lost 24
 *      WAIT-confirmed writes on real pods under CPU load (its restart came before this member's
 *      decision). Such replicas do not count, so after a full restart this member serves its data;
 *      and the hand-over's wait looks again at every step: once no counted replica is up and none is
 *      failing over, a member with data serves it (the Sentinels may have shown the dead replicas as
 *      linked when it began: a dead pod's connections are not reset).
 *    ² the member does not run while it decides, so every Sentinel sees it down after down-after
 *      and their own failover (one elected leader, sentinel.c) promotes a replica. Only when none
 *      has started down-after + handoverSlackSeconds after the script began (no quorum, an aborted
 *      failover) ask ONE Sentinel at a time for `SENTINEL FAILOVER` (the first that answers OK or
 *      INPROG; re-asked only after the retry interval). Sooner when the Sentinels' own failover is
 *      over without a switch: a Sentinel sees this member o_down and none is failing over, at two
 *      looks a second apart (a Sentinel that reaches o_down starts its failover in the same tick;
 *      after `-failover-abort-no-good-slave` or `-failover-abort-not-elected` none starts another
 *      for 2 × failover-timeout, sentinel.c sentinelStartFailoverIfNeeded: measured, the outage
 *      lasted until this script's grace ran out, restart + down-after + 5 s). Forcing at once was measured to race the
 *      Sentinels' own failover: a second replica promoted, two role:master for ~0.2 s. Wait until
 *      the Sentinels name another member, start as its replica; past the wait, fail with a clear
 *      message (the pod restarts and decides again).
 *    ³ role-reported master, or master-link-status ok to a master that is not this member (it is
 *      not running while this runs, so such a link goes elsewhere).
 *    ⁴ every column reads only Sentinels not in TILT (`INFO sentinel`: `sentinel_tilt:1`), and only
 *      those are asked for `SENTINEL FAILOVER`. A Sentinel whose timer ran ≥ 2 s late changes no
 *      flag for 30 s while still answering, so replicas that died meanwhile stay up and linked in its
 *      view; on real pods two such Sentinels made this script hand over to dead replicas, ask for a
 *      failover, and the one Sentinel not in TILT promoted a never-linked, restarted replica: 13
 *      WAIT-confirmed writes lost. While every Sentinel that answers is in TILT, ask again (bounded
 *      by the wait).
 *    Why a restarted primary with live replicas never serves, however fast it came back: a
 *    Sentinel reconnects to a dropped instance at most once per second (sentinel.c,
 *    sentinelReconnectInstance) and counts it down from its last OK ping (last_avail_time, up to
 *    1 s before the kill), so a restart inside down-after can still be marked s_down, and the
 *    failover then demotes a primary that took writes meanwhile: measured, 144–367 acknowledged
 *    writes lost and two members answering role:master for ~10 s. Handing over costs a failover
 *    (seconds of write stop) and loses at most what the replicas had not yet received at the
 *    kill; an empty data dir (lost volume) must never serve over replicas that hold the data.
 * 4. Before writing `replicaof <host> <port>`, probe the address (`PING`, with the cli timeout). While the
 *    probe's connect hangs (exit 124), the name still resolves to an address no pod holds: after a
 *    restart the DNS record keeps the old pod IP for its TTL (5 s, CoreDNS's default on EKS and
 *    kube:local), a SYN to it is dropped, and a replica whose first connect goes there hangs until
 *    `repl-timeout` (60 s; measured on real pods: a full restart's writes back at +63.7 s instead of
 *    +13 s). So wait, up to addressWaitSeconds, and start once the address answers or refuses (a
 *    refusal is retried by Valkey every second). A lower repl-timeout would also bound a large RDB's
 *    transfer and load, so it is not the fix.
 * 5. No reachable Sentinel knows a primary: only ordinal 0 with an empty data dir (the very
 *    first start; or a new stack's data restore.sh placed, marked `restore-pending`, which this
 *    decision removes) becomes primary, after a short grace for the Sentinels to come up, and only
 *    if no Sentinel answered with an error (a NOAUTH Sentinel may know a primary). Everyone
 *    else (ordinal > 0, or ordinal 0 holding data, which may be a primary demoted while the
 *    Sentinels were away) waits and fails after the bounded wait.
 */
import { RESTORE_PENDING_MARKER } from "./restore-script.js";
import { localHost } from "./sh-cli.js";

/**
 * The replica-priority a replica gets once its first sync since its start is done: Valkey's
 * default, which the stack does not change. Until then it runs with 0 (never promoted).
 */
export const RELEASED_REPLICA_PRIORITY = 100;

/** The Sentinel master name the stack uses unless told otherwise. */
export const DEFAULT_MASTER_NAME = "valkey-primary";

export interface ReplicationStartOptions {
  masterName?: string;
  /** The Sentinels the member asks (`host:port` each); at least one. */
  sentinels?: readonly string[];
  /** This member's port. @default 6379 */
  port?: number;
  /** The data directory checked for an existing dataset. */
  dataDir: string;
  /** The include file the decision is written to. */
  includeFile: string;
  /** Seconds to wait for a Sentinel answer / a failover away from an empty primary. @default 120 */
  waitSeconds?: number;
  /** Seconds ordinal 0 waits for a Sentinel before taking the first-start primary role. @default 15 */
  firstStartGraceSeconds?: number;
  /** Seconds reachable Sentinels may disagree before the most frequent answer is taken. @default 10 */
  agreementSeconds?: number;
  /** Seconds between two SENTINEL FAILOVER requests for an empty primary. @default 60 */
  failoverRetrySeconds?: number;
  /**
   * Seconds past down-after a named primary waits for the Sentinels' own failover before asking SENTINEL FAILOVER.
   * @default 5
   */
  handoverSlackSeconds?: number;
  /** Seconds the cli may take per Sentinel (connect + reply), and per probe of the primary's address. @default 3 */
  cliTimeoutSeconds?: number;
  /**
   * Seconds a replica waits, at most, while its primary's address drops connections (a probe's connect
   * hangs: the name still resolves to a restarted pod's old address) before writing `replicaof` anyway.
   * @default 20
   */
  addressWaitSeconds?: number;
  /**
   * `restore.from` is set: ordinal 0 may also become the first primary on data restore.sh placed
   * (`restore-pending`), and the decision removes the marker. @default false
   */
  restore?: boolean;
  /**
   * The address this member's own server answers on from where start.sh runs (the priority
   * release asks it INFO replication / CONFIG SET). @default DEFAULT_LOCAL_HOST (sh-cli.ts)
   */
  localHost?: string;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`replication start: ${name} must be a whole number ≥ 1 (got ${value})`);
  return value;
}

/** The start decision's values in start.sh (pod/scripts/replication-start.sh), or none of it. */
export type ReplicationStartValues = Record<
  | "repl_include"
  | "master_name"
  | "sentinels"
  | "self_port"
  | "wait_s"
  | "grace_s"
  | "agree_s"
  | "retry_s"
  | "handover_slack_s"
  | "sentinel_cli_timeout"
  | "addr_wait_s"
  | "restore"
  | "restore_marker"
  | "self_local_host"
  | "released_priority",
  string | number
>;

/** A start script without the Sentinel decision: every value of it empty (`repl_include` empty skips it). */
export const NO_REPLICATION_START: ReplicationStartValues = {
  repl_include: "",
  master_name: "",
  sentinels: "",
  self_port: "",
  wait_s: "",
  grace_s: "",
  agree_s: "",
  retry_s: "",
  handover_slack_s: "",
  sentinel_cli_timeout: "",
  addr_wait_s: "",
  restore: "",
  restore_marker: "",
  self_local_host: "",
  released_priority: "",
};

/**
 * The decision's values for start.sh, checked: the script (pod/scripts/replication-start.sh) uses
 * start.sh's `fail`, `nl`, `password_file` and `data_dir`.
 */
export function replicationStartValues(o: ReplicationStartOptions): ReplicationStartValues {
  const masterName = o.masterName ?? DEFAULT_MASTER_NAME;
  if (!/^[A-Za-z0-9._-]+$/.test(masterName))
    throw new Error(`replication start: masterName '${masterName}' must match [A-Za-z0-9._-]+`);
  const sentinels = o.sentinels ?? [];
  if (sentinels.length === 0) throw new Error("replication start: sentinels is empty (the Sentinels' host:port list)");
  for (const s of sentinels) {
    if (!/^[^\s,:']+:\d+$/.test(s)) throw new Error(`replication start: sentinel '${s}' is not host:port`);
  }
  if (o.includeFile === "") throw new Error("replication start: includeFile is empty");
  return {
    repl_include: o.includeFile,
    master_name: masterName,
    sentinels: sentinels.join(" "),
    self_port: positiveInt("port", o.port ?? 6379),
    wait_s: positiveInt("waitSeconds", o.waitSeconds ?? 120),
    grace_s: positiveInt("firstStartGraceSeconds", o.firstStartGraceSeconds ?? 15),
    agree_s: positiveInt("agreementSeconds", o.agreementSeconds ?? 10),
    retry_s: positiveInt("failoverRetrySeconds", o.failoverRetrySeconds ?? 60),
    handover_slack_s: positiveInt("handoverSlackSeconds", o.handoverSlackSeconds ?? 5),
    sentinel_cli_timeout: positiveInt("cliTimeoutSeconds", o.cliTimeoutSeconds ?? 3),
    addr_wait_s: positiveInt("addressWaitSeconds", o.addressWaitSeconds ?? 20),
    restore: o.restore === true ? "yes" : "no",
    restore_marker: RESTORE_PENDING_MARKER,
    self_local_host: localHost(o.localHost),
    released_priority: RELEASED_REPLICA_PRIORITY,
  };
}
