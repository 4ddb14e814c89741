import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PlanError, planCluster, type PlannerNode } from "../../core/bootstrap/az-aware-planner.js";
import { CLUSTER_SLOT_COUNT, slotCount } from "../../core/topology/slots.js";

function nodesFor(perZone: readonly number[]): PlannerNode[] {
  const out: PlannerNode[] = [];
  const zones = perZone.map((_, i) => `zone-${String.fromCharCode(97 + i)}`);
  // Interleave like pods spread over zones: a1 b1 c1 a2 b2 ...
  const max = Math.max(0, ...perZone);
  for (let k = 0; k < max; k++) {
    perZone.forEach((count, z) => {
      if (k < count) out.push({ id: `${zones[z]}-${k}`, zone: zones[z] as string });
    });
  }
  return out;
}

/** All ways to put p primaries in zones with the given capacities. */
function distributions(caps: readonly number[], p: number): number[][] {
  if (caps.length === 0) return p === 0 ? [[]] : [];
  const [first, ...rest] = caps as [number, ...number[]];
  const out: number[][] = [];
  for (let c = 0; c <= Math.min(first, p); c++) {
    for (const tail of distributions(rest, p - c)) out.push([c, ...tail]);
  }
  return out;
}

/**
 * Independent of the planner's Hall-condition caps: for given primaries per zone, tries to
 * match every (primary, replica slot) to a distinct non-primary node in another zone with a
 * plain augmenting-path bipartite matching.
 */
function replicasFit(perZone: readonly number[], primariesPerZone: readonly number[], m: number): boolean {
  const left: number[] = []; // zone of each replica slot
  primariesPerZone.forEach((c, z) => {
    for (let i = 0; i < c * m; i++) left.push(z);
  });
  const right: number[] = []; // zone of each non-primary node
  perZone.forEach((n, z) => {
    for (let i = 0; i < n - (primariesPerZone[z] ?? 0); i++) right.push(z);
  });
  const matchOfRight = new Array<number>(right.length).fill(-1);
  const tryAssign = (l: number, seen: boolean[]): boolean => {
    for (let r = 0; r < right.length; r++) {
      if (seen[r] || right[r] === left[l]) continue;
      seen[r] = true;
      if (matchOfRight[r] === -1 || tryAssign(matchOfRight[r] as number, seen)) {
        matchOfRight[r] = l;
        return true;
      }
    }
    return false;
  };
  return left.every((_, l) => tryAssign(l, new Array<boolean>(right.length).fill(false)));
}

/** The best achievable max-primaries-per-zone, or undefined when no layout is feasible. */
function bestMaxPerZone(perZone: readonly number[], p: number, m: number): number | undefined {
  let best: number | undefined;
  for (const d of distributions(perZone, p)) {
    if (!replicasFit(perZone, d, m)) continue;
    const max = Math.max(...d);
    if (best === undefined || max < best) best = max;
  }
  return best;
}

describe("AZ-aware planner", () => {
  it("plans the seed's 3 x 1 cluster over three zones with cross-zone pairs and 5461/5461/5462 slots", () => {
    const plan = planCluster({ nodes: nodesFor([2, 2, 2]), primaries: 3, replicasPerPrimary: 1 });
    expect(plan.shards.map((s) => s.primary.zone)).toEqual(["zone-a", "zone-b", "zone-c"]);
    expect(plan.shards.map((s) => slotCount(s.slots))).toEqual([5461, 5461, 5462]);
    expect(plan.shards.map((s) => [s.slots.start, s.slots.end])).toEqual([
      [0, 5460],
      [5461, 10921],
      [10922, 16383],
    ]);
    for (const s of plan.shards) {
      expect(s.replicas).toHaveLength(1);
      expect(s.replicas[0]?.zone).not.toBe(s.primary.zone);
    }
    expect(plan.primariesPerZone).toEqual({ "zone-a": 1, "zone-b": 1, "zone-c": 1 });
    expect(plan.spares).toEqual([]);
    expect(plan.warnings).toEqual([]);
  });

  it("spreads one primary's replicas over distinct zones when it has several", () => {
    const plan = planCluster({ nodes: nodesFor([3, 3, 3]), primaries: 3, replicasPerPrimary: 2 });
    for (const s of plan.shards) {
      const zones = s.replicas.map((r) => r.zone);
      expect(new Set(zones).size).toBe(2);
      expect(zones).not.toContain(s.primary.zone);
    }
  });

  it("fails clearly when every node is in one zone", () => {
    expect(() => planCluster({ nodes: nodesFor([6]), primaries: 3, replicasPerPrimary: 1 })).toThrow(
      /different zone from its primary, but all 6 nodes are in zone zone-a/,
    );
  });

  it("fails clearly when one zone holds too many nodes to pair across zones", () => {
    expect(() => planCluster({ nodes: nodesFor([4, 1, 1]), primaries: 3, replicasPerPrimary: 1 })).toThrow(
      /zone zone-a holds 4 of 6 nodes/,
    );
  });

  it("fails clearly when there are too few nodes", () => {
    expect(() => planCluster({ nodes: nodesFor([2, 2, 1]), primaries: 3, replicasPerPrimary: 1 })).toThrow(
      "3 primaries x (1 + 1 replicas) need 6 nodes, but only 5 are available",
    );
  });

  it("warns, without failing, when two zones leave a primary majority in one zone", () => {
    const plan = planCluster({ nodes: nodesFor([3, 3]), primaries: 3, replicasPerPrimary: 1 });
    expect(plan.warnings).toEqual([
      "zone zone-a holds 2 of 3 primaries: losing that zone loses the primary majority (only 2 zones; use 3 or more)",
    ]);
  });

  it("rejects bad shapes and duplicate nodes by name", () => {
    expect(() => planCluster({ nodes: nodesFor([2, 2]), primaries: 0, replicasPerPrimary: 1 })).toThrow(
      "primaries must be a whole number ≥ 1 (got 0)",
    );
    expect(() => planCluster({ nodes: nodesFor([2, 2]), primaries: 1, replicasPerPrimary: -1 })).toThrow(
      "replicasPerPrimary must be a whole number ≥ 0 (got -1)",
    );
    const dup = [...nodesFor([1, 1]), { id: "zone-a-0", zone: "zone-b" }];
    expect(() => planCluster({ nodes: dup, primaries: 1, replicasPerPrimary: 1 })).toThrow(
      "node zone-a-0 is listed twice",
    );
  });

  it("keeps fixed primaries first and preferred replica links", () => {
    const nodes = nodesFor([2, 2, 2]);
    const plan = planCluster({
      nodes,
      primaries: 3,
      replicasPerPrimary: 1,
      fixedPrimaries: ["zone-c-1"],
      preferredReplicaOf: { "zone-a-1": "zone-c-1" },
    });
    expect(plan.shards[0]?.primary.id).toBe("zone-c-1");
    expect(plan.shards[0]?.replicas.map((r) => r.id)).toEqual(["zone-a-1"]);
  });

  it("fixed primaries: as many as asked for is fine, one more is refused by name", () => {
    const nodes = nodesFor([2, 2, 2]);
    const three = planCluster({
      nodes,
      primaries: 3,
      replicasPerPrimary: 1,
      fixedPrimaries: ["zone-a-0", "zone-b-0", "zone-c-0"],
    });
    expect(three.shards.map((x) => x.primary.id)).toEqual(["zone-a-0", "zone-b-0", "zone-c-0"]);
    expect(() =>
      planCluster({ nodes, primaries: 2, replicasPerPrimary: 1, fixedPrimaries: ["zone-a-0", "zone-b-0", "zone-c-0"] }),
    ).toThrow(
      "3 nodes already own slots but only 2 primaries were asked for (scaling primaries down is not supported)",
    );
  });

  it("says 'replica' for one and 'replicas' for more in its refusals", () => {
    expect(() => planCluster({ nodes: nodesFor([4, 1, 1]), primaries: 3, replicasPerPrimary: 1 })).toThrow(
      /with 3 primaries and 1 replica each,/,
    );
    expect(() => planCluster({ nodes: nodesFor([7, 1, 1]), primaries: 3, replicasPerPrimary: 2 })).toThrow(
      /with 3 primaries and 2 replicas each,/,
    );
  });

  it("matches an independent brute force over many shapes (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 3 }),
        (perZoneRaw, p, m) => {
          const perZone = perZoneRaw.filter((n) => n > 0);
          fc.pre(perZone.length > 0);
          const nodes = nodesFor(perZone);
          const zones = perZone.length;
          const best = nodes.length >= p * (1 + m) ? bestMaxPerZone(perZone, p, m) : undefined;
          const allowed = best !== undefined && !(zones >= 3 && best * 2 > p);
          let plan;
          try {
            plan = planCluster({ nodes, primaries: p, replicasPerPrimary: m });
          } catch (err) {
            expect(err).toBeInstanceOf(PlanError);
            expect(allowed, `planner refused a feasible shape: ${(err as Error).message}`).toBe(false);
            return;
          }
          expect(allowed, "planner returned a plan where none is allowed").toBe(true);
          // Shape: P shards of 1 + M distinct nodes.
          expect(plan.shards).toHaveLength(p);
          const used = plan.shards.flatMap((s) => [s.primary.id, ...s.replicas.map((r) => r.id)]);
          expect(new Set(used).size).toBe(p * (1 + m));
          expect(used.length + plan.spares.length).toBe(nodes.length);
          for (const s of plan.shards) {
            expect(s.replicas).toHaveLength(m);
            for (const r of s.replicas) expect(r.zone).not.toBe(s.primary.zone);
          }
          // Evenness: the max primaries in one zone is the best any layout can do.
          expect(Math.max(...Object.values(plan.primariesPerZone))).toBe(best);
          if (zones >= 3) expect(Math.max(...Object.values(plan.primariesPerZone)) * 2).toBeLessThanOrEqual(p);
          // Slots: contiguous, in shard order, covering all 16384.
          let next = 0;
          for (const s of plan.shards) {
            expect(s.slots.start).toBe(next);
            next = s.slots.end + 1;
          }
          expect(next).toBe(CLUSTER_SLOT_COUNT);
        },
      ),
      { numRuns: 400 },
    );
  });
});
