/**
 * Which slots move where when the set of primaries changes, as a pure function shared by the
 * scale-up and the scale-in: every holder ends with its target slot count (the `splitSlots`
 * share of its shard position, 0 for a primary that goes away); holders above their target
 * give their highest slots first, holders below it take them in holder order.
 */
import type { SlotRange } from "../topology/slots.js";

export interface SlotMove {
  slot: number;
  /** Member ids. */
  from: string;
  to: string;
}

export interface SlotHolder {
  id: string;
  slots: readonly number[];
  /** Slot count this holder ends with. */
  target: number;
}

/** The moves that bring every holder to its target; throws when the targets do not add up to the slots held. */
export function rebalanceSlots(holders: readonly SlotHolder[]): SlotMove[] {
  const held = holders.reduce((n, h) => n + h.slots.length, 0);
  const wanted = holders.reduce((n, h) => n + h.target, 0);
  if (held !== wanted) throw new RangeError(`slot targets add up to ${wanted} but the holders own ${held} slots`);
  const pools = holders.map((h) => ({
    id: h.id,
    give: [...h.slots].sort((a, b) => b - a).slice(0, Math.max(0, h.slots.length - h.target)),
  }));
  const moves: SlotMove[] = [];
  for (const h of holders) {
    let need = h.target - h.slots.length;
    for (const pool of pools) {
      while (need > 0 && pool.give.length > 0) {
        moves.push({ slot: pool.give.shift() as number, from: pool.id, to: h.id });
        need--;
      }
    }
  }
  return moves;
}

/** The moves grouped by donor and recipient, each group's slots as sorted contiguous ranges. */
export function groupMoves(moves: readonly SlotMove[]): { from: string; to: string; ranges: SlotRange[] }[] {
  const groups = new Map<string, { from: string; to: string; slots: number[] }>();
  for (const m of moves) {
    const k = `${m.from}\u0000${m.to}`;
    const g = groups.get(k) ?? { from: m.from, to: m.to, slots: [] };
    g.slots.push(m.slot);
    groups.set(k, g);
  }
  return [...groups.values()].map((g) => ({ from: g.from, to: g.to, ranges: toRanges(g.slots) }));
}

/** Sorted contiguous ranges of a set of slots. */
export function toRanges(slots: readonly number[]): SlotRange[] {
  const out: { start: number; end: number }[] = [];
  for (const s of [...new Set(slots)].sort((a, b) => a - b)) {
    const last = out[out.length - 1];
    if (last !== undefined && s === last.end + 1) last.end = s;
    else out.push({ start: s, end: s });
  }
  return out;
}
