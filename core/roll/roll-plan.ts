/**
 * The order a rolling restart (an image upgrade, a restart-only config change) takes, decided one
 * step at a time from the verifier's LIVE report, never from ordinals or from a plan made before
 * the roll: roles move during a roll (a failover, the AZ failback loop), so the next step is
 * always computed from what the members say now (valkey-operator learned the same: issues #123,
 * #251 read the role from live INFO; #198 restarts by role, not by ordinal). Pure.
 *
 * The order, per shard (replication mode: one shard), shard by shard:
 * 1. Sentinels, one at a time (replication mode): each back and agreeing on the primary with a
 *    quorum (SENTINEL CKQUORUM, the verifier's Sentinel checks) before the next, so a failover
 *    can always be authorised.
 * 2. The shard's replicas, one at a time, each back, linked and caught up (the verifier's
 *    REPLICA_LINK_DOWN / REPLICA_LAG) before the next: the shard never has fewer than M − 1
 *    replicas and never a stale one promoted.
 * 3. The primary, last:
 *    - cluster mode: `CLUSTER FAILOVER` (not FORCE: the primary pauses its clients until the
 *      chosen replica has its whole offset, cluster_legacy.c manual failover) to a replica that
 *      was already restarted and is synced, in the zone with the fewest primaries; the old
 *      primary is then a replica and is restarted as in 2.
 *    - replication mode: its restart runs the pod's preStop (pod/replication-prestop-script.ts:
 *      pause writes, replicas catch up, SENTINEL FAILOVER, follow the new primary), so the
 *      restart itself is the switchover.
 * A member is restarted only while the verifier passes (mid-roll, a zone with a primary majority
 * is tolerated: a failover moves a primary to its replica's zone until the next shard's moves it
 * on, or the AZ failback loop moves it back; the roll's end requires the full check).
 */
import type { FailureCode, ShardReport, TopologyReport } from "../verify/verify-types.js";

export type RollStep =
  /** Restart a Sentinel (replication mode). */
  | { kind: "sentinel"; address: string }
  /** Restart a replica (cluster mode: also a former primary after its failover). */
  | { kind: "replica"; address: string; shard: number }
  /** Cluster mode: CLUSTER FAILOVER on `to`, a restarted and synced replica of `from`. */
  | { kind: "failover"; from: string; to: string; shard: number }
  /**
   * Restart the primary: replication mode, its preStop switches over first; a cluster shard without replicas, its slots
   * are down meanwhile.
   */
  | { kind: "primary"; address: string; shard: number };

/** Failures tolerated between steps (never at the end): see the header. */
export const TOLERATED_MID_ROLL: readonly FailureCode[] = ["AZ_PRIMARY_MAJORITY"];

/** Whether the roll may take its next step on this report: the verifier passes, save the tolerated failures. */
export function gateOpen(report: TopologyReport): boolean {
  return report.failures.every((f) => TOLERATED_MID_ROLL.includes(f.code));
}

/** "restart replica 127.0.0.21:6379 (shard 0)" for logs and the drill's step table. */
export function describeStep(s: RollStep): string {
  switch (s.kind) {
    case "sentinel":
      return `restart Sentinel ${s.address}`;
    case "replica":
      return `restart replica ${s.address} (shard ${s.shard})`;
    case "failover":
      return `CLUSTER FAILOVER shard ${s.shard}: ${s.from} → ${s.to}`;
    case "primary":
      return `restart primary ${s.address} (shard ${s.shard}; its preStop hands over to a replica when it has one)`;
  }
}

/**
 * The synced replica of `shard` that takes over: already restarted, link up, the least-served zone first, then the
 * least lag.
 */
function failoverTarget(
  shard: ShardReport,
  rolled: ReadonlySet<string>,
  primariesPerZone: Record<string, number>,
): string | undefined {
  const candidates = shard.replicas.filter((r) => rolled.has(r.address) && r.linkUp);
  const load = (zone: string | undefined): number =>
    zone === undefined ? Number.MAX_SAFE_INTEGER : (primariesPerZone[zone] ?? 0);
  candidates.sort(
    (a, b) =>
      load(a.zone) - load(b.zone) ||
      (a.lagBytes ?? Infinity) - (b.lagBytes ?? Infinity) ||
      a.address.localeCompare(b.address),
  );
  return candidates[0]?.address;
}

/**
 * The next step on this live report, given the members (and Sentinels) already restarted;
 * undefined when everything is rolled. Throws when the report leaves no safe step (a cluster
 * shard whose replicas are all restarted but none is linked: waiting is the caller's job, so
 * this only happens when the gate was not checked first).
 */
export function nextRollStep(report: TopologyReport, rolled: ReadonlySet<string>): RollStep | undefined {
  for (const s of report.sentinels ?? []) if (!rolled.has(s.address)) return { kind: "sentinel", address: s.address };
  // By first slot: a shard keeps its slots (and so its number) across the failovers of the roll.
  const firstSlot = (s: ShardReport): number => Number.parseInt(s.primary.slotRanges[0] ?? "", 10) || 0;
  const shards = [...report.shards].sort(
    (a, b) => firstSlot(a) - firstSlot(b) || a.primary.address.localeCompare(b.primary.address),
  );
  for (const [i, shard] of shards.entries()) {
    const replica = shard.replicas.find((r) => !rolled.has(r.address));
    if (replica !== undefined) return { kind: "replica", address: replica.address, shard: i };
    if (rolled.has(shard.primary.address)) continue;
    // Replication mode, or a cluster shard without replicas (nothing to fail over to: its slots are down while it
    // restarts).
    if (report.mode === "replication" || shard.replicas.length === 0)
      return { kind: "primary", address: shard.primary.address, shard: i };
    const to = failoverTarget(shard, rolled, report.primariesPerZone);
    if (to === undefined)
      throw new Error(
        `shard ${i} (primary ${shard.primary.address}): no restarted replica with its link up to fail over to (replicas: ${shard.replicas.length})`,
      );
    return { kind: "failover", from: shard.primary.address, to, shard: i };
  }
  return undefined;
}
