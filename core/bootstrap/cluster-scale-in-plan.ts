/**
 * The scale-in plan: a pure function from the live cluster (every node's role, slots, zone
 * and memory, read from CLUSTER NODES and INFO, never inferred from pod ordinals) and the set
 * of members that stay, to what the executor (cluster-scale-in.ts) does before any member goes:
 * - which kept nodes are the P' primaries: kept nodes that are primaries now stay primaries
 *   (most slots first, at most an even share per zone), the AZ-aware planner adds the rest and
 *   pairs M replicas per primary from the kept nodes, cross-zone, keeping existing links;
 * - `promote`: planned primaries that are replicas now: the executor fails them over first (they
 *   take their leaving primary's shard), the moves and memory figures assume it did;
 * - the slot moves off every primary that goes away or is drained, and between kept primaries,
 *   so each planned primary ends with a `splitSlots(P')` share (the larger shares to those that
 *   hold the most slots already);
 * - the CLUSTER REPLICATE calls, and the nodes to forget (every node that is not kept).
 * It refuses, naming the figures, when a kept primary would hold more than `memoryHeadroom`
 * of its maxmemory after the moves (data estimated per slot from the donor's dataset).
 */
import { planCluster, PlanError, type ClusterPlan } from "./az-aware-planner.js";
import { rebalanceSlots, type SlotMove } from "./slot-moves.js";
import { slotCount, splitSlots } from "../topology/slots.js";

/** One node of the live cluster. */
export interface LiveNode {
  /** Member id (pod name, `host:port`). */
  readonly id: string;
  readonly nodeId: string;
  readonly zone: string;
  readonly role: "primary" | "replica";
  /** For replicas: the member id of their primary. */
  readonly replicaOf?: string;
  /** Slots the node owns (primaries). */
  readonly slots: readonly number[];
  /** INFO used_memory, bytes. */
  readonly usedMemory: number;
  /** INFO used_memory_dataset, bytes: the part that moves with the slots. */
  readonly datasetBytes: number;
  /** maxmemory, bytes; 0 means no limit (the check is then skipped for this node). */
  readonly maxmemory: number;
}

export interface ScaleInInput {
  /** Every member of the live cluster, the leaving ones included. */
  readonly nodes: readonly LiveNode[];
  /** Ids of the members that stay, in a stable order (pod ordinal order). */
  readonly kept: readonly string[];
  /** P': primaries wanted. */
  readonly primaries: number;
  readonly replicasPerPrimary: number;
  /** Share of maxmemory a kept primary may fill after the moves. @default 0.8 */
  readonly memoryHeadroom?: number;
}

export interface MemoryFigure {
  readonly id: string;
  readonly usedBytes: number;
  /** Estimated used_memory once the planned slots arrived. */
  readonly afterBytes: number;
  readonly maxmemory: number;
}

export interface ScaleInPlan {
  /** The kept nodes' roles: P' shards, M replicas each. */
  readonly cluster: ClusterPlan;
  /** Planned primaries that are replicas now: fail them over, then plan again. */
  readonly promote: readonly string[];
  readonly moves: readonly SlotMove[];
  /** Kept primaries that give all their slots away and become replicas. */
  readonly drained: readonly string[];
  readonly replicate: readonly { replica: string; primary: string }[];
  /** Nodes to reset and forget: every node that is not kept. */
  readonly forget: readonly { id: string; nodeId: string }[];
  readonly memory: readonly MemoryFigure[];
}

export class ScaleInRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScaleInRefused";
  }
}

const mib = (b: number): string => `${(b / 1048576).toFixed(1)} MiB`;

/** Kept current primaries worth keeping as primaries: most slots first, at most ceil(P'/zones) per zone. */
function preferredPrimaries(kept: readonly LiveNode[], p: number): LiveNode[] {
  const zones = new Set(kept.map((n) => n.zone)).size;
  const perZone = Math.ceil(p / Math.max(1, zones));
  const order = new Map(kept.map((n, i) => [n.id, i]));
  const candidates = kept
    .filter((n) => n.role === "primary")
    .sort((a, b) => b.slots.length - a.slots.length || (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  const taken = new Map<string, number>();
  const out: LiveNode[] = [];
  for (const n of candidates) {
    if (out.length === p || (taken.get(n.zone) ?? 0) >= perZone) continue;
    taken.set(n.zone, (taken.get(n.zone) ?? 0) + 1);
    out.push(n);
  }
  return out;
}

/** Plans the kept nodes' roles, keeping as many current primaries as the planner accepts. */
function planRoles(kept: readonly LiveNode[], input: ScaleInInput): ClusterPlan {
  const fixed = preferredPrimaries(kept, input.primaries);
  const keptIds = new Set(kept.map((n) => n.id));
  const preferredReplicaOf = Object.fromEntries(
    kept.filter((n) => n.replicaOf !== undefined && keptIds.has(n.replicaOf)).map((n) => [n.id, n.replicaOf as string]),
  );
  // Ties for new primaries go first to replicas of primaries that leave (a failover hands them their shard).
  const orphan = (n: LiveNode): boolean => n.role === "replica" && !keptIds.has(n.replicaOf ?? "");
  const nodes = [...kept.filter(orphan), ...kept.filter((n) => !orphan(n))].map((n) => ({ id: n.id, zone: n.zone }));
  for (let k = fixed.length; ; k--) {
    try {
      const fixedPrimaries = fixed
        .slice(0, k)
        .sort((a, b) => (a.slots[0] ?? 0) - (b.slots[0] ?? 0))
        .map((n) => n.id);
      return planCluster({
        nodes,
        primaries: input.primaries,
        replicasPerPrimary: input.replicasPerPrimary,
        fixedPrimaries,
        preferredReplicaOf,
      });
    } catch (err) {
      if (!(err instanceof PlanError) || k === 0) throw err;
    }
  }
}

/** Estimated used_memory of every planned primary after the moves; refuses when one overflows. */
function checkMemory(
  moves: readonly SlotMove[],
  byId: Map<string, LiveNode>,
  primaries: readonly string[],
  headroom: number,
): MemoryFigure[] {
  const perSlot = (n: LiveNode): number => (n.slots.length === 0 ? 0 : n.datasetBytes / n.slots.length);
  const figures = primaries.map((id) => {
    const n = byId.get(id) as LiveNode;
    const inBytes = moves.filter((m) => m.to === id).reduce((s, m) => s + perSlot(byId.get(m.from) as LiveNode), 0);
    const outBytes = moves.filter((m) => m.from === id).length * perSlot(n);
    return {
      id,
      usedBytes: n.usedMemory,
      afterBytes: Math.round(n.usedMemory + inBytes - outBytes),
      maxmemory: n.maxmemory,
    };
  });
  const over = figures.filter((f) => f.maxmemory > 0 && f.afterBytes > f.maxmemory * headroom);
  if (over.length > 0) {
    const moving = [...new Set(moves.map((m) => m.from))].reduce((s, id) => s + (byId.get(id)?.datasetBytes ?? 0), 0);
    throw new ScaleInRefused(
      `scaling in to ${primaries.length} primaries is refused: the remaining primaries cannot hold the data. ` +
        over
          .map(
            (f) =>
              `${f.id} would hold about ${mib(f.afterBytes)} (now ${mib(f.usedBytes)}) of maxmemory ${mib(f.maxmemory)}`,
          )
          .join("; ") +
        ` (limit: ${Math.round(headroom * 100)}% of maxmemory; ${mib(moving)} of data on the primaries giving slots away). ` +
        `Keep more primaries, raise maxmemory (the memory request), or delete data first.`,
    );
  }
  return figures;
}

/**
 * The live nodes as they will be once every `promote` replica took over its primary's shard
 * (CLUSTER FAILOVER swaps the two nodes' roles, slots and data); refuses a promotion whose
 * primary must stay primary too.
 */
function afterFailovers(
  nodes: readonly LiveNode[],
  promote: readonly string[],
  planned: ReadonlySet<string>,
): LiveNode[] {
  const swap = new Map<string, LiveNode>();
  const byId = new Map(nodes.map((n) => [n.id, n]));
  for (const id of promote) {
    const r = byId.get(id) as LiveNode;
    const p = byId.get(r.replicaOf ?? "");
    if (p === undefined || planned.has(p.id)) {
      throw new ScaleInRefused(
        `the kept nodes need ${id} as a new primary, but it replicates ${r.replicaOf ?? "no primary"}, which ${p === undefined ? "is unknown" : "stays a primary"}; ` +
          `a failover cannot hand it a shard of its own (fail over the shards so the kept pods hold more primaries, then retry)`,
      );
    }
    swap.set(r.id, {
      ...r,
      role: "primary",
      replicaOf: undefined,
      slots: p.slots,
      usedMemory: p.usedMemory,
      datasetBytes: p.datasetBytes,
    });
    swap.set(p.id, {
      ...p,
      role: "replica",
      replicaOf: r.id,
      slots: [],
      datasetBytes: r.datasetBytes,
      usedMemory: r.usedMemory,
    });
  }
  return nodes.map((n) => swap.get(n.id) ?? n);
}

/** Decides the scale-in (see the module comment); throws ScaleInRefused or the planner's PlanError. */
export function planScaleIn(input: ScaleInInput): ScaleInPlan {
  const live = new Map(input.nodes.map((n) => [n.id, n]));
  const keptSet = new Set(input.kept);
  for (const id of input.kept)
    if (!live.has(id)) throw new ScaleInRefused(`kept member ${id} is not in the live cluster`);
  const cluster = planRoles(
    input.kept.map((id) => live.get(id) as LiveNode),
    input,
  );
  const planned = cluster.shards.map((s) => s.primary.id);
  const plannedSet = new Set(planned);
  const promote = planned.filter((id) => live.get(id)?.role !== "primary");
  const nodes = afterFailovers(input.nodes, promote, plannedSet);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  // splitSlots' shares (sizes differ by one at most), the larger ones to the primaries holding
  // the most slots: a balanced cluster needs no move, so a second run changes nothing.
  const shares = splitSlots(input.primaries)
    .map(slotCount)
    .sort((a, b) => b - a);
  const bySize = [...planned].sort((a, b) => (byId.get(b)?.slots.length ?? 0) - (byId.get(a)?.slots.length ?? 0));
  const target = new Map(bySize.map((id, i) => [id, shares[i] ?? 0]));
  const moves = rebalanceSlots([
    ...planned.map((id) => ({ id, slots: byId.get(id)?.slots ?? [], target: target.get(id) ?? 0 })),
    ...nodes
      .filter((n) => !plannedSet.has(n.id) && n.slots.length > 0)
      .map((n) => ({ id: n.id, slots: n.slots, target: 0 })),
  ]);
  const memory = checkMemory(moves, byId, planned, input.memoryHeadroom ?? 0.8);
  const replicate = cluster.shards.flatMap((s) =>
    s.replicas
      .filter((r) => byId.get(r.id)?.replicaOf !== s.primary.id)
      .map((r) => ({ replica: r.id, primary: s.primary.id })),
  );
  return {
    cluster,
    promote,
    moves,
    drained: input.kept.filter((id) => byId.get(id)?.role === "primary" && !plannedSet.has(id)),
    replicate,
    forget: input.nodes.filter((n) => !keptSet.has(n.id)).map((n) => ({ id: n.id, nodeId: n.nodeId })),
    memory,
  };
}
