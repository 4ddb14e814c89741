/**
 * The scale-in plan (pure): roles decided from the live nodes, slot moves that leave every
 * kept primary its splitSlots share and nothing on a leaving node, replica re-pairing across
 * zones, the nodes to forget, and the memory refusal with its figures.
 */
import { describe, expect, it } from "vitest";
import { planScaleIn, ScaleInRefused, type LiveNode } from "../../core/bootstrap/cluster-scale-in-plan.js";
import { splitSlots, slotCount } from "../../core/topology/slots.js";
import { rebalanceSlots, groupMoves } from "../../core/bootstrap/slot-moves.js";

const MiB = 1048576;
/** The splitSlots(3) shares, sorted as Array#sort sorts numbers' strings (5461, 5461, 5462). */
const SHARES = splitSlots(3).map(slotCount).sort();
const range = (r: { start: number; end: number }): number[] =>
  Array.from({ length: slotCount(r) }, (_, i) => r.start + i);

function primary(id: string, zone: string, slots: number[], o: Partial<LiveNode> = {}): LiveNode {
  return {
    id,
    nodeId: id.padEnd(40, "0"),
    zone,
    role: "primary",
    slots,
    usedMemory: 2 * MiB,
    datasetBytes: MiB,
    maxmemory: 1024 * MiB,
    ...o,
  };
}
function replica(id: string, zone: string, of: string): LiveNode {
  return {
    id,
    nodeId: id.padEnd(40, "0"),
    zone,
    role: "replica",
    replicaOf: of,
    slots: [],
    usedMemory: 2 * MiB,
    datasetBytes: MiB,
    maxmemory: 1024 * MiB,
  };
}

/** Slot counts per node once the moves are applied; throws on a move from a node that does not own the slot. */
function apply(
  nodes: readonly LiveNode[],
  moves: readonly { slot: number; from: string; to: string }[],
  swaps: Record<string, string> = {},
): Map<string, number> {
  const owner = new Map<number, string>();
  for (const n of nodes) for (const s of n.slots) owner.set(s, swaps[n.id] ?? n.id);
  for (const m of moves) {
    if (owner.get(m.slot) !== m.from)
      throw new Error(`slot ${m.slot} moved from ${m.from} but owned by ${owner.get(m.slot)}`);
    owner.set(m.slot, m.to);
  }
  const counts = new Map<string, number>();
  for (const id of owner.values()) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

describe("planScaleIn", () => {
  const zones = ["a", "b", "c"];
  it("4x1 -> 3x1: the leaving shard's slots go to the three kept primaries, the leaving pair is forgotten", () => {
    const s4 = splitSlots(4);
    const nodes = [
      ...s4.map((r, i) => primary(`p${i}`, zones[i % 3] as string, range(r))),
      ...s4.map((_, i) => replica(`r${i}`, zones[(i + 1) % 3] as string, `p${i}`)),
    ];
    const plan = planScaleIn({
      nodes,
      kept: ["p0", "p1", "p2", "r0", "r1", "r2"],
      primaries: 3,
      replicasPerPrimary: 1,
    });
    expect(plan.cluster.shards.map((s) => s.primary.id)).toEqual(["p0", "p1", "p2"]);
    expect(plan.promote).toEqual([]);
    expect(new Set(plan.moves.map((m) => m.from))).toEqual(new Set(["p3"]));
    const counts = apply(nodes, plan.moves);
    expect(["p0", "p1", "p2"].map((id) => counts.get(id)).sort()).toEqual(SHARES);
    expect(counts.get("p3")).toBeUndefined();
    expect(plan.replicate).toEqual([]);
    expect(plan.forget.map((f) => f.id)).toEqual(["p3", "r3"]);
    expect(plan.memory.map((m) => m.afterBytes)).toEqual(
      plan.cluster.shards.map((s) => {
        const incoming = plan.moves.filter((m) => m.to === s.primary.id).length;
        return Math.round(2 * MiB + (incoming * MiB) / 4096);
      }),
    );
  });

  it("6x1 -> 3x1 with all six kept pods primaries: one primary per zone stays, three are drained into cross-zone replicas", () => {
    const s6 = splitSlots(6);
    const nodes = [
      ...s6.map((r, i) => primary(`p${i}`, zones[i % 3] as string, range(r))),
      ...s6.map((_, i) => replica(`r${i}`, zones[(i + 1) % 3] as string, `p${i}`)),
    ];
    const plan = planScaleIn({
      nodes,
      kept: ["p0", "p1", "p2", "p3", "p4", "p5"],
      primaries: 3,
      replicasPerPrimary: 1,
    });
    const primaries = plan.cluster.shards.map((s) => s.primary);
    expect(new Set(primaries.map((p) => p.zone))).toEqual(new Set(zones));
    expect(plan.drained).toHaveLength(3);
    expect(plan.promote).toEqual([]);
    const counts = apply(nodes, plan.moves);
    expect(primaries.map((p) => counts.get(p.id)).sort()).toEqual(SHARES);
    expect([...counts.keys()].sort()).toEqual(primaries.map((p) => p.id).sort());
    expect(plan.replicate.map((r) => r.replica).sort()).toEqual([...plan.drained].sort());
    for (const s of plan.cluster.shards) for (const r of s.replicas) expect(r.zone).not.toBe(s.primary.zone);
    expect(plan.forget.map((f) => f.id).sort()).toEqual(["r0", "r1", "r2", "r3", "r4", "r5"]);
  });

  it("promotes a kept replica of a leaving primary when the kept primaries are too few, planning moves as after the failover", () => {
    const s4 = splitSlots(4);
    // Failovers moved roles: p2 and p3 now replicate r2 / r3, which leave.
    const nodes = [
      primary("p0", "a", range(s4[0]!)),
      primary("p1", "b", range(s4[1]!)),
      replica("p2", "c", "r2"),
      primary("r2", "a", range(s4[2]!)),
      primary("r3", "b", range(s4[3]!)),
      replica("r0", "b", "p0"),
      replica("r1", "c", "p1"),
      replica("p3", "a", "r3"),
    ];
    const plan = planScaleIn({
      nodes,
      kept: ["p0", "p1", "p2", "p3", "r0", "r1"],
      primaries: 3,
      replicasPerPrimary: 1,
    });
    expect(plan.promote).toEqual(["p2"]);
    const counts = apply(nodes, plan.moves, { r2: "p2" });
    expect(plan.cluster.shards.map((s) => counts.get(s.primary.id)).sort()).toEqual(SHARES);
    expect(plan.moves.some((m) => m.from === "r2")).toBe(false);
    expect(plan.forget.map((f) => f.id).sort()).toEqual(["r2", "r3"]);
  });

  it("finishes an interrupted scale-in: a leaving primary with part of its slots left, kept primaries uneven", () => {
    const nodes = [
      primary("p0", "a", range({ start: 0, end: 6000 })),
      primary("p1", "b", range({ start: 6001, end: 10000 })),
      primary("p2", "c", range({ start: 10001, end: 15000 })),
      primary("p3", "a", range({ start: 15001, end: 16383 })),
      replica("r0", "b", "p0"),
      replica("r1", "c", "p1"),
      replica("r2", "a", "p2"),
      replica("r3", "b", "p3"),
    ];
    const plan = planScaleIn({
      nodes,
      kept: ["p0", "p1", "p2", "r0", "r1", "r2"],
      primaries: 3,
      replicasPerPrimary: 1,
    });
    const counts = apply(nodes, plan.moves);
    expect(["p0", "p1", "p2"].map((id) => counts.get(id)).sort()).toEqual(SHARES);
  });

  it("plans nothing for a balanced 3x1 cluster whose larger share sits on its first primary (a second run is a no-op)", () => {
    const nodes = [
      primary("p0", "a", range({ start: 0, end: 5461 })),
      primary("p1", "b", range({ start: 5462, end: 10922 })),
      primary("p2", "c", range({ start: 10923, end: 16383 })),
      replica("r0", "b", "p0"),
      replica("r1", "c", "p1"),
      replica("r2", "a", "p2"),
    ];
    const plan = planScaleIn({
      nodes,
      kept: ["p0", "p1", "p2", "r0", "r1", "r2"],
      primaries: 3,
      replicasPerPrimary: 1,
    });
    expect([plan.moves, plan.replicate, plan.forget, plan.promote, plan.drained]).toEqual([[], [], [], [], []]);
  });

  it("refuses, naming the node and the figures, when a kept primary cannot hold its share of the data", () => {
    const s4 = splitSlots(4);
    const nodes = [
      ...s4.map((r, i) =>
        primary(`p${i}`, zones[i % 3] as string, range(r), {
          usedMemory: 70 * MiB,
          datasetBytes: 68 * MiB,
          maxmemory: 100 * MiB,
        }),
      ),
      ...s4.map((_, i) => replica(`r${i}`, zones[(i + 1) % 3] as string, `p${i}`)),
    ];
    let err: unknown;
    try {
      planScaleIn({ nodes, kept: ["p0", "p1", "p2", "r0", "r1", "r2"], primaries: 3, replicasPerPrimary: 1 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ScaleInRefused);
    expect((err as Error).message).toMatch(/p0 would hold about 92\.\d MiB \(now 70\.0 MiB\) of maxmemory 100\.0 MiB/);
    expect((err as Error).message).toMatch(/80% of maxmemory; 68\.0 MiB of data on the primaries giving slots away/);
    // With room enough it passes.
    expect(() =>
      planScaleIn({
        nodes,
        kept: ["p0", "p1", "p2", "r0", "r1", "r2"],
        primaries: 3,
        replicasPerPrimary: 1,
        memoryHeadroom: 0.95,
      }),
    ).not.toThrow();
  });
});

describe("rebalanceSlots / groupMoves", () => {
  it("refuses targets that do not add up, and groups moves into contiguous ranges per donor and recipient", () => {
    expect(() => rebalanceSlots([{ id: "a", slots: [1, 2], target: 1 }])).toThrow(/add up to 1 but the holders own 2/);
    const moves = rebalanceSlots([
      { id: "a", slots: [], target: 3 },
      { id: "b", slots: [0, 1, 2, 7], target: 1 },
    ]);
    expect(groupMoves(moves)).toEqual([
      {
        from: "b",
        to: "a",
        ranges: [
          { start: 1, end: 2 },
          { start: 7, end: 7 },
        ],
      },
    ]);
  });
});
