/**
 * The acknowledged-write loss each drill fault is allowed: the bound the docs promise (README,
 * "What a failover costs"), in one table. Pure. A bound is a window of acknowledgement times
 * around the fault: a lost acknowledged write is within the bound when the load saw its
 * acknowledgement inside [fault + fromMs, fault + toMs]; the bound in writes is the number of
 * acknowledged writes in that window (the most the fault may cost at the drill's load).
 *
 * The windows come from the servers' own settings (read from the primary before the fault):
 * - async replication window R: with `min-replicas-to-write` ≥ 1 a primary takes a write only
 *   while a replica acknowledged within `min-replicas-max-lag` s (whole seconds, the good-replica
 *   count refreshed at 1 Hz: see partitionWindow), so at most (max-lag + 2) s of writes can be
 *   unreplicated when the primary dies.
 *   Unfenced (`min-replicas-to-write 0`) nothing enforces a bound: 1 s (the acknowledgement period,
 *   the lag a healthy replica reports) is used and the reason says it is not enforced.
 * - AOF write window F: `appendfsync everysec` 2 s, `always` 0, `no` (or AOF off): unbounded. With
 *   everysec a crash loses what the server has not yet written: normally nothing (the buffer is
 *   written before the replies go out, and a SIGKILL keeps the page cache), but while a background
 *   fsync is still running the server holds the buffer and keeps replying, for up to 2 s
 *   (valkey-io/valkey src/aof.c flushAppendOnlyFile: "we can try to delay the write for a couple
 *   of seconds", then `aof_delayed_fsync`++). Measured on a throttled disk (blkio 1 MB/s, 20 IOPS;
 *   tests/harness/aof-held-buffer.test.ts): killed 1.5 s into a hold, 68,485–105,398 acknowledged
 *   writes lost (4 runs), the oldest acknowledged 1.52–1.55 s before the kill; INFO's held buffer
 *   at the last poll came to about the same count. 1 s, the figure usually quoted, is the fsync
 *   period only.
 * - fencing window after the fault: a frozen primary refuses writes (NOREPLICAS) once its
 *   replicas' last acknowledgement is older than max-lag, so writes acknowledged up to
 *   (max-lag + 2) s after the fault started may be lost. Unfenced, nothing acknowledged after the
 *   fault may be lost for the drill to pass (no bound is promised, so any such loss is shown).
 * - partition (partitionWindow): the same fencing, stated from the server's code; in cluster mode, where the conf sets
 *   no min-replicas lines,
 *   Valkey's own minority rule: a primary that cannot reach a majority of primaries answers
 *   CLUSTERDOWN within 1.5 × cluster-node-timeout + 200 ms of the cut.
 */
import type { Fault } from "../../vocabulary/faults.js";

/** What the bound depends on, as the primary runs it (CONFIG GET before the fault). */
export interface DurabilityConfig {
  minReplicasToWrite: number;
  /** Seconds. */
  minReplicasMaxLag: number;
  appendonly: boolean;
  appendfsync: "always" | "everysec" | "no";
  /** `cluster-node-timeout` (ms) when `cluster-enabled yes`; absent in replication mode. */
  clusterNodeTimeoutMs?: number;
}

export interface LossWindow {
  /** ms relative to the fault (negative: before it). `null`: unbounded on that side. */
  fromMs: number | null;
  toMs: number;
  reason: string;
}

/** A window and what it allows in this drill's writes. */
export interface AckedLossBound extends LossWindow {
  /** Acknowledged writes (all streams) in the window: the most the bound allows this drill to lose. */
  writes: number;
}

const REPLICA_ACK_PERIOD_MS = 1000;
/**
 * What a fenced primary adds to min-replicas-max-lag: the seconds resolution of its replica-lag
 * clock plus the 1 Hz refresh of its good-replica count (see partitionWindow). The same slack holds
 * before a fault (how long unreplicated writes can pile up once a replica stops acknowledging) and
 * after it (how long a cut-off or thawed primary keeps acknowledging).
 */
const FENCE_SLACK_MS = 2000;

/** Seconds, one decimal, for reasons. */
const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

export function replicationWindow(c: DurabilityConfig): { ms: number; why: string } {
  if (c.minReplicasToWrite >= 1) {
    const ms = c.minReplicasMaxLag * 1000 + FENCE_SLACK_MS;
    return {
      ms,
      why: `async replication window ${s(ms)} (min-replicas-to-write ${c.minReplicasToWrite}, min-replicas-max-lag ${c.minReplicasMaxLag} s + 2 s: whole-second lag clock, 1 Hz refresh)`,
    };
  }
  return {
    ms: REPLICA_ACK_PERIOD_MS,
    why: `async replication window ${s(REPLICA_ACK_PERIOD_MS)} (a healthy replica's ack period; NOT enforced: min-replicas-to-write 0)`,
  };
}

/** How long Valkey holds its AOF buffer while a background fsync runs (appendfsync everysec). */
export const AOF_HELD_BUFFER_MS = 2000;

export function aofWindow(c: DurabilityConfig): { ms: number | null; why: string } {
  if (!c.appendonly) return { ms: null, why: "appendonly no: everything since the last RDB save (unbounded)" };
  if (c.appendfsync === "always") return { ms: 0, why: "AOF write window 0 (appendfsync always)" };
  if (c.appendfsync === "everysec")
    return {
      ms: AOF_HELD_BUFFER_MS,
      why: "AOF write window 2.0 s (appendfsync everysec: while a background fsync is slow the server holds its AOF buffer up to 2 s and keeps acknowledging)",
    };
  return { ms: null, why: "appendfsync no: the OS decides when to flush (unbounded)" };
}

/** Two clusterCron periods (100 ms each, hz 10): one to send the ping, one to flag the peer PFAIL. */
const CLUSTER_CRON_SLACK_MS = 200;

/**
 * How long after the cut a partitioned primary may still acknowledge writes, from the servers'
 * code (valkey-io/valkey src/replication.c, src/cluster_legacy.c); null when nothing stops it.
 * - min-replicas fencing, L = min-replicas-max-lag: a replica counts as good while
 *   `server.unixtime - repl_ack_time <= L` (refreshGoodReplicasCount), both in WHOLE seconds, and
 *   that count is refreshed only by the 1 Hz replicationCron while no ack arrives. The last ack
 *   came at or before the cut, so the lag check holds until < cut + L + 1 s and the count can be
 *   stale up to 1 s longer: writes may be acknowledged until cut + L + 2 s (measured: refused
 *   3.1–4.7 s after the cut with L = 3, so L + 1 s would not hold).
 * - cluster minority rule, T = cluster-node-timeout: the isolated primary pings each peer at the
 *   latest T/2 after its last pong (clusterCron), flags it PFAIL once that ping and all data are
 *   older than T, and then, with fewer than a majority of slot-serving primaries reachable,
 *   turns cluster_state to fail (clusterUpdateState): every write gets CLUSTERDOWN. So writes
 *   stop by cut + 1.5 T + 200 ms, fencing or not. It holds for a partition only: a frozen
 *   primary runs no cron and answers its queued writes first when thawed.
 */
export function partitionWindow(c: DurabilityConfig): { ms: number | null; why: string } {
  const fence = c.minReplicasToWrite >= 1 ? c.minReplicasMaxLag * 1000 + FENCE_SLACK_MS : null;
  const minority =
    c.clusterNodeTimeoutMs === undefined ? null : Math.round(1.5 * c.clusterNodeTimeoutMs) + CLUSTER_CRON_SLACK_MS;
  const fenceWhy = `fenced: NOREPLICAS within min-replicas-max-lag ${c.minReplicasMaxLag} s + 2 s (whole-second lag clock, 1 Hz refresh)`;
  const minorityWhy = `cluster minority: CLUSTERDOWN within 1.5 × cluster-node-timeout ${c.clusterNodeTimeoutMs} ms + 200 ms`;
  if (fence !== null && (minority === null || fence <= minority)) return { ms: fence, why: fenceWhy };
  if (minority !== null)
    return {
      ms: minority,
      why: `${minorityWhy}${fence === null ? " (no min-replicas fencing: min-replicas-to-write 0)" : ""}`,
    };
  return { ms: null, why: "unfenced (min-replicas-to-write 0)" };
}

/**
 * The promised window for `fault`. `injectMs`: fault start → the fault in place (the kill sent);
 * writes the primary acknowledged meanwhile were acknowledged before it died. Window ends are
 * rounded up to the whole ms, so the ack an end was measured from is inside it.
 */
export function ackedLossBound(fault: Fault, injectMs: number, c: DurabilityConfig): LossWindow {
  const end = Math.max(0, Math.ceil(injectMs));
  const r = replicationWindow(c);
  switch (fault) {
    case "replica":
      return { fromMs: 0, toMs: 0, reason: "0: a replica's loss leaves the primary and its data untouched" };
    case "upgrade":
      return {
        fromMs: 0,
        toMs: 0,
        reason:
          "0: a planned roll; replicas restart one at a time while the primary keeps serving, and a primary hands over only once a replica has its whole offset (cluster: CLUSTER FAILOVER without FORCE; replication: the preStop pauses writes until the replicas caught up)",
      };
    case "primary":
    case "zone":
    case "all":
    case "switchover":
    case "lost-volume":
      return { fromMs: -r.ms, toMs: end, reason: `writes acknowledged in the ${r.why} before the fault` };
    case "crash-restart": {
      const f = aofWindow(c);
      return {
        fromMs: f.ms === null ? null : -f.ms,
        toMs: end,
        reason: `writes acknowledged in the ${f.why} before the crash; nothing after it`,
      };
    }
    case "partition": {
      const p = partitionWindow(c);
      if (p.ms === null)
        return {
          fromMs: -r.ms,
          toMs: end,
          reason: `${p.why}: no bound after the cut is promised, so any loss of a write acknowledged after it fails the drill; before it: the ${r.why}`,
        };
      return { fromMs: -r.ms, toMs: end + p.ms, reason: `${p.why} after the cut, and in the ${r.why} before it` };
    }
    case "freeze": {
      if (c.minReplicasToWrite < 1)
        return {
          fromMs: -r.ms,
          toMs: end,
          reason: `unfenced (min-replicas-to-write 0): no bound after the fault is promised, so any loss of a write acknowledged after it fails the drill; before it: the ${r.why}`,
        };
      const fence = c.minReplicasMaxLag * 1000 + FENCE_SLACK_MS;
      return {
        fromMs: -r.ms,
        toMs: end + fence,
        reason: `fenced: writes acknowledged up to min-replicas-max-lag ${c.minReplicasMaxLag} s + 2 s after the fault, and in the ${r.why} before it`,
      };
    }
  }
}

/**
 * When a deleted pod really stopped serving, as the load saw it: ms from the fault to the first
 * write that failed after it (null: none failed). A pod deleted through the API dies when its
 * kubelet kills the container, after the API call has returned (on kube:local up to a few hundred
 * ms later, with grace 0): a write acknowledged in between was acknowledged by a live primary
 * whose replica (or, with every member deleted, whose AOF fsync) may not have it yet, so the
 * deployed drills end the loss window there (and not at the API call) for faults that delete pods.
 */
export function firstFailureAfterMs(
  records: readonly { doneAt: number; ok: boolean }[],
  faultAt: number,
): number | null {
  let first: number | null = null;
  for (const r of records) if (!r.ok && r.doneAt >= faultAt && (first === null || r.doneAt < first)) first = r.doneAt;
  return first === null ? null : Math.ceil(first - faultAt);
}

export function inWindow(w: LossWindow, ackAt: number, faultAt: number): boolean {
  const t = ackAt - faultAt;
  return (w.fromMs === null || t >= w.fromMs) && t <= w.toMs;
}

/** "≤412 (−5.0…+0.0 s)" for tables. */
export function formatBound(b: AckedLossBound): string {
  const from = b.fromMs === null ? "−∞" : `${b.fromMs < 0 ? "−" : "+"}${s(Math.abs(b.fromMs)).replace(" s", "")}`;
  return `≤${b.writes} (${from}…+${s(b.toMs).replace(" s", "")} s)`;
}

/** Parses CONFIG GET answers (name, value, name, value …) into the settings the bounds use. */
export function durabilityFromConfig(pairs: readonly string[]): DurabilityConfig {
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < pairs.length; i += 2) m.set(String(pairs[i]).toLowerCase(), String(pairs[i + 1]));
  const num = (k: string): number => {
    const v = Number(m.get(k));
    if (!Number.isFinite(v)) throw new Error(`CONFIG GET ${k}: no numeric value (got ${JSON.stringify(m.get(k))})`);
    return v;
  };
  const fsync = m.get("appendfsync");
  if (fsync !== "always" && fsync !== "everysec" && fsync !== "no")
    throw new Error(`CONFIG GET appendfsync: unexpected ${JSON.stringify(fsync)}`);
  return {
    minReplicasToWrite: num("min-replicas-to-write"),
    minReplicasMaxLag: num("min-replicas-max-lag"),
    appendonly: m.get("appendonly") === "yes",
    appendfsync: fsync,
    ...(m.get("cluster-enabled") === "yes" ? { clusterNodeTimeoutMs: num("cluster-node-timeout") } : {}),
  };
}

export const DURABILITY_KEYS = [
  "min-replicas-to-write",
  "min-replicas-max-lag",
  "appendonly",
  "appendfsync",
  "cluster-enabled",
  "cluster-node-timeout",
] as const;
