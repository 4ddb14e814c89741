/**
 * Scaling a running cluster in: P primaries become P' < P, and the members that are not kept
 * (the highest pod ordinals) leave the cluster before anything stops them. Every step reads the
 * live cluster and plans from it (cluster-scale-in-plan.ts), so a run interrupted anywhere is
 * finished by running it again. In order:
 * 1. read every member's role, slots and memory; refuse (nothing changed) when the kept
 *    primaries cannot hold the data;
 * 2. fail over to kept replicas the plan promotes (they take their leaving primary's shard);
 * 3. finish slot moves an interrupted run left half done, then move the slots off every primary
 *    that goes away or is drained (slot-migration.ts: atomic on Valkey 9.0+, MIGRATE otherwise);
 * 4. CLUSTER REPLICATE so each kept primary has its M cross-zone replicas from kept nodes, and
 *    wait until their links are up;
 * 5. CLUSTER RESET HARD on every leaving member (it forgets the cluster and gossips no more),
 *    then CLUSTER FORGET their node ids on every kept member, repeated until none lists them;
 * 6. wait until every kept member sees cluster_state:ok with only the kept members.
 * Only then may the leaving members be stopped and their volumes released.
 */
import type { Redis } from "ioredis";
import { ConnectionPool, type Connector } from "../topology/connector.js";
import { parseInfo } from "../topology/info.js";
import { parseClusterNodes } from "../topology/cluster-nodes-parser.js";
import { slotCount } from "../topology/slots.js";
import { pollUntil } from "../util/poll-until.js";
import { checkMembers, type ClusterMember } from "./cluster-member.js";
import { replicateWhenKnown } from "./cluster-gossip.js";
import { planScaleIn, type LiveNode, type ScaleInPlan } from "./cluster-scale-in-plan.js";
import {
  detectSlotMigration,
  finishInterruptedMoves,
  migrateSlots,
  type ScaleMember,
  type SlotMigrationMethod,
} from "./slot-migration.js";

export interface ScaleInOptions {
  /** Every member of the running cluster: the kept ones and the leaving ones. */
  members: readonly ClusterMember[];
  /** Ids of the members that stay (the lowest pod ordinals), in ordinal order. */
  kept: readonly string[];
  /** P': primaries wanted. */
  primaries: number;
  replicasPerPrimary: number;
  connector: Connector;
  /** The Valkey password, for MIGRATE's AUTH (never logged). */
  password?: string;
  /** How slots move. @default detected: `atomic` on Valkey 9.0+, else `migrate` */
  slotMigration?: SlotMigrationMethod;
  /** Share of maxmemory a kept primary may fill after the moves. @default 0.8 */
  memoryHeadroom?: number;
  /** Upper bound for each wait. @default 60000 */
  timeoutMs?: number;
  onStep?: (step: string) => void;
}

export interface ScaleInResult {
  /** False when the kept members already formed the wanted cluster alone. */
  changed: boolean;
  /** The last plan applied. */
  plan: ScaleInPlan;
  steps: string[];
}

export class ScaleInError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScaleInError";
  }
}

interface Live {
  nodes: LiveNode[];
  /** Node ids the kept members list that no member answers as (reset or lost members). */
  stale: { nodeId: string; slots: number }[];
  handles: ScaleMember[];
}

const num = (info: Map<string, string>, key: string): number => Number(info.get(key) ?? "0");

/** A client for every member that answers; leaving members may be gone already. */
async function connect(
  pool: ConnectionPool,
  members: readonly ClusterMember[],
  kept: ReadonlySet<string>,
): Promise<ScaleMember[]> {
  const out: ScaleMember[] = [];
  for (const member of members) {
    try {
      const client: Redis = await pool.get(member.endpoint);
      out.push({ member, client, nodeId: (await client.call("CLUSTER", "MYID")) as string });
    } catch (err) {
      if (kept.has(member.id))
        throw new ScaleInError(`kept member ${member.id} does not answer: ${(err as Error).message}`);
    }
  }
  return out;
}

/**
 * The cluster's members as the first kept member lists them, each member's role and slots as it
 * states them itself (its `myself` line: a slot handed over is the new owner's at once, where a
 * peer's view may lag), with its memory figures.
 */
async function readOnce(
  handles: readonly ScaleMember[],
  kept: ReadonlySet<string>,
): Promise<Live & { claimedTwice: number[] }> {
  const seer = handles.find((h) => kept.has(h.member.id)) as ScaleMember;
  const view = parseClusterNodes((await seer.client.call("CLUSTER", "NODES")) as string).nodes;
  const byNodeId = new Map(handles.map((h) => [h.nodeId, h]));
  const nodes: LiveNode[] = [];
  const stale: Live["stale"] = [];
  const owner = new Map<number, string>();
  const claimedTwice: number[] = [];
  for (const e of view) {
    const h = byNodeId.get(e.id);
    if (h === undefined) {
      stale.push({ nodeId: e.id, slots: e.slots.reduce((n, r) => n + slotCount(r), 0) });
      continue;
    }
    const [own, memText, maxmemory] = await Promise.all([
      h.client.call("CLUSTER", "NODES") as Promise<string>,
      h.client.info("memory"),
      h.client.call("CONFIG", "GET", "maxmemory") as Promise<string[]>,
    ]);
    const self = parseClusterNodes(own).nodes.find((n) => n.myself) ?? e;
    const slots = self.slots.flatMap((r) => Array.from({ length: slotCount(r) }, (_, k) => r.start + k));
    for (const slot of slots) {
      if (owner.has(slot)) claimedTwice.push(slot);
      owner.set(slot, h.member.id);
    }
    const mem = parseInfo(memText);
    nodes.push({
      id: h.member.id,
      nodeId: h.nodeId,
      zone: h.member.zone,
      role: self.role === "primary" ? "primary" : "replica",
      replicaOf: self.primaryId === undefined ? undefined : (byNodeId.get(self.primaryId)?.member.id ?? self.primaryId),
      slots,
      usedMemory: num(mem, "used_memory"),
      datasetBytes: num(mem, "used_memory_dataset"),
      maxmemory: Number(maxmemory[1] ?? 0),
    });
  }
  const missing = [...kept].filter((id) => !nodes.some((n) => n.id === id));
  if (missing.length > 0)
    throw new ScaleInError(`kept member(s) ${missing.join(", ")} are not part of the cluster ${seer.member.id} sees`);
  const owning = stale.filter((s) => s.slots > 0);
  if (owning.length > 0) {
    throw new ScaleInError(
      `node(s) ${owning.map((s) => `${s.nodeId} (${s.slots} slots)`).join(", ")} own slots but no member answers as them; restore them first`,
    );
  }
  return { nodes, stale, handles: handles.filter((h) => nodes.some((n) => n.id === h.member.id)), claimedTwice };
}

/** readOnce, repeated while two members claim one slot (a handover the cluster bus has not settled yet). */
async function readLive(handles: readonly ScaleMember[], kept: ReadonlySet<string>, timeoutMs: number): Promise<Live> {
  let live = await readOnce(handles, kept);
  await pollUntil(
    async () => {
      live = await readOnce(handles, kept);
      return live.claimedTwice.length === 0
        ? true
        : `slot(s) ${live.claimedTwice.slice(0, 5).join(", ")} claimed by two members`;
    },
    { timeoutMs, intervalMs: 200, what: "every slot to have one owner" },
  );
  return live;
}

/** CLUSTER FAILOVER on each promoted replica, waiting until it reports itself primary. */
async function promote(
  ids: readonly string[],
  get: (id: string) => ScaleMember,
  timeoutMs: number,
  step: (s: string) => void,
): Promise<void> {
  for (const id of ids) {
    const h = get(id);
    await h.client.call("CLUSTER", "FAILOVER");
    await pollUntil(
      async () => (((await h.client.call("ROLE")) as unknown[])[0] === "master" ? true : `${id} not primary yet`),
      {
        timeoutMs,
        what: `${id} to take over its shard (CLUSTER FAILOVER)`,
      },
    );
    step(`${id} (${h.member.zone}) took over its shard from a leaving primary (CLUSTER FAILOVER)`);
  }
}

/** Waits until every planned replica's link to its primary is up. */
async function waitReplicas(plan: ScaleInPlan, get: (id: string) => ScaleMember, timeoutMs: number): Promise<void> {
  const replicas = plan.cluster.shards.flatMap((s) => s.replicas.map((r) => r.id));
  await pollUntil(
    async () => {
      const infos = await Promise.all(replicas.map(async (id) => parseInfo(await get(id).client.info("replication"))));
      const down = replicas.filter(
        (_, i) => infos[i]?.get("master_link_status") !== "up" || infos[i]?.get("master_sync_in_progress") === "1",
      );
      return down.length === 0 ? true : `${down.join(", ")} not in sync yet`;
    },
    { timeoutMs, what: "the kept replicas' links to their primaries" },
  );
}

/** RESET HARD on the leaving members that answer, then FORGET their ids on every kept member until none lists them. */
async function forgetLeaving(
  live: Live,
  plan: ScaleInPlan,
  kept: readonly ScaleMember[],
  all: readonly ScaleMember[],
  timeoutMs: number,
  step: (s: string) => void,
): Promise<number> {
  const ids = [...plan.forget.map((f) => f.nodeId), ...live.stale.map((s) => s.nodeId)];
  if (ids.length === 0) return 0;
  for (const f of plan.forget) {
    const h = all.find((m) => m.member.id === f.id);
    if (h === undefined) continue;
    await h.client.call("CLUSTER", "RESET", "HARD");
    step(`${f.id} left the cluster (CLUSTER RESET HARD)`);
  }
  await pollUntil(
    async () => {
      const listing: string[] = [];
      await Promise.all(
        kept.map(async (k) => {
          const view = (await k.client.call("CLUSTER", "NODES")) as string;
          for (const id of ids.filter((i) => view.includes(i))) {
            listing.push(`${k.member.id} lists ${id.slice(0, 8)}`);
            try {
              await k.client.call("CLUSTER", "FORGET", id);
            } catch (err) {
              if (!/unknown node/i.test((err as Error).message))
                throw new ScaleInError(`CLUSTER FORGET ${id} on ${k.member.id}: ${(err as Error).message}`);
            }
          }
        }),
      );
      return listing.length === 0 ? true : listing.join(", ");
    },
    { timeoutMs, intervalMs: 200, what: "every kept member to forget the leaving nodes" },
  );
  step(`every kept member forgot ${ids.length} leaving node id(s) (CLUSTER FORGET)`);
  return ids.length;
}

/** Applies a scale-in (see the module comment). */
export async function scaleIn(o: ScaleInOptions): Promise<ScaleInResult> {
  checkMembers(o.members);
  const timeoutMs = o.timeoutMs ?? 60_000;
  const steps: string[] = [];
  const step = (s: string): void => {
    steps.push(s);
    o.onStep?.(s);
  };
  const fail = (m: string): Error => new ScaleInError(m);
  const keptSet = new Set(o.kept);
  const pool = new ConnectionPool(o.connector);
  try {
    const all = await connect(pool, o.members, keptSet);
    const get = (id: string): ScaleMember => {
      const h = all.find((m) => m.member.id === id);
      if (h === undefined) throw fail(`member ${id} does not answer`);
      return h;
    };
    const kept = all.filter((h) => keptSet.has(h.member.id));
    const input = {
      kept: o.kept,
      primaries: o.primaries,
      replicasPerPrimary: o.replicasPerPrimary,
      memoryHeadroom: o.memoryHeadroom,
    };
    let live = await readLive(all, keptSet, timeoutMs);
    let plan = planScaleIn({ ...input, nodes: live.nodes });
    let changed = false;
    if (plan.promote.length > 0) {
      await promote(plan.promote, get, timeoutMs, step);
      changed = true;
      live = await readLive(all, keptSet, timeoutMs);
      plan = planScaleIn({ ...input, nodes: live.nodes });
      if (plan.promote.length > 0) throw fail(`after the failovers the plan still promotes ${plan.promote.join(", ")}`);
    }
    const method = o.slotMigration ?? (await detectSlotMigration(kept[0]?.client as Redis));
    const migrate = { get, method, password: o.password, timeoutMs, step, fail };
    const primaries = live.handles.filter((h) => live.nodes.some((n) => n.id === h.member.id && n.role === "primary"));
    if ((await finishInterruptedMoves(primaries, live.handles, migrate)) > 0) {
      changed = true;
      live = await readLive(all, keptSet, timeoutMs);
      plan = planScaleIn({ ...input, nodes: live.nodes });
    }
    if (plan.moves.length > 0) {
      step(
        `moving ${plan.moves.length} slots to ${plan.cluster.shards.map((s) => s.primary.id).join(", ")} (${method})`,
      );
      await migrateSlots(plan.moves, migrate);
      changed = true;
    }
    for (const r of plan.replicate) {
      await replicateWhenKnown(get(r.replica), get(r.primary).nodeId, r.primary, timeoutMs, fail);
      step(`${r.replica} (${get(r.replica).member.zone}) replicates ${r.primary} (${get(r.primary).member.zone})`);
      changed = true;
    }
    await waitReplicas(plan, get, timeoutMs);
    if ((await forgetLeaving(live, plan, kept, all, timeoutMs, step)) > 0) changed = true;
    await pollUntil(
      async () => {
        const infos = await Promise.all(
          kept.map(async (k) => parseInfo((await k.client.call("CLUSTER", "INFO")) as string)),
        );
        const behind = kept.filter(
          (_, i) => infos[i]?.get("cluster_state") !== "ok" || num(infos[i], "cluster_known_nodes") !== kept.length,
        );
        return behind.length === 0 ? true : `${behind.map((k) => k.member.id).join(", ")} not settled`;
      },
      { timeoutMs, what: "cluster_state:ok with only the kept members on every kept member" },
    );
    if (changed)
      step(`scaled in to ${o.primaries} primaries x (1 + ${o.replicasPerPrimary}) on ${kept.length} members`);
    return { changed, plan, steps };
  } finally {
    await pool.closeAll();
  }
}
