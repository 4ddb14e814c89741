/**
 * Cluster mode's outage per shard: each shard's no-WAIT writer (writers.ts) keys land in that
 * shard only, so the longest gap between its acknowledgements is how long that shard's slots
 * took no writes. A stream spread over every shard hides it (the other shards keep
 * acknowledging); that aggregate gap stays as a secondary figure. Pure.
 */
import { CLUSTER_SLOT_COUNT } from "../topology/slots.js";
import { labelSlots, parseStreamName } from "./writers.js";

/** What a shard's row needs of a stream's figures (ledger.ts StreamFigures). */
export interface ShardStream {
  stream: string;
  writes: number;
  ackedWrites: number;
  writeOutageMs: number;
  outageFromMs: number;
  outageToMs: number;
  /** The outage ran to the load's end (ledger.ts StreamFigures.outageOpen). */
  outageOpen: boolean;
}

/**
 * A shard counts as stopped when its writes stopped at least this long (shards the fault did not touch showed gaps of
 * 1.2-1.4 s on the loaded 2-core machine: ioredis and CPU, not the topology).
 */
export const STOPPED_MS = 2000;

export interface ShardOutage {
  /** The shard's slot ranges when the load started (writers.ts shardLabel). */
  shard: string;
  slots: number;
  /** slots / 16384. */
  share: number;
  /** Longest gap between the shard's no-WAIT acknowledgements (ms), and where it lies (ms from the fault). */
  outageMs: number;
  outageFromMs: number;
  outageToMs: number;
  /** That outage was still running when the load stopped: outageMs is a lower bound. */
  outageOpen: boolean;
  /** The shard's no-WAIT writes that were not acknowledged (failed or unexpected). */
  failedWrites: number;
  /** The fault hit one of the shard's members. */
  affected: boolean;
}

/** The keyspace that stopped taking writes: the shards whose outage reached STOPPED_MS. */
export interface KeyspaceStop {
  slots: number;
  share: number;
  /** The longest outage among them (0 when none stopped). */
  forMs: number;
}

/** One row per shard (in slot order) from the no-WAIT streams' figures; [] when no stream names a shard. */
export function shardOutages(streams: readonly ShardStream[], affected: readonly string[]): ShardOutage[] {
  const byShard = new Map<string, ShardStream[]>();
  for (const s of streams) {
    const id = parseStreamName(s.stream);
    if (id.shard === undefined || id.writer !== "no-wait") continue;
    byShard.set(id.shard, [...(byShard.get(id.shard) ?? []), s]);
  }
  return [...byShard.entries()]
    .map(([shard, ss]) => {
      const worst = ss.reduce((a, b) => (b.writeOutageMs > a.writeOutageMs ? b : a));
      const slots = labelSlots(shard);
      return {
        shard,
        slots,
        share: slots / CLUSTER_SLOT_COUNT,
        outageMs: Math.round(worst.writeOutageMs),
        outageFromMs: Math.round(worst.outageFromMs),
        outageToMs: Math.round(worst.outageToMs),
        outageOpen: worst.outageOpen,
        failedWrites: ss.reduce((n, s) => n + s.writes - s.ackedWrites, 0),
        affected: affected.includes(shard),
      };
    })
    .sort((a, b) => Number(a.shard.split(/[-,]/)[0]) - Number(b.shard.split(/[-,]/)[0]));
}

export function keyspaceStopped(shards: readonly ShardOutage[]): KeyspaceStop {
  const stopped = shards.filter((s) => s.outageMs >= STOPPED_MS);
  const slots = stopped.reduce((n, s) => n + s.slots, 0);
  return { slots, share: slots / CLUSTER_SLOT_COUNT, forMs: stopped.reduce((m, s) => Math.max(m, s.outageMs), 0) };
}

/**
 * The headline outage of a cluster drill: the affected shards' longest (every shard's when none is marked affected).
 */
export function shardHeadlineOutage(shards: readonly ShardOutage[]): { ms: number; open: boolean } {
  const hit = shards.some((s) => s.affected) ? shards.filter((s) => s.affected) : shards;
  const ms = hit.reduce((m, s) => Math.max(m, s.outageMs), 0);
  return { ms, open: hit.some((s) => s.outageMs === ms && s.outageOpen) };
}

/** `0-5460: 3.1 s` per shard, the affected ones marked `*`: the drill table's per-shard cell. */
export function formatShardOutages(shards: readonly ShardOutage[]): string {
  return shards
    .map((s) => `${s.affected ? "*" : ""}${s.shard}: ${s.outageOpen ? "≥ " : ""}${(s.outageMs / 1000).toFixed(1)} s`)
    .join("; ");
}

/** `33% for 3.1 s` (or `none`): the share of the keyspace that stopped and for how long. */
export function formatKeyspaceStop(k: KeyspaceStop | null): string {
  if (k === null) return "—";
  return k.slots === 0 ? "none" : `${Math.round(k.share * 100)}% for ${(k.forMs / 1000).toFixed(1)} s`;
}
