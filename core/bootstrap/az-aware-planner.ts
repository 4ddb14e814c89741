/**
 * The AZ-aware cluster planner: a pure function from "these nodes, in these zones" and the
 * wanted shape (P primaries x M replicas each) to an assignment of roles and slots.
 *
 * Guarantees of a returned plan:
 * - primaries are spread over the zones as evenly as the node counts allow (water-filling),
 *   and with 3 or more zones no zone holds more than half of the primaries;
 * - every replica sits in a different zone from its primary, and a primary's replicas are
 *   spread over as many distinct zones as possible;
 * - the 16384 slots are split in contiguous ranges over the primaries in shard order.
 * When no assignment can satisfy these rules, `planCluster` throws a `PlanError` that says
 * which zone or count makes it impossible.
 *
 * Feasibility, exactly: with n_z nodes in zone z, N nodes in all and c_z primaries placed in
 * z, the replicas of z's primaries must come from the non-primary nodes of other zones, so
 * M·c_z ≤ (N − n_z) − (P − c_z) for every zone, and M·P ≤ N − P overall (Hall's condition for
 * this zone-grouped bipartite graph; larger zone sets reach every node and reduce to the
 * total). The planner derives per-zone caps on c_z from this and fills primaries under them.
 */
import { FlowGraph } from "./min-cost-flow.js";
import { splitSlots, type SlotRange } from "../topology/slots.js";

/** A node the planner may use: a stable id (e.g. `host:port` or a pod name) and its zone. */
export interface PlannerNode {
  readonly id: string;
  readonly zone: string;
}

export interface PlanInput {
  /** Every node available, in a stable order (it decides ties, e.g. pod ordinal order). */
  readonly nodes: readonly PlannerNode[];
  /** P: number of primaries (shards). */
  readonly primaries: number;
  /** M: replicas per primary. */
  readonly replicasPerPrimary: number;
  /**
   * Nodes that must be primaries, in shard order (they already own slots in a running
   * cluster). New primaries are appended after them.
   */
  readonly fixedPrimaries?: readonly string[];
  /** Existing replica -> primary links, kept when they still satisfy the rules. */
  readonly preferredReplicaOf?: Readonly<Record<string, string>>;
}

export interface ShardPlan {
  readonly primary: PlannerNode;
  readonly replicas: readonly PlannerNode[];
  /** The shard's slots when the cluster is created from scratch (contiguous, shard order). */
  readonly slots: SlotRange;
}

export interface ClusterPlan {
  readonly shards: readonly ShardPlan[];
  /** Nodes the shape does not need (more nodes than P x (1 + M)). */
  readonly spares: readonly PlannerNode[];
  /** Zone -> number of primaries placed there, every zone listed. */
  readonly primariesPerZone: Readonly<Record<string, number>>;
  /** Things that are allowed but weaker than the guarantees (e.g. only 2 zones). */
  readonly warnings: readonly string[];
}

export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PlanError";
  }
}

/** Cost added per extra replica of one primary placed in a zone it already has a replica in. */
const SAME_ZONE_REPLICA_PENALTY = 16;
/** Bonus (negative cost) for keeping an existing valid replica link. */
const KEEP_LINK_BONUS = -1;

function checkShape(input: PlanInput): void {
  const { primaries: p, replicasPerPrimary: m, nodes } = input;
  if (!Number.isInteger(p) || p < 1) throw new PlanError(`primaries must be a whole number ≥ 1 (got ${p})`);
  if (!Number.isInteger(m) || m < 0) throw new PlanError(`replicasPerPrimary must be a whole number ≥ 0 (got ${m})`);
  const seen = new Set<string>();
  for (const n of nodes) {
    if (n.id === "") throw new PlanError("a node has an empty id");
    if (n.zone.trim() === "") throw new PlanError(`node ${n.id} has no zone`);
    if (seen.has(n.id)) throw new PlanError(`node ${n.id} is listed twice`);
    seen.add(n.id);
  }
  const need = p * (1 + m);
  if (nodes.length < need) {
    throw new PlanError(
      `${p} primaries x (1 + ${m} replicas) need ${need} nodes, but only ${nodes.length} ${nodes.length === 1 ? "is" : "are"} available`,
    );
  }
  for (const id of input.fixedPrimaries ?? []) {
    if (!seen.has(id)) throw new PlanError(`fixed primary ${id} is not among the nodes`);
  }
  if ((input.fixedPrimaries?.length ?? 0) > p) {
    throw new PlanError(
      `${input.fixedPrimaries?.length} nodes already own slots but only ${p} primaries were asked for (scaling primaries down is not supported)`,
    );
  }
}

/** Zones in first-appearance order, with their nodes in input order. */
function groupByZone(nodes: readonly PlannerNode[]): Map<string, PlannerNode[]> {
  const zones = new Map<string, PlannerNode[]>();
  for (const n of nodes) {
    const list = zones.get(n.zone);
    if (list) list.push(n);
    else zones.set(n.zone, [n]);
  }
  return zones;
}

/** Highest primary count zone z may hold while its primaries' replicas still fit elsewhere. */
function primaryCap(nz: number, total: number, p: number, m: number): number {
  if (m === 0) return nz;
  const room = total - nz - p; // (M − 1)·c_z ≤ room
  if (room < 0) return -1;
  if (m === 1) return nz;
  return Math.min(nz, Math.floor(room / (m - 1)));
}

function describeZones(byZone: Map<string, PlannerNode[]>): string {
  return [...byZone].map(([z, ns]) => `${z}: ${ns.length}`).join(", ");
}

/** Decides how many primaries each zone gets: as even as the caps allow. */
function primariesPerZone(byZone: Map<string, PlannerNode[]>, input: PlanInput): Map<string, number> {
  const { primaries: p, replicasPerPrimary: m } = input;
  const total = input.nodes.length;
  const zoneOf = new Map(input.nodes.map((n) => [n.id, n.zone]));
  const counts = new Map<string, number>([...byZone.keys()].map((z) => [z, 0]));
  for (const id of input.fixedPrimaries ?? []) {
    const z = zoneOf.get(id) as string;
    counts.set(z, (counts.get(z) ?? 0) + 1);
  }
  const caps = new Map<string, number>();
  for (const [z, ns] of byZone) {
    const cap = primaryCap(ns.length, total, p, m);
    if (cap < 0) {
      throw new PlanError(
        `zone ${z} holds ${ns.length} of ${total} nodes (${describeZones(byZone)}): with ${p} primaries and ` +
          `${m} replica${m === 1 ? "" : "s"} each, the primaries outside ${z} cannot all get a replica in another zone; ` +
          `spread the nodes over more zones`,
      );
    }
    if ((counts.get(z) ?? 0) > cap) {
      throw new PlanError(
        `zone ${z} already holds ${counts.get(z)} primaries but at most ${cap} can have all their replicas in other zones ` +
          `(${describeZones(byZone)})`,
      );
    }
    caps.set(z, cap);
  }
  let placed = [...counts.values()].reduce((a, b) => a + b, 0);
  while (placed < p) {
    let best: string | undefined;
    for (const [z, c] of counts) {
      if (c >= (caps.get(z) ?? 0)) continue;
      if (best === undefined || c < (counts.get(best) ?? 0)) best = z;
    }
    if (best === undefined) {
      const capText = [...caps].map(([z, c]) => `${z} ≤ ${c}`).join(", ");
      throw new PlanError(
        `cannot place ${p} primaries with ${m} cross-zone replica${m === 1 ? "" : "s"} each over ${describeZones(byZone)} ` +
          `(per-zone primary caps: ${capText})`,
      );
    }
    counts.set(best, (counts.get(best) ?? 0) + 1);
    placed++;
  }
  return counts;
}

/** Picks which nodes of each zone become primaries: fixed ones first, then input order. */
function choosePrimaries(
  byZone: Map<string, PlannerNode[]>,
  counts: Map<string, number>,
  input: PlanInput,
): PlannerNode[] {
  const fixed = input.fixedPrimaries ?? [];
  const byId = new Map(input.nodes.map((n) => [n.id, n]));
  const chosen = fixed.map((id) => byId.get(id) as PlannerNode);
  const taken = new Set(fixed);
  for (const [z, ns] of byZone) {
    let need = (counts.get(z) ?? 0) - chosen.filter((n) => n.zone === z).length;
    for (const n of ns) {
      if (need <= 0) break;
      if (taken.has(n.id)) continue;
      chosen.push(n);
      taken.add(n.id);
      need--;
    }
  }
  // Shard order: fixed primaries keep theirs; new ones follow in input order.
  const index = new Map(input.nodes.map((n, i) => [n.id, i]));
  const fresh = chosen.slice(fixed.length).sort((a, b) => (index.get(a.id) ?? 0) - (index.get(b.id) ?? 0));
  return [...chosen.slice(0, fixed.length), ...fresh];
}

/** Hands replicas to primaries by min-cost flow: cross-zone only, zones spread, links kept. */
function assignReplicas(primaries: PlannerNode[], candidates: PlannerNode[], input: PlanInput): PlannerNode[][] {
  const m = input.replicasPerPrimary;
  if (m === 0) return primaries.map(() => []);
  const zones = [...new Set(input.nodes.map((n) => n.zone))];
  const preferred = input.preferredReplicaOf ?? {};
  // Vertex layout: 0 source, 1 sink, primaries, (primary, zone) pairs, candidates.
  const pBase = 2;
  const pzBase = pBase + primaries.length;
  const cBase = pzBase + primaries.length * zones.length;
  const g = new FlowGraph(cBase + candidates.length);
  const links: { primary: number; candidate: number; edge: [number, number] }[] = [];
  primaries.forEach((p, pi) => {
    g.addEdge(0, pBase + pi, m, 0);
    zones.forEach((z, zi) => {
      if (z === p.zone) return;
      const pz = pzBase + pi * zones.length + zi;
      for (let k = 0; k < m; k++) g.addEdge(pBase + pi, pz, 1, k * SAME_ZONE_REPLICA_PENALTY);
      candidates.forEach((c, ci) => {
        if (c.zone !== z) return;
        const cost = preferred[c.id] === p.id ? KEEP_LINK_BONUS : 0;
        links.push({ primary: pi, candidate: ci, edge: g.addEdge(pz, cBase + ci, 1, cost) });
      });
    });
  });
  candidates.forEach((_, ci) => g.addEdge(cBase + ci, 1, 1, 0));
  const { flow } = g.minCostFlow(0, 1, m * primaries.length);
  if (flow !== m * primaries.length) {
    // The zone caps make this unreachable; keep a clear message in case they are ever wrong.
    throw new PlanError(
      `could only place ${flow} of ${m * primaries.length} replicas in a zone other than their primary's`,
    );
  }
  const out: PlannerNode[][] = primaries.map(() => []);
  for (const l of links) {
    if (g.flowOn(l.edge) > 0) out[l.primary]?.push(candidates[l.candidate] as PlannerNode);
  }
  const order = new Map(input.nodes.map((n, i) => [n.id, i]));
  for (const rs of out) rs.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  return out;
}

/** Plans roles and slots for a cluster of `primaries` x (1 + `replicasPerPrimary`) nodes. */
export function planCluster(input: PlanInput): ClusterPlan {
  checkShape(input);
  const byZone = groupByZone(input.nodes);
  const { primaries: p, replicasPerPrimary: m } = input;
  if (m > 0 && byZone.size < 2) {
    throw new PlanError(
      `every replica must sit in a different zone from its primary, but all ${input.nodes.length} nodes are in zone ${[...byZone.keys()][0]}`,
    );
  }
  const counts = primariesPerZone(byZone, input);
  const warnings: string[] = [];
  const most = Math.max(...counts.values());
  const heavy = [...counts].find(([, c]) => c === most)?.[0] ?? "";
  if (most * 2 > p) {
    const text = `zone ${heavy} holds ${most} of ${p} primaries: losing that zone loses the primary majority`;
    if (byZone.size >= 3) {
      throw new PlanError(`${text}; the node counts per zone (${describeZones(byZone)}) leave no better spread`);
    }
    warnings.push(`${text} (only ${byZone.size} zone${byZone.size === 1 ? "" : "s"}; use 3 or more)`);
  }
  const primaries = choosePrimaries(byZone, counts, input);
  const primaryIds = new Set(primaries.map((n) => n.id));
  const candidates = input.nodes.filter((n) => !primaryIds.has(n.id));
  const replicas = assignReplicas(primaries, candidates, input);
  const used = new Set([...primaryIds, ...replicas.flat().map((n) => n.id)]);
  const slots = splitSlots(p);
  return {
    shards: primaries.map((primary, i) => ({
      primary,
      replicas: replicas[i] ?? [],
      slots: slots[i] as SlotRange,
    })),
    spares: input.nodes.filter((n) => !used.has(n.id)),
    primariesPerZone: Object.fromEntries(counts),
    warnings,
  };
}
