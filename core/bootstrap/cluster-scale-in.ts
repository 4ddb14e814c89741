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

/** A client for every member that answers, in the members' order, all asked at once (leaving ones may be gone). */
async function connect(
  pool: ConnectionPool,
  members: readonly ClusterMember[],
  kept: ReadonlySet<string>,
): Promise<ScaleMember[]> {
  const answers = await Promise.all(
    members.map(async (member): Promise<ScaleMember | undefined> => {
      try {
        const client: Redis = await pool.get(member.endpoint);
        return { member, client, nodeId: (await client.call("CLUSTER", "MYID")) as string };
      } catch (err) {
        if (kept.has(member.id))
          throw new ScaleInError(`kept member ${member.id} does not answer: ${(err as Error).message}`);
        return undefined;
      }
    }),
  );
  return answers.filter((a): a is ScaleMember => a !== undefined);
}

/** A member's own view of itself (its `myself` line), its memory figures and maxmemory, asked together. */
async function selfView(h: ScaleMember) {
  const [own, memText, maxmemory] = await Promise.all([
    h.client.call("CLUSTER", "NODES") as Promise<string>,
    h.client.info("memory"),
    h.client.call("CONFIG", "GET", "maxmemory") as Promise<string[]>,
  ]);
  return { self: parseClusterNodes(own).nodes.find((n) => n.myself), mem: parseInfo(memText), maxmemory };
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
  // Every member asked at once (one after another was N round trips per read, and a scale-in reads several times).
  const answering = view.map((e) => byNodeId.get(e.id));
  const views = await Promise.all(answering.map(async (h) => (h === undefined ? undefined : selfView(h))));
  for (const [i, e] of view.entries()) {
    const h = answering[i];
    const seen = views[i];
    if (h === undefined || seen === undefined) {
      stale.push({ nodeId: e.id, slots: e.slots.reduce((n, r) => n + slotCount(r), 0) });
      continue;
    }
    const { mem, maxmemory } = seen;
    const self = seen.self ?? e;
    const slots = self.slots.flatMap((r) => Array.from({ length: slotCount(r) }, (_, k) => r.start + k));
    for (const slot of slots) {
      if (owner.has(slot)) claimedTwice.push(slot);
      owner.set(slot, h.member.id);
    }
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

/**
 * CLUSTER FORGET of each of `ids` on `k`, in one pipeline (one round trip for all: a leaving half of the cluster is N
 * ids on each of N kept members); an id `k` no longer knows is not an error.
 */
async function forgetOn(k: ScaleMember, ids: readonly string[]): Promise<void> {
  const pipeline = k.client.pipeline();
  for (const id of ids) pipeline.call("CLUSTER", "FORGET", id);
  const replies = (await pipeline.exec()) ?? [];
  for (const [i, [err]] of replies.entries())
    if (err && !/unknown node/i.test(err.message))
      throw new ScaleInError(`CLUSTER FORGET ${ids[i]} on ${k.member.id}: ${err.message}`);
}

/** The plan's leaving members that answer (a connection each). */
const leavingMembers = (plan: ScaleInPlan, all: readonly ScaleMember[]): ScaleMember[] =>
  plan.forget.flatMap((f) => all.filter((m) => m.member.id === f.id));

/**
 * `cluster-allow-replica-migration no` on every leaving member that answers, before any slot moves. With Valkey's
 * default (yes), a shard that loses its last slot follows it: its primary and its replicas become replicas of the kept
 * primary that took the slot, each with a full sync (cluster_legacy.c: "Lost my last slot during slot migration.
 * Reconfiguring myself as a replica"), so a scale-in of P shards cost the kept primaries 2P forks and snapshots while
 * they serve, for members about to be reset; at 30 primaries the leaving replicas were still loading them when reset.
 * With no, an emptied primary stays an empty primary and its replicas stay with it. Runtime only (not rewritten to
 * the config file): a re-run sets it again.
 */
async function holdLeavingInPlace(plan: ScaleInPlan, all: readonly ScaleMember[], step: (s: string) => void) {
  const leaving = leavingMembers(plan, all);
  if (leaving.length === 0) return;
  await Promise.all(leaving.map((h) => h.client.call("CONFIG", "SET", "cluster-allow-replica-migration", "no")));
  step(`${leaving.length} leaving member(s) stay in their shards when it empties (cluster-allow-replica-migration no)`);
}

/**
 * CLUSTER RESET HARD on `h`, asked again while it answers LOADING (a leaving member still loading a full sync:
 * seen at 30 primaries before holdLeavingInPlace; kept as a guard for a member that synced before it ran).
 */
async function resetHard(h: ScaleMember, timeoutMs: number): Promise<void> {
  await pollUntil(
    async () => {
      try {
        await h.client.call("CLUSTER", "RESET", "HARD");
        return true;
      } catch (err) {
        const msg = (err as Error).message;
        if (/^LOADING/.test(msg)) return msg;
        throw new ScaleInError(`CLUSTER RESET HARD on ${h.member.id}: ${msg}`);
      }
    },
    { timeoutMs, intervalMs: 100, what: `${h.member.id} to accept CLUSTER RESET HARD` },
  );
}

/**
 * RESET HARD on the leaving members that answer: the replicas first, all at once (each stops replicating), then the
 * primaries, all at once (one after another was ~0.2 s each, 11 s of a 30-primary scale-in's 22.5 s); then FORGET
 * their ids on every kept member until none lists them.
 */
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
  const leaving = leavingMembers(plan, all);
  if (leaving.length > 0)
    step(
      `${leaving.length} leaving member(s) leave the cluster (CLUSTER RESET HARD: the replicas, then the primaries)`,
    );
  const isReplica = (h: ScaleMember): boolean => live.nodes.some((n) => n.id === h.member.id && n.role === "replica");
  for (const group of [leaving.filter(isReplica), leaving.filter((h) => !isReplica(h))]) {
    await Promise.all(group.map((h) => resetHard(h, timeoutMs)));
    for (const h of group) step(`${h.member.id} left the cluster (CLUSTER RESET HARD)`);
  }
  await pollUntil(
    async () => {
      const listing: string[] = [];
      await Promise.all(
        kept.map(async (k) => {
          const view = (await k.client.call("CLUSTER", "NODES")) as string;
          const listed = ids.filter((i) => view.includes(i));
          for (const id of listed) listing.push(`${k.member.id} lists ${id.slice(0, 8)}`);
          if (listed.length > 0) await forgetOn(k, listed);
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
    await holdLeavingInPlace(plan, all, step);
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
    // Each replica its own node: all re-pointed at once.
    await Promise.all(
      plan.replicate.map((r) => replicateWhenKnown(get(r.replica), get(r.primary).nodeId, r.primary, timeoutMs, fail)),
    );
    for (const r of plan.replicate) {
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
