/**
 * Which member each shard's snapshot comes from, decided from the verifier's live report
 * (core/verify/verify-types.ts): a replica whose link is up, the one with the least lag
 * (an unknown lag counts after every known one; ties keep the report's order), so the primary
 * does not pay the snapshot's fork. A shard with no linked replica is refused unless
 * `allowPrimary`, which snapshots its primary instead and says so.
 */
import type { ShardReport, TopologyReport } from "../verify/verify-types.js";

export interface BackupTarget {
  /** 0-based, in slot order (replication mode: 0). */
  shard: number;
  host: string;
  port: number;
  /** The shard's slot ranges as the report gave them; empty in replication mode. */
  slots: string[];
  source: "replica" | "primary";
  lagBytes?: number;
}

export interface BackupPlan {
  mode: "cluster" | "replication";
  targets: BackupTarget[];
  /** Why a shard was snapshotted from its primary. */
  notes: string[];
}

export class BackupPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BackupPlanError";
  }
}

/** `host:port` -> parts; IPv6 hosts keep their colons (the port is after the last one). */
export function splitAddress(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(":");
  const port = Number(address.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new BackupPlanError(`not a host:port address: ${JSON.stringify(address)}`);
  return { host: address.slice(0, i), port };
}

function firstSlot(s: ShardReport): number {
  const first = s.primary.slotRanges[0];
  return first === undefined ? Number.MAX_SAFE_INTEGER : Number(first.split("-")[0]);
}

/** The backup script's target argument: `<shard>/<host>/<port>/<ranges, comma-separated>`. */
export function targetArg(t: BackupTarget): string {
  return `${t.shard}/${t.host}/${t.port}/${t.slots.join(",")}`;
}

export function planBackup(report: TopologyReport, o: { allowPrimary?: boolean } = {}): BackupPlan {
  if (report.shards.length === 0) throw new BackupPlanError("the topology report lists no shards: nothing to back up");
  if (report.mode === "replication" && report.shards.length !== 1) {
    throw new BackupPlanError(`replication mode has one shard; the report lists ${report.shards.length}`);
  }
  const shards = [...report.shards].sort((a, b) => firstSlot(a) - firstSlot(b));
  if (report.mode === "cluster") {
    const empty = shards.filter((s) => s.primary.slotRanges.length === 0).map((s) => s.primary.address);
    if (empty.length > 0)
      throw new BackupPlanError(`cluster primaries without slots cannot be placed in the backup: ${empty.join(", ")}`);
  }
  const notes: string[] = [];
  const refused: string[] = [];
  const targets = shards.map((s, shard): BackupTarget => {
    const linked = s.replicas
      .map((r, i) => ({ r, i }))
      .filter(({ r }) => r.linkUp)
      .sort((a, b) => (a.r.lagBytes ?? Infinity) - (b.r.lagBytes ?? Infinity) || a.i - b.i);
    const best = linked[0]?.r;
    const slots = report.mode === "cluster" ? [...s.primary.slotRanges] : [];
    if (best !== undefined)
      return { shard, ...splitAddress(best.address), slots, source: "replica", lagBytes: best.lagBytes };
    const why =
      s.replicas.length === 0 ? "it has no replica" : `none of its ${s.replicas.length} replica(s) has its link up`;
    if (!o.allowPrimary) {
      refused.push(`shard ${shard} (primary ${s.primary.address}): ${why}`);
      return { shard, ...splitAddress(s.primary.address), slots, source: "primary" };
    }
    notes.push(`shard ${shard}: ${why}; snapshotting its primary ${s.primary.address} (it forks once)`);
    return { shard, ...splitAddress(s.primary.address), slots, source: "primary" };
  });
  if (refused.length > 0) {
    throw new BackupPlanError(
      `no replica to snapshot for ${refused.join("; ")} (allow the primary to snapshot it instead, or fix the replica)`,
    );
  }
  return { mode: report.mode, targets, notes };
}
