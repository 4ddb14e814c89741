/**
 * Forms a cluster from members that restore.sh started: shard i's restored member becomes shard
 * i's primary with the snapshot's slot ranges, the empty members become replicas (they full-sync
 * the data from their primary). A member that loaded an RDB claims, by itself, each unassigned
 * slot it holds keys of (Valkey's verifyClusterConfigWithData at start-up), so a restored
 * member is not "fresh" and the ordinary bootstrap would refuse it; this executor instead checks
 * that what it claimed lies inside its shard's ranges, adds the rest of those ranges
 * (ADDSLOTSRANGE on the slots without keys), MEETs everyone and attaches the replicas with the
 * same steps as the bootstrap (cluster-gossip.ts). Zones: the restored members are wherever the
 * scheduler put pods 0..P-1, possibly two in one zone; the plan (restorePlan) is the balanced one a
 * new cluster gets, and a shard whose restored member sits in a zone already full of primaries has
 * another member in a zone with room as its planned primary: it first replicates the restored
 * member (full sync), then takes over by CLUSTER FAILOVER (waits for the offsets: nothing lost), so
 * no zone keeps a primary majority. Refused, naming the member: a restored member
 * claiming slots outside its shard's ranges, an empty restored member (no member starts empty as
 * a primary), a would-be replica that holds keys or slots. The shards' ranges must be those a new
 * cluster of that many primaries plans (restore.sh refused any other snapshot before this runs).
 */
import type { Redis } from "ioredis";
import { planCluster, type ClusterPlan } from "../bootstrap/az-aware-planner.js";
import type { ClusterMember } from "../bootstrap/cluster-member.js";
import { meetAndWait, replicateWhenKnown, setDistinctConfigEpochs } from "../bootstrap/cluster-gossip.js";
import { ConnectionPool, type Connector } from "../topology/connector.js";
import { parseInfo } from "../topology/info.js";
import {
  CLUSTER_SLOT_COUNT,
  formatSlotRange,
  missingSlotRanges,
  withinSlotRange,
  type SlotRange,
} from "../topology/slots.js";
import { pollUntil } from "../util/poll-until.js";
import { normalizeRanges, parseSlotRange, plannedRanges, RestoreRefused } from "./restore-check.js";

/**
 * One shard to restore: its slot ranges (restore.sh checked them against the snapshot's) and, when known, the
 * manifest's key count.
 */
export interface RestoreShard {
  ranges: string[];
  keys?: number;
}

export interface RestoreClusterOptions {
  /** In shard order; they must be the ranges a new cluster of this many primaries plans. */
  shards: readonly RestoreShard[];
  /** Shard i's restored member id, in shard order. */
  restored: readonly string[];
  /** Every member, restored ones included; the others become replicas. */
  members: readonly ClusterMember[];
  replicasPerPrimary: number;
  connector: Connector;
  /** @default 60000 */
  timeoutMs?: number;
  onStep?: (step: string) => void;
}

interface Node {
  member: ClusterMember;
  client: Redis;
}

/** A member's node by member id. */
type GetNode = (id: string) => Node;

/** The slots `nodes` (CLUSTER NODES text) says myself owns. */
function ownSlots(clusterNodes: string): SlotRange[] {
  const mine = clusterNodes.split("\n").find((l) => l.split(" ")[2]?.split(",").includes("myself"));
  return (mine ?? "")
    .trim()
    .split(" ")
    .slice(8)
    .filter((f) => /^\d/.test(f))
    .map(parseSlotRange);
}

export interface RestoreClusterResult {
  plan: ClusterPlan;
  /** Member id -> cluster node id. */
  nodeIds: Record<string, string>;
  steps: string[];
}

/** True when no member has met another yet (each knows only itself): a new cluster, restored or empty. */
export async function noneJoined(members: readonly ClusterMember[], connector: Connector): Promise<boolean> {
  const pool = new ConnectionPool(connector);
  try {
    const infos = await Promise.all(
      members.map(async (m) => parseInfo((await (await pool.get(m.endpoint)).call("CLUSTER", "INFO")) as string)),
    );
    return infos.every((info) => info.get("cluster_known_nodes") === "1");
  } finally {
    await pool.closeAll();
  }
}

/**
 * The plan of a restore: the balanced one a new cluster of these members gets (planCluster), with
 * shard i's restored member kept in shard i: its primary where its zone has room for one more
 * primary, else a replica of a member in a zone with room (which takes over after the sync).
 */
export function restorePlan(
  members: readonly ClusterMember[],
  restored: readonly string[],
  replicasPerPrimary: number,
): ClusterPlan {
  const nodes = members.map((m) => ({ id: m.id, zone: m.zone }));
  const primaries = restored.length;
  const room = new Map(Object.entries(planCluster({ nodes, primaries, replicasPerPrimary }).primariesPerZone));
  const zoneOf = new Map(nodes.map((n) => [n.id, n.zone]));
  const targets: (string | undefined)[] = restored.map((id) => {
    const z = zoneOf.get(id) ?? "";
    if ((room.get(z) ?? 0) <= 0) return undefined;
    room.set(z, (room.get(z) ?? 0) - 1);
    return id;
  });
  const taken = new Set(restored);
  const fixedPrimaries = targets.map((t) => {
    if (t !== undefined) return t;
    const n = nodes.find((x) => !taken.has(x.id) && (room.get(x.zone) ?? 0) > 0);
    if (n === undefined)
      throw new RestoreRefused(
        "no member in a zone with room for a primary: the members' zones cannot hold a balanced cluster",
      );
    taken.add(n.id);
    room.set(n.zone, (room.get(n.zone) ?? 0) - 1);
    return n.id;
  });
  const preferredReplicaOf = Object.fromEntries(
    restored.flatMap((id, i) => (fixedPrimaries[i] === id ? [] : [[id, fixedPrimaries[i] as string]])),
  );
  const plan = planCluster({ nodes, primaries, replicasPerPrimary, fixedPrimaries, preferredReplicaOf });
  plan.shards.forEach((s, i) => {
    if (![s.primary, ...s.replicas].some((x) => x.id === restored[i]))
      throw new RestoreRefused(`the plan left ${restored[i]} (shard ${i}'s restored member) out of its shard`);
  });
  return plan;
}

/** The shards' ranges must be those a new cluster of that many primaries plans, one restored member each. */
function checkShards(o: RestoreClusterOptions): void {
  const primaries = o.shards.length;
  const want = plannedRanges(primaries);
  o.shards.forEach((s, i) => {
    const have = normalizeRanges(s.ranges).join(",");
    if (have !== (want[i] ?? []).join(","))
      throw new RestoreRefused(
        `shard ${i}: ranges ${have} are not the ${want[i]?.join(",")} a cluster of ${primaries} primaries plans`,
      );
  });
  if (o.restored.length !== primaries)
    throw new RestoreRefused(`${primaries} shard(s) in the backup but ${o.restored.length} restored member(s) named`);
}

/**
 * Shard i's restored member: it must hold keys (when the backup had some) of its shard's slots only; it gets the rest
 * of them.
 */
async function claimShard(
  p: Node,
  i: number,
  entry: RestoreShard | undefined,
  step: (s: string) => void,
): Promise<void> {
  if (entry === undefined) throw new RestoreRefused(`no shard ${i} in the backup`);
  const range = parseSlotRange(normalizeRanges(entry.ranges)[0] ?? "");
  const owned = ownSlots((await p.client.call("CLUSTER", "NODES")) as string);
  const keys = Number(await p.client.call("DBSIZE"));
  if (keys === 0 && (entry.keys ?? 0) > 0)
    throw new RestoreRefused(
      `${p.member.id} was to restore shard ${i} (${entry.keys} keys) but holds none: not starting it as a primary`,
    );
  if (!withinSlotRange(range, owned)) {
    throw new RestoreRefused(
      `${p.member.id} holds keys of slots ${owned.map(formatSlotRange).join(",")}, outside shard ${i}'s ${formatSlotRange(range)}`,
    );
  }
  for (const r of missingSlotRanges(range, owned))
    await p.client.call("CLUSTER", "ADDSLOTSRANGE", String(r.start), String(r.end));
  step(`${p.member.id} (${p.member.zone}) holds shard ${i}: ${keys} keys, slots ${formatSlotRange(range)}`);
}

/** Every other member of shard i must start empty: no keys, no slots. */
async function checkEmptyReplicas(
  shard: ClusterPlan["shards"][number],
  i: number,
  holderId: string,
  get: GetNode,
): Promise<void> {
  for (const r of [shard.primary, ...shard.replicas].filter((x) => x.id !== holderId)) {
    const n = get(r.id);
    const rk = Number(await n.client.call("DBSIZE"));
    const rs = ownSlots((await n.client.call("CLUSTER", "NODES")) as string);
    if (rk > 0 || rs.length > 0)
      throw new RestoreRefused(
        `${r.id} would replicate shard ${i} but holds ${rk} keys and ${rs.length} slot range(s): it must start empty`,
      );
  }
}

/** Every member of each shard other than its restored one replicates the restored one. */
async function attachReplicas(
  plan: ClusterPlan,
  o: RestoreClusterOptions,
  get: GetNode,
  timeoutMs: number,
  step: (s: string) => void,
): Promise<void> {
  for (const [i, shard] of plan.shards.entries()) {
    const holderId = o.restored[i] as string;
    const primaryId = (await get(holderId).client.call("CLUSTER", "MYID")) as string;
    for (const r of [shard.primary, ...shard.replicas].filter((x) => x.id !== holderId)) {
      await replicateWhenKnown(get(r.id), primaryId, holderId, timeoutMs, (m) => new RestoreRefused(m));
      step(`${r.id} (${r.zone}) replicates ${holderId}`);
    }
  }
}

/** Waits for cluster_state:ok and every slot ok on every node, and every one of `replicaIds` linked and synced. */
function waitSynced(
  nodes: readonly Node[],
  get: GetNode,
  replicaIds: readonly string[],
  timeoutMs: number,
): Promise<void> {
  return pollUntil(
    async () => {
      const bad: string[] = [];
      for (const n of nodes) {
        const info = parseInfo((await n.client.call("CLUSTER", "INFO")) as string);
        if (info.get("cluster_state") !== "ok" || Number(info.get("cluster_slots_ok")) !== CLUSTER_SLOT_COUNT)
          bad.push(`${n.member.id} state=${info.get("cluster_state")}`);
      }
      for (const id of replicaIds) {
        const info = parseInfo(await get(id).client.info("replication"));
        if (info.get("master_link_status") !== "up" || info.get("master_sync_in_progress") === "1")
          bad.push(`${id} link=${info.get("master_link_status")}`);
      }
      return bad.length === 0 ? true : bad.join("; ");
    },
    { timeoutMs, what: "the restored cluster: cluster_state:ok on every node, every replica linked and synced" },
  );
}

/**
 * Shards whose restored member sat in a zone already full of primaries: the planned primary takes over (CLUSTER
 * FAILOVER).
 */
async function takeOverPlanned(
  plan: ClusterPlan,
  o: RestoreClusterOptions,
  get: GetNode,
  timeoutMs: number,
  step: (s: string) => void,
): Promise<void> {
  for (const [i, shard] of plan.shards.entries()) {
    const holderId = o.restored[i] as string;
    if (shard.primary.id === holderId) continue;
    const target = get(shard.primary.id);
    await target.client.call("CLUSTER", "FAILOVER");
    await pollUntil(
      async () =>
        parseInfo(await target.client.info("replication")).get("role") === "master" ? true : "still a replica",
      {
        timeoutMs,
        what: `${target.member.id} to take shard ${i} over from ${holderId} by CLUSTER FAILOVER`,
      },
    );
    step(
      `${target.member.id} (${target.member.zone}) took shard ${i} over from ${holderId} (${get(holderId).member.zone}): no zone holds a primary majority`,
    );
  }
}

export async function restoreCluster(o: RestoreClusterOptions): Promise<RestoreClusterResult> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const steps: string[] = [];
  const step = (s: string): void => {
    steps.push(s);
    o.onStep?.(s);
  };
  const primaries = o.shards.length;
  checkShards(o);
  const plan = restorePlan(o.members, o.restored, o.replicasPerPrimary);
  const pool = new ConnectionPool(o.connector);
  try {
    const nodes = await Promise.all(
      o.members.map(async (member): Promise<Node> => ({ member, client: await pool.get(member.endpoint) })),
    );
    const byId = new Map(nodes.map((n) => [n.member.id, n]));
    const get = (id: string): Node => byId.get(id) as Node;
    await setDistinctConfigEpochs(nodes.map((n) => n.client));
    for (const [i, shard] of plan.shards.entries()) {
      const holderId = o.restored[i] as string;
      await claimShard(get(holderId), i, o.shards[i], step);
      await checkEmptyReplicas(shard, i, holderId, get);
    }
    const [first, ...rest] = nodes;
    if (first === undefined) throw new RestoreRefused("no members");
    await meetAndWait(first, rest, nodes, timeoutMs);
    step(`all ${nodes.length} nodes know each other`);
    await attachReplicas(plan, o, get, timeoutMs, step);
    await waitSynced(
      nodes,
      get,
      plan.shards.flatMap((s, i) => [s.primary, ...s.replicas].map((x) => x.id).filter((id) => id !== o.restored[i])),
      timeoutMs,
    );
    await takeOverPlanned(plan, o, get, timeoutMs, step);
    await waitSynced(
      nodes,
      get,
      plan.shards.flatMap((s) => s.replicas.map((x) => x.id)),
      timeoutMs,
    );
    step(`cluster_state:ok: ${primaries} restored primaries, ${o.replicasPerPrimary} replica(s) each`);
    const nodeIds: Record<string, string> = {};
    for (const n of nodes) nodeIds[n.member.id] = (await n.client.call("CLUSTER", "MYID")) as string;
    return { plan, nodeIds, steps };
  } finally {
    await pool.closeAll();
  }
}
