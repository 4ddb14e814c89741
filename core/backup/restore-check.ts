/**
 * The restore's checks, as pure functions (restore.sh makes the same ones in the pod, with the
 * values it fetched; these give the program, the tests and the verifier one definition):
 *
 * - checkRestoreShape: the snapshot's shards and slot ranges against the new topology's plan.
 *   A difference refuses the restore, naming each shard's snapshot ranges and planned ranges.
 * - checkShardObject: the fetched object against its manifest entry (missing; checksum; size).
 * - checkRestoredKeyCounts: after the restore, each shard's manifest counts against DBSIZE on the
 *   primary now serving its slots (the RestoreCheck step, components/steps/restore-check/).
 */
import type { BackupManifest, ShardEntry } from "../../pod/backup-manifest.js";
import { formatSlotRange, mergeSlotRanges, splitSlots, type SlotRange } from "../topology/slots.js";

export class RestoreRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RestoreRefused";
  }
}

export function parseSlotRange(text: string): SlotRange {
  const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(text);
  if (m === null) throw new RestoreRefused(`not a slot range: ${JSON.stringify(text)}`);
  const start = Number(m[1]);
  const end = m[2] === undefined ? start : Number(m[2]);
  if (end < start || end > 16383) throw new RestoreRefused(`not a slot range: ${JSON.stringify(text)}`);
  return { start, end };
}

/** Ranges, merged, as `a-b` strings (so "0-10,11-20" and "0-20" compare equal). */
export function normalizeRanges(ranges: readonly string[]): string[] {
  return mergeSlotRanges(ranges.map(parseSlotRange)).map(formatSlotRange);
}

/** The ranges a new cluster of `primaries` shards plans, per shard (az-aware-planner's split). */
export function plannedRanges(primaries: number): string[][] {
  return splitSlots(primaries).map((r) => [formatSlotRange(r)]);
}

/**
 * Refuses (throws RestoreRefused) when the manifest's mode, shard count or any shard's slot ranges
 * differ from the plan's. `planned`: per shard, its ranges (cluster), or [[]] for replication.
 */
export function checkRestoreShape(
  m: BackupManifest,
  mode: "cluster" | "replication",
  planned: readonly (readonly string[])[],
): void {
  if (m.mode !== mode)
    throw new RestoreRefused(`backup ${m.id} is of a ${m.mode} topology; the new stack is in ${mode} mode`);
  if (m.shards.length !== planned.length) {
    throw new RestoreRefused(
      `backup ${m.id} has ${m.shards.length} shard(s), the new ${mode} topology plans ${planned.length}: restore into the snapshot's shape (${m.shards.length} primaries)`,
    );
  }
  const diffs = m.shards
    .map((s, i) => {
      const have = normalizeRanges(s.slots).join(",");
      const want = normalizeRanges(planned[i] ?? []).join(",");
      return have === want ? undefined : `shard ${i}: snapshot ${have || "(none)"}, planned ${want || "(none)"}`;
    })
    .filter((d): d is string => d !== undefined);
  if (diffs.length > 0)
    throw new RestoreRefused(`backup ${m.id}'s slot ranges differ from the new cluster's plan: ${diffs.join("; ")}`);
}

/** What was fetched for one shard: undefined when the object is missing. */
export interface FetchedObject {
  bytes: number;
  sha256: string;
}

/** Refuses a missing object, a size or a checksum that differs from the manifest entry's. */
export function checkShardObject(entry: ShardEntry, fetched: FetchedObject | undefined, where: string): void {
  if (fetched === undefined)
    throw new RestoreRefused(`shard ${entry.shard}: ${where}/${entry.object} is missing: the backup is incomplete`);
  if (fetched.sha256 !== entry.sha256) {
    throw new RestoreRefused(
      `shard ${entry.shard}: checksum mismatch: ${where}/${entry.object} has sha256 ${fetched.sha256}, the manifest says ${entry.sha256} (corrupted or replaced)`,
    );
  }
  if (fetched.bytes !== entry.bytes) {
    throw new RestoreRefused(
      `shard ${entry.shard}: ${where}/${entry.object} is ${fetched.bytes} bytes, the manifest says ${entry.bytes}`,
    );
  }
}

/**
 * One restored shard as the stack checked it: the manifest's counts and DBSIZE on the primary now serving its slots.
 */
export interface RestoredShard {
  shard: number;
  /** Its slot ranges, the snapshot's and now its primary's; empty in replication mode. */
  slots: string[];
  /** Keys in the snapshot (the manifest's `keys`, valkey-check-rdb's count). */
  manifestKeys: number;
  /** Of them, keys with a TTL (the manifest's `expires`): they may have expired since the snapshot. */
  expires: number;
  /** DBSIZE on the primary. */
  keys: number;
  /** The primary: its pod name, else its address. */
  primary: string;
}

/** A primary as the verifier saw it. */
export interface ServingPrimary {
  /** Its pod name, else its address. */
  name: string;
  slotRanges: readonly string[];
  /** DBSIZE; undefined when not counted or not reachable. */
  keys: number | undefined;
}

export interface KeyCountCheck {
  /** Each shard matched to a primary with a key count, in shard order. */
  shards: RestoredShard[];
  /** One line per fault, naming the shard, the manifest's count, DBSIZE and the primary; empty = the restore holds. */
  problems: string[];
}

const rangesText = (ranges: readonly string[]): string => normalizeRanges(ranges).join(",");

/** Why `keys` (DBSIZE) does not fit the shard's manifest counts, or undefined: keys - expires ≤ DBSIZE ≤ keys. */
function countProblem(e: ShardEntry, where: string, keys: number | undefined, primary: string): string | undefined {
  if (keys === undefined)
    return `${where}: DBSIZE on its primary ${primary} is unknown (not reachable?); the manifest counts ${e.keys} keys`;
  const least = e.keys - e.expires;
  const ttl =
    e.expires > 0
      ? ` (${e.expires} with a TTL, which may have expired since the snapshot: ${least} to ${e.keys} accepted)`
      : "";
  if (keys > e.keys)
    return `${where}: DBSIZE ${keys} on its primary ${primary}, the manifest ${e.keys} keys${ttl}: ${keys - e.keys} more than the snapshot held (written since the restore?)`;
  if (keys < least)
    return `${where}: DBSIZE ${keys} on its primary ${primary}, the manifest ${e.keys} keys${ttl}: ${least - keys} missing`;
  return undefined;
}

/**
 * After a restore: each manifest shard (`entries`, any order) against the primary now serving it:
 * in cluster mode the one whose slot ranges are the shard's (a failover since the restore may have
 * moved it), in replication mode the one primary. A shard holds when keys - expires ≤ DBSIZE ≤ keys.
 */
export function checkRestoredKeyCounts(
  mode: "cluster" | "replication",
  entries: readonly ShardEntry[],
  primaries: readonly ServingPrimary[],
): KeyCountCheck {
  const sorted = [...entries].sort((a, b) => a.shard - b.shard);
  const problems: string[] = [];
  const shards: RestoredShard[] = [];
  const have = new Set(sorted.map((e) => e.shard));
  for (let i = 0; i < Math.max(0, ...have); i++)
    if (!have.has(i)) problems.push(`shard ${i}: no member reported restoring it`);
  const matched = new Set<ServingPrimary>();
  if (mode === "replication" && primaries.length !== 1) {
    problems.push(
      `replication mode: the verifier found ${primaries.length} primaries (${primaries.map((p) => p.name).join(", ") || "none"}), not one`,
    );
  }
  for (const e of sorted) {
    const slots = rangesText(e.slots);
    const where = mode === "cluster" ? `shard ${e.shard} (slots ${slots})` : `shard ${e.shard}`;
    const p =
      mode === "cluster"
        ? primaries.find((x) => rangesText(x.slotRanges) === slots)
        : primaries.length === 1
          ? primaries[0]
          : undefined;
    if (p === undefined) {
      if (mode === "cluster") {
        const serving = primaries.map((x) => `${x.name} ${rangesText(x.slotRanges) || "(none)"}`).join("; ");
        problems.push(`${where}: no primary serves exactly these slots (primaries: ${serving || "none"})`);
      }
      continue;
    }
    matched.add(p);
    const problem = countProblem(e, where, p.keys, p.name);
    if (problem !== undefined) problems.push(problem);
    if (p.keys !== undefined)
      shards.push({
        shard: e.shard,
        slots: normalizeRanges(e.slots),
        manifestKeys: e.keys,
        expires: e.expires,
        keys: p.keys,
        primary: p.name,
      });
  }
  if (mode === "cluster") {
    for (const p of primaries) {
      if (!matched.has(p) && p.slotRanges.length > 0)
        problems.push(`primary ${p.name} serves slots ${rangesText(p.slotRanges)}, which no restored shard held`);
    }
  }
  return { shards, problems };
}
