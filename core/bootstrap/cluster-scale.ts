/**
 * Scaling a running cluster up: P existing primaries (slots spread over them) plus fresh
 * cluster-enabled nodes become P' > P primaries. The existing primaries stay (they are the
 * planner's fixedPrimaries, existing replica links its preferredReplicaOf); the fresh nodes
 * are MEETed in; slots move from the existing primaries to the new ones (slot-migration.ts:
 * atomic slot migration on Valkey 9.0+, MIGRATE-based resharding otherwise); replicas are
 * then paired AZ-aware as planned.
 */
import { parseInfo } from "../topology/info.js";
import { pollUntil } from "../util/poll-until.js";
import { parseClusterNodes, type ClusterNodeEntry } from "../topology/cluster-nodes-parser.js";
import { planCluster, type ClusterPlan } from "./az-aware-planner.js";
import { meetAndWait, replicateWhenKnown } from "./cluster-gossip.js";
import { slotCount, splitSlots } from "../topology/slots.js";
import { detectSlotMigration, migrateSlots, type ScaleMember, type SlotMigrationMethod } from "./slot-migration.js";
import { rebalanceSlots, type SlotMove } from "./slot-moves.js";

export type { ScaleMember } from "./slot-migration.js";
export type { SlotMove } from "./slot-moves.js";

/**
 * Which slots move where: every primary ends with the slot count `splitSlots(P')` gives its
 * shard position; donors give their highest slots first. `owned`: existing primaries in
 * shard order with their slots; `added`: the new primaries in shard order.
 */
export function planSlotMoves(
  owned: readonly { id: string; slots: readonly number[] }[],
  added: readonly string[],
): SlotMove[] {
  const targets = splitSlots(owned.length + added.length).map(slotCount);
  return rebalanceSlots(
    [...owned, ...added.map((id) => ({ id, slots: [] }))].map((h, i) => ({ ...h, target: targets[i] ?? 0 })),
  );
}

/** The running cluster as one member sees it: primaries in slot order, replica links, slots. */
function currentTopology(
  view: string,
  members: readonly ScaleMember[],
): { primaries: { id: string; slots: number[] }[]; replicaOf: Record<string, string>; known: number } {
  const byNodeId = new Map(members.map((m) => [m.nodeId, m.member.id]));
  const entries = parseClusterNodes(view).nodes;
  const idOf = (e: ClusterNodeEntry): string => byNodeId.get(e.id) ?? e.id;
  const primaries = entries
    .filter((e) => e.role === "primary" && e.slots.length > 0)
    .sort((a, b) => (a.slots[0]?.start ?? 0) - (b.slots[0]?.start ?? 0))
    .map((e) => ({
      id: idOf(e),
      slots: e.slots.flatMap((r) => Array.from({ length: slotCount(r) }, (_, k) => r.start + k)),
    }));
  const nodeToMember = new Map(entries.map((e) => [e.id, idOf(e)]));
  const replicaOf: Record<string, string> = {};
  for (const e of entries) {
    if (e.role === "replica" && e.primaryId !== undefined)
      replicaOf[idOf(e)] = nodeToMember.get(e.primaryId) ?? e.primaryId;
  }
  return { primaries, replicaOf, known: entries.length };
}

export interface ScaleUpOptions {
  members: readonly ScaleMember[];
  /** Ids of the members that already form the cluster. */
  existing: ReadonlySet<string>;
  primaries: number;
  replicasPerPrimary: number;
  /** The Valkey password, for MIGRATE's AUTH (never logged). */
  password?: string;
  /** How slots move; @default detected: `atomic` on Valkey 9.0+, else `migrate`. */
  slotMigration?: SlotMigrationMethod;
  timeoutMs: number;
  step: (s: string) => void;
  fail: (message: string) => Error;
}

/** True when the existing members are one cluster with fewer primaries than wanted. */
export async function isScaleUp(
  members: readonly ScaleMember[],
  existing: ReadonlySet<string>,
  primaries: number,
): Promise<boolean> {
  const first = members.find((m) => existing.has(m.member.id));
  if (first === undefined || existing.size === members.length) return false;
  const topo = currentTopology((await first.client.call("CLUSTER", "NODES")) as string, members);
  return topo.known === existing.size && topo.primaries.length > 0 && topo.primaries.length < primaries;
}

/** Applies a scale-up (see the module comment); returns the plan it applied. */
export async function scaleUp(o: ScaleUpOptions): Promise<ClusterPlan> {
  const byId = new Map(o.members.map((m) => [m.member.id, m]));
  const old = o.members.filter((m) => o.existing.has(m.member.id));
  const fresh = o.members.filter((m) => !o.existing.has(m.member.id));
  const first = old[0];
  if (first === undefined) throw o.fail("no existing cluster member to scale from");
  const topo = currentTopology((await first.client.call("CLUSTER", "NODES")) as string, o.members);
  const plan = planCluster({
    // Fresh nodes first: ties for the new primaries go to them, not to existing replicas.
    nodes: [...fresh, ...old].map((m) => ({ id: m.member.id, zone: m.member.zone })),
    primaries: o.primaries,
    replicasPerPrimary: o.replicasPerPrimary,
    fixedPrimaries: topo.primaries.map((p) => p.id),
    preferredReplicaOf: topo.replicaOf,
  });
  const added = plan.shards.slice(topo.primaries.length).map((s) => s.primary.id);
  const promoted = added.filter((id) => o.existing.has(id));
  if (promoted.length > 0) {
    throw o.fail(
      `scaling up would turn existing replica(s) ${promoted.join(", ")} into new primaries; add fresh nodes for them instead`,
    );
  }
  for (const w of plan.warnings) o.step(`warning: ${w}`);

  await meetAndWait(first, fresh, o.members, o.timeoutMs);
  o.step(`met ${fresh.length} new node${fresh.length === 1 ? "" : "s"} from ${first.member.id}`);
  // A node that does not see cluster_state:ok yet refuses the keys MIGRATE sends it (CLUSTERDOWN).
  await pollUntil(
    async () => {
      const infos = await Promise.all(
        fresh.map(async (m) => parseInfo((await m.client.call("CLUSTER", "INFO")) as string)),
      );
      const behind = fresh.filter((_, i) => infos[i]?.get("cluster_state") !== "ok").map((m) => m.member.id);
      return behind.length === 0 ? true : `${behind.join(", ")} not ok yet`;
    },
    { timeoutMs: o.timeoutMs, what: "the new nodes to see cluster_state:ok" },
  );
  o.step("the new nodes see cluster_state:ok");

  const moves = planSlotMoves(topo.primaries, added);
  const get = (id: string): ScaleMember => byId.get(id) as ScaleMember;
  const method = o.slotMigration ?? (await detectSlotMigration(first.client));
  await migrateSlots(moves, {
    get,
    method,
    password: o.password,
    timeoutMs: o.timeoutMs,
    step: () => undefined,
    fail: o.fail,
  });
  for (const to of added) {
    const n = moves.filter((m) => m.to === to).length;
    o.step(`${to} (${get(to).member.zone}) took ${n} slots from the existing primaries`);
  }

  for (const shard of plan.shards) {
    const primary = get(shard.primary.id);
    for (const r of shard.replicas) {
      if (topo.replicaOf[r.id] === shard.primary.id) continue;
      await replicateWhenKnown(get(r.id), primary.nodeId, shard.primary.id, o.timeoutMs, o.fail);
      o.step(`${r.id} (${r.zone}) replicates ${shard.primary.id} (${shard.primary.zone})`);
    }
  }
  return plan;
}
