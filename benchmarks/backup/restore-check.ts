/**
 * The restore's checks, as pure functions (restore.sh makes the same ones in the pod, with the
 * values it fetched; these give the program, the tests and the verifier one definition):
 *
 * - checkRestoreShape: the snapshot's shards and slot ranges against the new topology's plan.
 *   A difference refuses the restore, naming each shard's snapshot ranges and planned ranges.
 * - checkShardObject: the fetched object against its manifest entry (missing; checksum; size).
 * - compareKeyCounts: after the restore, keys per shard (DBSIZE on each primary, in slot order)
 *   against the manifest's counts.
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
export function checkRestoreShape(m: BackupManifest, mode: "cluster" | "replication", planned: readonly (readonly string[])[]): void {
  if (m.mode !== mode) throw new RestoreRefused(`backup ${m.id} is of a ${m.mode} topology; the new stack is in ${mode} mode`);
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
  if (diffs.length > 0) throw new RestoreRefused(`backup ${m.id}'s slot ranges differ from the new cluster's plan: ${diffs.join("; ")}`);
}

/** What was fetched for one shard: undefined when the object is missing. */
export interface FetchedObject {
  bytes: number;
  sha256: string;
}

/** Refuses a missing object, a size or a checksum that differs from the manifest entry's. */
export function checkShardObject(entry: ShardEntry, fetched: FetchedObject | undefined, where: string): void {
  if (fetched === undefined) throw new RestoreRefused(`shard ${entry.shard}: ${where}/${entry.object} is missing: the backup is incomplete`);
  if (fetched.sha256 !== entry.sha256) {
    throw new RestoreRefused(
      `shard ${entry.shard}: checksum mismatch: ${where}/${entry.object} has sha256 ${fetched.sha256}, the manifest says ${entry.sha256} (corrupted or replaced)`,
    );
  }
  if (fetched.bytes !== entry.bytes) {
    throw new RestoreRefused(`shard ${entry.shard}: ${where}/${entry.object} is ${fetched.bytes} bytes, the manifest says ${entry.bytes}`);
  }
}

export interface KeyCountDiff {
  shard: number;
  expected: number;
  actual: number | undefined;
}

/** Per shard, the manifest's key count against DBSIZE on the restored primary (slot order); empty = all equal. */
export function compareKeyCounts(m: BackupManifest, actual: readonly (number | undefined)[]): KeyCountDiff[] {
  const out: KeyCountDiff[] = [];
  m.shards.forEach((s, i) => {
    if (actual[i] !== s.keys) out.push({ shard: i, expected: s.keys, actual: actual[i] });
  });
  for (let i = m.shards.length; i < actual.length; i++) out.push({ shard: i, expected: 0, actual: actual[i] });
  return out;
}
