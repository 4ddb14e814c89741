/**
 * Reconciling a cluster that lost a member's volume (what `pulumi up` runs through the
 * ClusterBootstrap when the members' own rejoin script has not finished, or was not there).
 *
 * The state it repairs: every slot is owned by a current member and the wanted number of
 * primaries own them, but some views still list node ids that no current member has (a member
 * restarted with an empty data dir got a new id; its old id is `fail`), and some members are
 * fresh (know only themselves) or slot-less primaries (met but not replicating).
 *
 * What it does, in order:
 * 1. a stale id that still owns slots is refused: a primary that lost its volume must first be
 *    replaced by its replica (failover after cluster-node-timeout); if it is flagged `fail` and no
 *    replica of it is left, its slots are LOST and the error says so (an operator decides);
 * 2. a stale id not yet flagged `fail` is refused too ("retry"): an id is forgotten only once the
 *    cluster agrees it is gone, and only because no member (each asked CLUSTER MYID) has it;
 * 3. `CLUSTER FORGET <stale id>` on EVERY member that lists it (FORGET bans the id on that node
 *    for 60 s; a node that kept it would gossip it back);
 * 4. `CLUSTER MEET` of the fresh members from a formed one, then waits until all know all;
 * 5. each slot-less primary `CLUSTER REPLICATE`s the primary with the fewest replicas, preferring
 *    one in another zone than its own; no primary moves, so no zone gains primaries;
 * 6. waits until every member sees all slots ok and every wanted replica is linked;
 * 7. when the failover left one zone with more than half of the primaries, a linked replica in a
 *    zone that stays at half or below takes its primary's place by `CLUSTER FAILOVER` (planned,
 *    waits for the replica to catch up: no acknowledged write lost), as the pods' AZ failback does.
 */
import type { Redis } from "ioredis";
import { parseClusterNodes, type ClusterNodeEntry } from "../topology/cluster-nodes-parser.js";
import { parseInfo } from "../topology/info.js";
import { CLUSTER_SLOT_COUNT } from "../topology/slots.js";
import { pollUntil } from "../util/poll-until.js";
import { meetAndWait, replicateWhenKnown } from "./cluster-gossip.js";
import type { ClusterMember } from "./cluster-member.js";

export interface ReconcileMember {
  member: ClusterMember;
  client: Redis;
  nodeId: string;
  info: Map<string, string>;
}

export interface ReconcileOptions {
  primaries: number;
  replicasPerPrimary: number;
  timeoutMs: number;
  step: (s: string) => void;
  fail: (message: string) => Error;
}

const num = (info: Map<string, string>, key: string): number => Number(info.get(key) ?? "NaN");
const isFresh = (s: ReconcileMember): boolean =>
  num(s.info, "cluster_known_nodes") === 1 && num(s.info, "cluster_slots_assigned") === 0;
const slotText = (n: ClusterNodeEntry): string =>
  n.slots.map((r) => (r.start === r.end ? `${r.start}` : `${r.start}-${r.end}`)).join(",");

async function views(states: readonly ReconcileMember[]): Promise<ClusterNodeEntry[][]> {
  return Promise.all(states.map(async (s) => parseClusterNodes(String(await s.client.call("CLUSTER", "NODES"))).nodes));
}

/**
 * Whether the members look like a cluster that lost member volumes: some members already formed
 * a cluster whose slots are all assigned, and some id in their views is no current member's, or
 * some member is fresh or a slot-less primary while fewer replicas than wanted exist.
 */
export async function isHalfHealed(
  states: readonly ReconcileMember[],
  o: Pick<ReconcileOptions, "primaries">,
): Promise<boolean> {
  const formed = states.filter((s) => !isFresh(s));
  if (formed.length === 0 || !formed.every((s) => num(s.info, "cluster_slots_assigned") === CLUSTER_SLOT_COUNT))
    return false;
  const ids = new Set(states.map((s) => s.nodeId));
  const all = await views(formed);
  const first = all[0] ?? [];
  const stale = all.some((v) => v.some((n) => !ids.has(n.id)));
  const slotless = first.some((n) => n.role === "primary" && n.slots.length === 0 && ids.has(n.id));
  const owners = first.filter((n) => n.role === "primary" && n.slots.length > 0).length;
  return (stale || slotless || formed.length < states.length) && owners === o.primaries;
}

/** Repairs a half-healed cluster (see the module comment); throws o.fail(...) where it must not. */
export async function reconcileLostMembers(states: readonly ReconcileMember[], o: ReconcileOptions): Promise<void> {
  const ids = new Set(states.map((s) => s.nodeId));
  const formed = states.filter((s) => !isFresh(s));
  const all = await views(formed);
  const stale = new Map<string, ClusterNodeEntry>();
  for (const v of all) for (const n of v) if (!ids.has(n.id) && !stale.has(n.id)) stale.set(n.id, n);
  for (const [id, n] of stale) {
    const name = `${id.slice(0, 8)}… (${n.hostname ?? n.endpoint?.host ?? "no address"})`;
    const owning = all.flat().find((e) => e.id === id && e.slots.length > 0);
    if (owning !== undefined) {
      const replicas = all.flat().filter((e) => e.primaryId === id && !e.failed && ids.has(e.id));
      if (owning.failed && replicas.length === 0) {
        throw o.fail(
          `${name} is no current member's node id, is marked fail and still owns slots ${slotText(owning)} with no replica to take them over: ` +
            "those slots are LOST (their data was only on that node); not forgetting it. Restore the data, or accept the loss and assign the slots (CLUSTER ADDSLOTSRANGE) yourself",
        );
      }
      throw o.fail(
        `${name} is no current member's node id but still owns slots ${slotText(owning)}: wait for its replica to take over (cluster-node-timeout), then retry`,
      );
    }
    if (!all.some((v) => v.some((e) => e.id === id && e.failed))) {
      throw o.fail(
        `${name} is no current member's node id but is not marked fail yet: retry after cluster-node-timeout`,
      );
    }
  }
  for (const id of stale.keys()) {
    await Promise.all(
      formed.map(async (s) => {
        try {
          await s.client.call("CLUSTER", "FORGET", id);
        } catch (err) {
          if (!/unknown node/i.test((err as Error).message))
            throw o.fail(`CLUSTER FORGET ${id} on ${s.member.id}: ${(err as Error).message}`);
        }
      }),
    );
    o.step(`forgot the lost node id ${id} on ${formed.length} member(s)`);
  }
  const fresh = states.filter(isFresh);
  const from = formed[0];
  if (from === undefined) throw o.fail("no formed member to reconcile from");
  if (fresh.length > 0) {
    await meetAndWait(from, fresh, states, o.timeoutMs);
    o.step(`met ${fresh.map((s) => s.member.id).join(", ")} from ${from.member.id}`);
  }
  await pollUntil(
    async () => {
      const v = parseClusterNodes(String(await from.client.call("CLUSTER", "NODES"))).nodes;
      return v.filter((n) => !n.handshake).length === states.length
        ? true
        : `${from.member.id} knows ${v.length}/${states.length}`;
    },
    { timeoutMs: o.timeoutMs, what: "every member in the reconciled cluster's view" },
  );
  const view = parseClusterNodes(String(await from.client.call("CLUSTER", "NODES"))).nodes;
  const byNode = new Map(states.map((s) => [s.nodeId, s]));
  const primaries = view.filter((n) => n.role === "primary" && n.slots.length > 0);
  const count = new Map(primaries.map((p) => [p.id, view.filter((n) => n.primaryId === p.id && !n.failed).length]));
  for (const n of view.filter((e) => e.role === "primary" && e.slots.length === 0)) {
    const s = byNode.get(n.id);
    if (s === undefined) continue;
    const zoneOf = (id: string): string | undefined => byNode.get(id)?.member.zone;
    const target = [...primaries].sort(
      (a, b) =>
        (count.get(a.id) ?? 0) - (count.get(b.id) ?? 0) ||
        Number(zoneOf(a.id) === s.member.zone) - Number(zoneOf(b.id) === s.member.zone),
    )[0];
    if (target === undefined) throw o.fail("no primary owns slots");
    const label = byNode.get(target.id)?.member.id ?? target.id;
    await replicateWhenKnown(s, target.id, label, o.timeoutMs, o.fail);
    count.set(target.id, (count.get(target.id) ?? 0) + 1);
    o.step(`${s.member.id} (${s.member.zone}) replicates ${label} (${zoneOf(target.id) ?? "?"})`);
  }
  await waitReconciled(states, o);
  await spreadPrimaries(states, from, o);
  o.step(`cluster_state:ok: reconciled to ${o.primaries} primaries, ${o.replicasPerPrimary} replica(s) each`);
}

/** Step 7 of the module comment: no zone keeps a primary majority when a replica can fix it */
async function spreadPrimaries(
  states: readonly ReconcileMember[],
  from: ReconcileMember,
  o: ReconcileOptions,
): Promise<void> {
  const byNode = new Map(states.map((s) => [s.nodeId, s]));
  for (let round = 0; round < states.length; round++) {
    const view = parseClusterNodes(String(await from.client.call("CLUSTER", "NODES"))).nodes;
    const primaries = view.filter((n) => n.role === "primary" && n.slots.length > 0);
    const zone = (id: string): string => byNode.get(id)?.member.zone ?? "";
    const perZone = new Map<string, number>();
    for (const p of primaries) perZone.set(zone(p.id), (perZone.get(zone(p.id)) ?? 0) + 1);
    const total = primaries.length;
    const crowded = primaries.filter((p) => 2 * (perZone.get(zone(p.id)) ?? 0) > total);
    if (crowded.length === 0) return;
    const move = crowded
      .flatMap((p) => view.filter((r) => r.primaryId === p.id && !r.failed).map((r) => ({ p, r })))
      .find(({ r }) => byNode.has(r.id) && 2 * ((perZone.get(zone(r.id)) ?? 0) + 1) <= total);
    if (move === undefined) {
      o.step(
        `warning: zone ${zone(crowded[0]?.id ?? "")} holds more than half of the primaries and no replica can take one over`,
      );
      return;
    }
    const replica = byNode.get(move.r.id) as ReconcileMember;
    await replica.client.call("CLUSTER", "FAILOVER");
    await pollUntil(
      async () =>
        parseInfo(await replica.client.info("replication")).get("role") === "master" ? true : "still a replica",
      {
        timeoutMs: o.timeoutMs,
        what: `${replica.member.id} to take over by CLUSTER FAILOVER`,
      },
    );
    o.step(
      `${replica.member.id} (${replica.member.zone}) took over from ${byNode.get(move.p.id)?.member.id ?? move.p.id} (${zone(move.p.id)}): no zone holds a primary majority`,
    );
    // The demoted primary turns replica a moment later: settle before looking again.
    await waitReconciled(states, o);
  }
}

/**
 * Every member: all slots ok, all members known, exactly `primaries` primaries in its view; every wanted replica
 * linked.
 */
async function waitReconciled(states: readonly ReconcileMember[], o: ReconcileOptions): Promise<void> {
  const want = o.primaries * o.replicasPerPrimary;
  await pollUntil(
    async () => {
      const infos = await Promise.all(
        states.map(
          async (s) =>
            [
              parseInfo(String(await s.client.call("CLUSTER", "INFO"))),
              parseInfo(await s.client.info("replication")),
            ] as const,
        ),
      );
      const bad = infos.findIndex(
        ([c]) =>
          c.get("cluster_state") !== "ok" ||
          num(c, "cluster_slots_ok") !== CLUSTER_SLOT_COUNT ||
          num(c, "cluster_known_nodes") !== states.length,
      );
      if (bad >= 0) return `${states[bad]?.member.id} is not ok with all ${states.length} nodes yet`;
      const linked = infos.filter(([, r]) => r.get("role") === "slave" && r.get("master_link_status") === "up").length;
      const all = await views(states);
      const split = all.findIndex((v) => v.filter((n) => n.role === "primary" && !n.failed).length !== o.primaries);
      if (split >= 0) return `${states[split]?.member.id} does not see ${o.primaries} primaries yet`;
      return linked === want ? true : `${linked}/${want} replicas linked`;
    },
    { timeoutMs: o.timeoutMs, what: "the reconciled cluster: all slots ok on every member and every replica linked" },
  );
}
