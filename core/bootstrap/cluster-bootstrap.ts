/**
 * The bootstrap executor: turns a set of empty cluster-enabled Valkey nodes into a cluster
 * shaped by the AZ-aware planner, over any Connector (loopback, direct pod IPs, or a
 * Kubernetes port-forward).
 *
 * Steps on fresh nodes: distinct config epochs, CLUSTER ADDSLOTSRANGE on each primary
 * (contiguous ranges, 5461/5461/5462 for 3 primaries), CLUSTER MEET from one node to all
 * others, wait until every node knows every other, CLUSTER REPLICATE on each replica, then wait until
 * every node reports cluster_state:ok with all slots and every replica's link is up.
 *
 * Idempotent: nodes that already form a healthy cluster of the wanted shape are left alone
 * (`changed: false`). A running cluster with fresh nodes added and more primaries wanted is
 * scaled up (cluster-scale.ts); a cluster whose members lost their volumes (stale node ids, fresh
 * or slot-less members, all slots still owned) is reconciled (cluster-reconcile.ts); other
 * changes of a running cluster are refused.
 */
import type { Redis } from "ioredis";
import { ConnectionPool, type Connector } from "../topology/connector.js";
import { parseInfo } from "../topology/info.js";
import { pollUntil } from "../util/poll-until.js";
import { planCluster, type ClusterPlan } from "./az-aware-planner.js";
import { checkMembers, type ClusterMember } from "./cluster-member.js";
import { askAll, meetAndWait, replicateWhenKnown, setDistinctConfigEpochs, type Answer } from "./cluster-gossip.js";
import { isScaleUp, scaleUp } from "./cluster-scale.js";
import { isHalfHealed, reconcileLostMembers } from "./cluster-reconcile.js";
import { CLUSTER_SLOT_COUNT } from "../topology/slots.js";

export interface BootstrapOptions {
  members: readonly ClusterMember[];
  primaries: number;
  replicasPerPrimary: number;
  connector: Connector;
  /** Upper bound for each wait (gossip, slot propagation, replica sync). @default 60000 */
  timeoutMs?: number;
  /** Called with a short line for every step taken, for progress displays and logs. */
  onStep?: (step: string) => void;
  /** The Valkey password, for MIGRATE's AUTH when scaling up moves keys (never logged). */
  password?: string;
}

export interface BootstrapResult {
  /** The plan applied; undefined when the nodes already formed a healthy cluster of this shape. */
  plan: ClusterPlan | undefined;
  /** False when the nodes already formed a healthy cluster of this shape. */
  changed: boolean;
  /** Member id -> cluster node id (40 hex chars). */
  nodeIds: Record<string, string>;
  /** What was done, in order. */
  steps: string[];
}

/** One member's own view: its node id and CLUSTER INFO fields. */
interface MemberState {
  member: ClusterMember;
  client: Redis;
  nodeId: string;
  info: Map<string, string>;
}

export class BootstrapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BootstrapError";
  }
}

/** Reads every member's id and CLUSTER INFO concurrently; names every member that fails, in member order. */
async function readState(pool: ConnectionPool, members: readonly ClusterMember[]): Promise<MemberState[]> {
  const results = await Promise.allSettled(
    members.map(async (member) => {
      const client = await pool.get(member.endpoint);
      let nodeId: string;
      let infoText: string;
      try {
        [nodeId, infoText] = await Promise.all([
          client.call("CLUSTER", "MYID") as Promise<string>,
          client.call("CLUSTER", "INFO") as Promise<string>,
        ]);
      } catch (err) {
        const msg = (err as Error).message;
        throw new BootstrapError(
          /cluster support disabled/i.test(msg)
            ? `${member.id} is not cluster-enabled (cluster-enabled yes is missing from its config)`
            : `${member.id}: ${msg}`,
        );
      }
      return { member, client, nodeId, info: parseInfo(infoText) };
    }),
  );
  const failed = results
    .filter((r): r is PromiseRejectedResult => r.status === "rejected")
    .map((r) => r.reason as Error);
  if (failed.length === 1) throw failed[0] as Error;
  if (failed.length > 1) throw new BootstrapError(failed.map((e) => e.message).join("; "));
  return results.map((r) => (r as PromiseFulfilledResult<MemberState>).value);
}

const num = (info: Map<string, string>, key: string): number => Number(info.get(key) ?? "NaN");

function isFresh(s: MemberState): boolean {
  return num(s.info, "cluster_known_nodes") === 1 && num(s.info, "cluster_slots_assigned") === 0;
}

/** Every member's CLUSTER INFO shows the full, healthy cluster of this shape. */
function isFormed(states: readonly MemberState[], primaries: number): boolean {
  return states.every(
    (s) =>
      s.info.get("cluster_state") === "ok" &&
      num(s.info, "cluster_known_nodes") === states.length &&
      num(s.info, "cluster_slots_assigned") === CLUSTER_SLOT_COUNT &&
      num(s.info, "cluster_slots_ok") === CLUSTER_SLOT_COUNT &&
      num(s.info, "cluster_size") === primaries,
  );
}

/** Lists the members whose replication role or link does not match the plan yet. */
async function replicationLag(states: readonly MemberState[], plan: ClusterPlan): Promise<string[]> {
  const byId = new Map(states.map((s) => [s.member.id, s]));
  const pending: string[] = [];
  await Promise.all(
    plan.shards.flatMap((shard) =>
      shard.replicas.map(async (r) => {
        const s = byId.get(r.id) as MemberState;
        const answer = await s.client.info("replication").then(
          (text) => text,
          (err: Error) => err,
        );
        if (answer instanceof Error) return void pending.push(`${r.id} (${answer.message})`);
        const info = parseInfo(answer);
        if (info.get("role") !== "slave" || info.get("master_link_status") !== "up") {
          pending.push(`${r.id} (role=${info.get("role") ?? "?"}, link=${info.get("master_link_status") ?? "-"})`);
        }
      }),
    ),
  );
  return pending.sort();
}

/** A CLUSTER NODES line's fields name a replica attached to a primary (flags contain `slave`, the primary id set). */
const listsAsReplica = (f: readonly string[]): boolean =>
  (f[2] ?? "").split(",").includes("slave") && (f[3] ?? "-") !== "-";

/** Replicas attached to a primary in one node's CLUSTER NODES view: lets the executor wait until every node agrees. */
function replicasInView(clusterNodes: string): number {
  return clusterNodes.split("\n").filter((line) => listsAsReplica(line.trim().split(" "))).length;
}

/**
 * The planned replicas a member's CLUSTER NODES view does not list as replicas, each with what the view says of it
 * (`member-7 as master,noaddr disconnected`, or `member-7 not listed`): first `limit`, then how many more.
 */
export function replicasNotSeen(
  clusterNodes: string,
  replicas: readonly { nodeId: string; id: string }[],
  limit = 3,
): string[] {
  const lines = new Map(
    clusterNodes
      .split("\n")
      .map((l) => l.trim().split(" "))
      .filter((f) => f.length >= 8)
      .map((f) => [f[0] as string, f]),
  );
  const missing = replicas.flatMap((r) => {
    const f = lines.get(r.nodeId);
    if (f === undefined) return [`${r.id} not listed`];
    if (listsAsReplica(f)) return [];
    return [`${r.id} as ${f[2]} (replicaof ${f[3]}) ${f[7]}`];
  });
  return missing.length > limit ? [...missing.slice(0, limit), `${missing.length - limit} more`] : missing;
}

/** Counts replicas whose link to their primary is up, and names those whose link is down. */
async function linkedReplicas(states: readonly MemberState[]): Promise<{ up: number; down: string[] }> {
  const infos = await Promise.all(states.map(async (s) => parseInfo(await s.client.info("replication"))));
  let up = 0;
  const down: string[] = [];
  infos.forEach((info, i) => {
    if (info.get("role") !== "slave") return;
    if (info.get("master_link_status") === "up") up++;
    else down.push(states[i]?.member.id ?? "?");
  });
  return { up, down };
}

/** Applies the plan to fresh nodes; see the module comment for the steps. */
async function bootstrapFresh(
  states: MemberState[],
  plan: ClusterPlan,
  o: BootstrapOptions,
  step: (s: string) => void,
): Promise<void> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const byId = new Map(states.map((s) => [s.member.id, s]));

  // Distinct config epochs up front avoid epoch collisions that gossip would otherwise resolve slowly.
  await setDistinctConfigEpochs(states.map((s) => s.client));

  // Slots first, as valkey-cli does: the MEET handshake then carries them, instead of waiting
  // for gossip rounds to spread them afterwards.
  for (const shard of plan.shards) {
    const s = byId.get(shard.primary.id) as MemberState;
    await s.client.call("CLUSTER", "ADDSLOTSRANGE", String(shard.slots.start), String(shard.slots.end));
    step(`${shard.primary.id} (${shard.primary.zone}) owns slots ${shard.slots.start}-${shard.slots.end}`);
  }

  const [first, ...rest] = states;
  if (first === undefined) throw new BootstrapError("no members to bootstrap");
  await meetAndWait(first, rest, states, timeoutMs);
  step(`met ${rest.length} node${rest.length === 1 ? "" : "s"} from ${first.member.id}`);
  step(`all ${states.length} nodes know each other`);

  // Every replica at once: each waits only for its own primary to be known to it (one at a time, 100
  // replicas took 30 s on a starved machine, each REPLICATE answered in ~0.3 s).
  await Promise.all(
    plan.shards.flatMap((shard) => {
      const primaryId = (byId.get(shard.primary.id) as MemberState).nodeId;
      return shard.replicas.map(async (r) => {
        const s = byId.get(r.id) as MemberState;
        await replicateWhenKnown(s, primaryId, shard.primary.id, timeoutMs, (m) => new BootstrapError(m));
        step(`${r.id} (${r.zone}) replicates ${shard.primary.id} (${shard.primary.zone})`);
      });
    }),
  );
}

/** Waits until every member sees a healthy cluster of the planned shape with replicas linked. */
async function waitHealthy(states: MemberState[], plan: ClusterPlan, o: BootstrapOptions): Promise<void> {
  const byId = new Map(states.map((s) => [s.member.id, s]));
  const plannedReplicas = plan.shards.flatMap((sh) =>
    sh.replicas.map((r) => ({ id: r.id, nodeId: byId.get(r.id)?.nodeId ?? "?" })),
  );
  await pollUntil(
    async () => {
      const infos = await askAll(states, async (c) => parseInfo(String(await c.call("CLUSTER", "INFO"))));
      const bad = states
        .map((s, i) => {
          const answer = infos[i] as Answer<Map<string, string>>;
          if (!answer.ok) return answer.error;
          const info = answer.value;
          const ok =
            info.get("cluster_state") === "ok" &&
            num(info, "cluster_slots_assigned") === CLUSTER_SLOT_COUNT &&
            num(info, "cluster_slots_ok") === CLUSTER_SLOT_COUNT &&
            num(info, "cluster_size") === plan.shards.length;
          return ok
            ? undefined
            : `${s.member.id} state=${info.get("cluster_state")} slots=${info.get("cluster_slots_assigned")}/${info.get("cluster_slots_ok")} size=${info.get("cluster_size")}`;
        })
        .filter((x): x is string => x !== undefined);
      if (bad.length > 0) return bad.join("; ");
      const wantReplicas = plan.shards.reduce((a, sh) => a + sh.replicas.length, 0);
      const views = await askAll(states, async (c) => String(await c.call("CLUSTER", "NODES")));
      const disagree = states
        .map((s, i) => {
          const view = views[i] as Answer<string>;
          if (!view.ok) return view.error;
          const seen = replicasInView(view.value);
          if (seen === wantReplicas) return undefined;
          const why = replicasNotSeen(view.value, plannedReplicas);
          return `${s.member.id} sees ${seen}/${wantReplicas} replicas${why.length > 0 ? ` (not as replicas: ${why.join(", ")})` : ""}`;
        })
        .filter((x): x is string => x !== undefined);
      if (disagree.length > 0) return disagree.join("; ");
      const pending = await replicationLag(states, plan);
      return pending.length === 0 ? true : `replicas not linked: ${pending.join(", ")}`;
    },
    {
      timeoutMs: o.timeoutMs ?? 60_000,
      what: "cluster_state:ok with all 16384 slots on every node and every replica linked",
    },
  );
}

/** Bootstraps (or confirms) a cluster of `primaries` x (1 + `replicasPerPrimary`) over `members`. */
export async function bootstrapCluster(o: BootstrapOptions): Promise<BootstrapResult> {
  checkMembers(o.members);
  const plan = planCluster({
    nodes: o.members.map((m) => ({ id: m.id, zone: m.zone })),
    primaries: o.primaries,
    replicasPerPrimary: o.replicasPerPrimary,
  });
  const steps: string[] = [];
  const step = (s: string): void => {
    steps.push(s);
    o.onStep?.(s);
  };
  const pool = new ConnectionPool(o.connector);
  try {
    const states = await readState(pool, o.members);
    const nodeIds = Object.fromEntries(states.map((s) => [s.member.id, s.nodeId]));
    if (isFormed(states, o.primaries)) {
      const links = await linkedReplicas(states);
      if (links.down.length === 0 && links.up === o.primaries * o.replicasPerPrimary) {
        step("cluster already formed with this shape; nothing to do");
        return { plan: undefined, changed: false, nodeIds, steps };
      }
    }
    const notFresh = states.filter((s) => !isFresh(s));
    const existing = new Set(notFresh.map((s) => s.member.id));
    // Before the scale-up check: a lost primary not yet replaced would look like fewer primaries.
    if (notFresh.length > 0 && (await isHalfHealed(states, o))) {
      // A member lost its volume (new node id): forget the old id, meet and attach it (cluster-reconcile.ts).
      const fail = (m: string): Error => new BootstrapError(m);
      await reconcileLostMembers(states, { ...o, timeoutMs: o.timeoutMs ?? 60_000, step, fail });
      return { plan: undefined, changed: true, nodeIds, steps };
    }
    if (notFresh.length > 0 && (await isScaleUp(states, existing, o.primaries))) {
      const timeoutMs = o.timeoutMs ?? 60_000;
      const fail = (m: string): Error => new BootstrapError(m);
      const scaled = await scaleUp({ ...o, members: states, existing, timeoutMs, step, fail });
      await waitHealthy(states, scaled, o);
      step(`cluster_state:ok: scaled up to ${scaled.shards.length} primaries, ${o.replicasPerPrimary} replica(s) each`);
      return { plan: scaled, changed: true, nodeIds, steps };
    }
    if (notFresh.length > 0) {
      throw new BootstrapError(
        `cannot bootstrap: ${notFresh
          .map(
            (s) =>
              `${s.member.id} (knows ${s.info.get("cluster_known_nodes")} nodes, ` +
              `${s.info.get("cluster_slots_assigned")} slots)`,
          )
          .join(", ")} already belong to a cluster that does not have ` +
          `the wanted shape (${o.primaries} primaries x ${o.replicasPerPrimary} replicas); reconcile it or reset the nodes`,
      );
    }
    for (const w of plan.warnings) step(`warning: ${w}`);
    await bootstrapFresh(states, plan, o, step);
    await waitHealthy(states, plan, o);
    step(`cluster_state:ok: ${plan.shards.length} primaries, ${o.replicasPerPrimary} replica(s) each, all 16384 slots`);
    return { plan, changed: true, nodeIds, steps };
  } finally {
    await pool.closeAll();
  }
}
