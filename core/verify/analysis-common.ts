/** Pieces shared by the cluster and replication analyses: failure lists, zones, shape checks. */
import type { FailureCode, ShardReport, TopologyReport, VerifyExpectations, VerifyFailure } from "./verify-types.js";

/** What one node answered (or why it did not); `address` is the announced `host:port`. */
export interface NodeCapture {
  address: string;
  /** Set when the node could not be reached or a command failed. */
  error?: string;
  /** CLUSTER INFO text (cluster mode). */
  clusterInfo?: string;
  /** INFO replication text. */
  replicationInfo?: string;
  /** DBSIZE (primaries, when counting keys). */
  dbsize?: number;
}

/** Context the pure analyses need besides the captured replies. */
export interface AnalysisContext {
  /** `host:port` -> zone; undefined when no zone source was given (zone checks skipped). */
  zones: Map<string, string> | undefined;
  expect?: VerifyExpectations;
}

export class FailureList {
  readonly items: VerifyFailure[] = [];
  add(code: FailureCode, message: string, node?: string): void {
    this.items.push(node === undefined ? { code, message } : { code, message, node });
  }
}

/** "a, b, c and 4 more" */
export function listSome(items: readonly string[], max = 5): string {
  if (items.length <= max) return items.join(", ");
  return `${items.slice(0, max).join(", ")} and ${items.length - max} more`;
}

/**
 * One field of an INFO / CLUSTER INFO reply, found without parsing the whole reply (the
 * analysis reads a handful of fields from thousands of replies).
 */
export function infoValue(text: string | undefined, key: string): string | undefined {
  if (text === undefined) return undefined;
  const needle = `${key}:`;
  const line = text.startsWith(needle) ? 0 : text.indexOf(`\n${needle}`) + 1;
  if (line === 0 && !text.startsWith(needle)) return undefined;
  const at = line + needle.length;
  const end = text.indexOf("\n", at);
  return text.slice(at, end < 0 ? text.length : end).trim();
}

export function infoNumber(text: string | undefined, key: string): number | undefined {
  const v = infoValue(text, key);
  const n = v === undefined || v === "" ? NaN : Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** A replication offset from INFO replication: the replica's own processed offset, or a primary's. */
export function replicationOffset(text: string | undefined): number | undefined {
  return infoNumber(text, "slave_repl_offset") ?? infoNumber(text, "master_repl_offset");
}

/** Zone checks common to both modes: ZONE_UNKNOWN per node, NO_CROSS_AZ_REPLICA per shard. */
export function checkZones(
  shards: readonly ShardReport[],
  zones: Map<string, string> | undefined,
  healthy: (replicaAddress: string) => boolean,
  failures: FailureList,
  notes: string[],
  /** Whether a primary with no working replica at all fails NO_CROSS_AZ_REPLICA. */
  failWithoutWorkingReplica: boolean,
): void {
  if (zones === undefined) {
    notes.push(
      "no zone source given: zone checks skipped (ZONE_UNKNOWN, NO_CROSS_AZ_REPLICA and, in cluster mode, AZ_PRIMARY_MAJORITY)",
    );
    return;
  }
  for (const s of shards) {
    for (const n of [s.primary, ...s.replicas]) {
      if (n.zone === undefined) failures.add("ZONE_UNKNOWN", `${n.address} is not in the zone map`, n.address);
    }
    const primaryZone = s.primary.zone;
    const working = s.replicas.filter((r) => healthy(r.address));
    if (primaryZone === undefined || working.some((r) => r.zone === undefined)) continue; // ZONE_UNKNOWN says why
    if (working.some((r) => r.crossAz) || (working.length === 0 && !failWithoutWorkingReplica)) continue;
    const detail =
      working.length === 0
        ? "it has no working replica in any other zone"
        : `its replicas (${listSome(working.map((r) => r.address))}) are all in ${primaryZone}`;
    failures.add("NO_CROSS_AZ_REPLICA", `primary ${s.primary.address} in ${primaryZone}: ${detail}`, s.primary.address);
  }
}

export function countPrimariesPerZone(shards: readonly ShardReport[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of shards) if (s.primary.zone !== undefined) out[s.primary.zone] = (out[s.primary.zone] ?? 0) + 1;
  return out;
}

export function finishReport(
  base: Omit<TopologyReport, "ok" | "failures" | "notes" | "primariesPerZone" | "zoneCheck">,
  failures: FailureList,
  notes: string[],
  zones: Map<string, string> | undefined,
): TopologyReport {
  const { mode, ...rest } = base;
  return {
    ok: failures.items.length === 0,
    mode,
    failures: failures.items,
    ...rest,
    primariesPerZone: countPrimariesPerZone(base.shards),
    zoneCheck: zones === undefined ? "skipped" : "checked",
    notes,
  };
}
