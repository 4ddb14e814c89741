/**
 * Hash-slot arithmetic for cluster mode: the 16384 slots split over P primaries in
 * contiguous ranges whose sizes differ by at most one, larger ranges last
 * (3 primaries: 0-5460, 5461-10921, 10922-16383, i.e. 5461/5461/5462).
 */
import { CLUSTER_SLOT_COUNT } from "../../vocabulary/cluster-slots.js";

export { CLUSTER_SLOT_COUNT };

/** An inclusive slot range `start..end`. */
export interface SlotRange {
  readonly start: number;
  readonly end: number;
}

/** Splits `total` slots over `parts` primaries; throws a RangeError naming the bad count. */
export function splitSlots(parts: number, total: number = CLUSTER_SLOT_COUNT): SlotRange[] {
  if (!Number.isInteger(parts) || parts < 1) {
    throw new RangeError(`cannot split slots over ${parts} primaries: need a whole number ≥ 1`);
  }
  if (!Number.isInteger(total) || total < 1)
    throw new RangeError(`slot total must be a whole number ≥ 1 (got ${total})`);
  if (parts > total) {
    throw new RangeError(`cannot split ${total} slots over ${parts} primaries: every primary needs at least one slot`);
  }
  const base = Math.floor(total / parts);
  const larger = total % parts;
  const out: SlotRange[] = [];
  let start = 0;
  for (let i = 0; i < parts; i++) {
    const size = base + (i >= parts - larger ? 1 : 0);
    out.push({ start, end: start + size - 1 });
    start += size;
  }
  return out;
}

export function slotCount(r: SlotRange): number {
  return r.end - r.start + 1;
}

/** `start-end`, the form CLUSTER NODES and reports use. */
export function formatSlotRange(r: SlotRange): string {
  return `${r.start}-${r.end}`;
}

/** Sorts and merges overlapping or adjacent ranges. */
export function mergeSlotRanges(ranges: readonly SlotRange[]): SlotRange[] {
  const sorted = [...ranges].sort((a, b) => a.start - b.start || a.end - b.end);
  const out: SlotRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && r.start <= last.end + 1) {
      out[out.length - 1] = { start: last.start, end: Math.max(last.end, r.end) };
    } else out.push({ start: r.start, end: r.end });
  }
  return out;
}

/** The parts of `wanted` not covered by `held`, in order. */
export function missingSlotRanges(wanted: SlotRange, held: readonly SlotRange[]): SlotRange[] {
  const out: SlotRange[] = [];
  let next = wanted.start;
  for (const h of mergeSlotRanges(held)) {
    if (h.end < next || h.start > wanted.end) continue;
    if (h.start > next) out.push({ start: next, end: h.start - 1 });
    next = Math.max(next, h.end + 1);
    if (next > wanted.end) break;
  }
  if (next <= wanted.end) out.push({ start: next, end: wanted.end });
  return out;
}

/** True when every range in `ranges` lies inside `outer`. */
export function withinSlotRange(outer: SlotRange, ranges: readonly SlotRange[]): boolean {
  return ranges.every((r) => r.start >= outer.start && r.end <= outer.end);
}

/** True when `ranges`, merged, are exactly `range`. */
export function coversExactly(range: SlotRange, ranges: readonly SlotRange[]): boolean {
  const merged = mergeSlotRanges(ranges);
  return merged.length === 1 && merged[0]?.start === range.start && merged[0]?.end === range.end;
}
