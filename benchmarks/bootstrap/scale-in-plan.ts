/**
 * The pure half of a cluster scale-in (cluster-scale-in.ts runs it): which primaries stay, where
 * the slots of the others go, who replicates whom afterwards, and whether the data fits. Every
 * function takes the LIVE roles (roles move with failovers; the pods that go are chosen by
 * ordinal, their roles are not).
 */
import { slotCount, splitSlots } from "../topology/slots.js";

export interface SlotMove {
  slot: number;
  /** Member ids. */
  from: string;
  to: string;
}

export interface PrimaryState {
  id: string;
  zone: string;
  slots: readonly number[];
}

/**
 * The `keep` primaries that stay, from those on kept nodes: one per zone in turn (zones ordered by
 * their largest primary), each zone's largest first, so the survivors spread over the zones and
 * move the fewest slots. Throws naming the shortfall when fewer than `keep` are given.
 */
export function chooseKeptPrimaries(candidates: readonly PrimaryState[], keep: number): string[] {
  if (candidates.length < keep)
    throw new Error(`scale-in needs ${keep} primaries on the nodes that stay, found ${candidates.length} (${candidates.map((c) => c.id).join(", ")})`);
  const byZone = new Map<string, PrimaryState[]>();
  for (const c of [...candidates].sort((a, b) => b.slots.length - a.slots.length || a.id.localeCompare(b.id))) {
    byZone.set(c.zone, [...(byZone.get(c.zone) ?? []), c]);
  }
  const out: string[] = [];
  while (out.length < keep) for (const list of byZone.values()) if (out.length < keep && list.length > 0) out.push((list.shift() as PrimaryState).id);
  return out;
}

/**
 * Slot moves that leave every slot on `targets`, each ending with its splitSlots(targets) share
 * (in the order given): primaries not among the targets give all their slots, targets above
 * their share give their highest surplus.
 */
export function planSlotDrain(owned: readonly { id: string; slots: readonly number[] }[], targets: readonly string[]): SlotMove[] {
  const share = new Map(splitSlots(targets.length).map((r, i) => [targets[i] as string, slotCount(r)]));
  const give: { id: string; slots: number[] }[] = owned.map((o) => {
    const sorted = [...o.slots].sort((a, b) => b - a);
    return { id: o.id, slots: share.has(o.id) ? sorted.slice(0, Math.max(0, sorted.length - (share.get(o.id) ?? 0))) : sorted };
  });
  const have = new Map(targets.map((t) => [t, owned.find((o) => o.id === t)?.slots.length ?? 0]));
  const moves: SlotMove[] = [];
  for (const to of targets) {
    let need = (share.get(to) ?? 0) - (have.get(to) ?? 0);
    for (const donor of give) {
      while (need > 0 && donor.slots.length > 0) {
        moves.push({ slot: donor.slots.shift() as number, from: donor.id, to });
        need--;
      }
    }
  }
  return moves;
}

/**
 * Who each staying non-primary replicates: existing links to a kept primary stay (up to `perPrimary`),
 * the rest go to the primaries still short of replicas, a zone other than the primary's first.
 */
export function pairSpares(
  primaries: readonly { id: string; zone: string }[],
  spares: readonly { id: string; zone: string; replicaOf?: string }[],
  perPrimary: number,
): Record<string, string> {
  const count = new Map(primaries.map((p) => [p.id, 0]));
  const out: Record<string, string> = {};
  const free = [];
  for (const s of spares) {
    const n = s.replicaOf === undefined ? undefined : count.get(s.replicaOf);
    if (s.replicaOf !== undefined && n !== undefined && n < perPrimary) {
      out[s.id] = s.replicaOf;
      count.set(s.replicaOf, n + 1);
    } else free.push(s);
  }
  for (const s of free) {
    const open = primaries.filter((p) => (count.get(p.id) ?? 0) < perPrimary);
    const p = open.find((x) => x.zone !== s.zone) ?? open[0];
    if (p === undefined) continue;
    out[s.id] = p.id;
    count.set(p.id, (count.get(p.id) ?? 0) + 1);
  }
  return out;
}

/** Headroom kept free on the remaining primaries: the data may fill this share of their maxmemory. */
export const SCALE_IN_FILL = 0.8;

/**
 * undefined when the data of every primary fits on the kept ones (each at most SCALE_IN_FILL of
 * its maxmemory, the data spread by slot share); else the refusal, with the figures. A kept
 * primary without maxmemory (0: unbounded) is not a limit.
 */
export function memoryRefusal(
  dataBytes: readonly { id: string; bytes: number }[],
  keptMaxmemory: readonly { id: string; bytes: number }[],
): string | undefined {
  if (keptMaxmemory.some((k) => k.bytes === 0)) return undefined;
  const total = dataBytes.reduce((n, d) => n + d.bytes, 0);
  const room = Math.min(...keptMaxmemory.map((k) => k.bytes)) * keptMaxmemory.length * SCALE_IN_FILL;
  if (total <= room) return undefined;
  const mib = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MiB`;
  return (
    `scale-in refused: the data (${mib(total)} on ${dataBytes.length} primaries) does not fit ${keptMaxmemory.length} primaries ` +
    `at ${SCALE_IN_FILL * 100}% of their maxmemory (${mib(room)}); raise valkey.maxmemory / resources or keep more primaries`
  );
}
