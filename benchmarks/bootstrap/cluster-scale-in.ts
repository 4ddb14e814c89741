/**
 * Scaling a running cluster in: P primaries × (1 + M) become P' < P, the members in `leaving`
 * (the highest StatefulSet ordinals) go, WITHOUT losing a key. From the live roles, in order:
 * 1. every leaving primary that has a linked replica among the staying nodes hands its shard to
 *    it with `CLUSTER FAILOVER` (coordinated, not FORCE: nothing moves, nothing is lost);
 * 2. (checked first, before anything moves) the data must fit: refused, naming the figures, when
 *    the primaries' data exceeds SCALE_IN_FILL of P' staying members' maxmemory
 *    (scale-in-plan.ts memoryRefusal);
 * 3. P' primaries among the staying ones keep serving (spread over zones); every slot of the
 *    others moves to them with its keys (SETSLOT IMPORTING / MIGRATING, MIGRATE, SETSLOT NODE:
 *    the path scale-up uses; a key being moved answers ASK, the clients follow);
 * 4. the staying non-primaries replicate the kept primaries, M each, another zone first;
 * 5. every leaving node is `CLUSTER RESET HARD` (it forgets the cluster and stops gossiping), and
 *    every staying node `CLUSTER FORGET`s it until none lists it.
 * Each step reads the live cluster, so a run cut short resumes where it stopped. Only then may
 * the caller stop the leaving nodes (shrink the StatefulSet).
 */
import { parseInfo } from "../topology/info.js";
import { parseClusterNodes } from "../topology/cluster-nodes-parser.js";
import { pollUntil } from "../util/poll-until.js";
import { replicateWhenKnown } from "./cluster-gossip.js";
import { currentTopology, moveSlot, SLOTS_IN_FLIGHT, type ScaleMember } from "./cluster-scale.js";
import { chooseKeptPrimaries, memoryRefusal, pairSpares, planSlotDrain } from "./scale-in-plan.js";

export interface ScaleInOptions {
  /** Every member of the cluster now, the leaving ones included. */
  members: readonly ScaleMember[];
  /** Ids of the members that go. */
  leaving: ReadonlySet<string>;
  /** P': primaries after the scale-in. */
  primaries: number;
  replicasPerPrimary: number;
  /** The Valkey password, for MIGRATE's AUTH (never logged). */
  password?: string;
  timeoutMs: number;
  step: (s: string) => void;
}

export interface ScaleInResult {
  /** The primaries that stay, with their slot counts at the end. */
  primaries: { id: string; slots: number }[];
  slotsMoved: number;
  handedOver: string[];
}

const view = async (m: ScaleMember): Promise<string> => (await m.client.call("CLUSTER", "NODES")) as string;
const infoOf = async (m: ScaleMember, section: string): Promise<Map<string, string>> => parseInfo((await m.client.call("INFO", section)) as string);

export async function scaleIn(o: ScaleInOptions): Promise<ScaleInResult> {
  const byId = new Map(o.members.map((m) => [m.member.id, m]));
  const get = (id: string): ScaleMember => {
    const m = byId.get(id);
    if (m === undefined) throw new Error(`scale-in: ${id} is not a member`);
    return m;
  };
  const staying = o.members.filter((m) => !o.leaving.has(m.member.id));
  const first = staying[0];
  if (first === undefined) throw new Error("scale-in: no member stays");
  if (staying.length !== o.primaries * (1 + o.replicasPerPrimary))
    throw new Error(`scale-in: ${staying.length} members stay, ${o.primaries} × (1 + ${o.replicasPerPrimary}) are needed`);

  let topo = currentTopology(await view(first), o.members);
  // 2. The data check, before anything moves: every primary's dataset against P' staying members' maxmemory.
  const data = await Promise.all(
    topo.primaries.map(async (p) => ({ id: p.id, bytes: Number((await infoOf(get(p.id), "memory")).get("used_memory_dataset") ?? 0) })),
  );
  const maxmemory = await Promise.all(
    staying.map(async (m) => ({ id: m.member.id, bytes: Number(((await m.client.call("CONFIG", "GET", "maxmemory")) as string[])[1] ?? 0) })),
  );
  const refused = memoryRefusal(data, [...maxmemory].sort((x, y) => x.bytes - y.bytes).slice(0, o.primaries));
  if (refused !== undefined) throw new Error(refused);

  // 1. Leaving primaries hand over to a staying replica.
  const handedOver: string[] = [];
  const gaveUp = new Set<string>();
  for (const p of topo.primaries.filter((x) => o.leaving.has(x.id))) {
    const r = Object.entries(topo.replicaOf).find(([rid, pid]) => pid === p.id && !o.leaving.has(rid))?.[0];
    if (r === undefined) continue;
    if ((await infoOf(get(r), "replication")).get("master_link_status") !== "up") continue;
    await get(r).client.call("CLUSTER", "FAILOVER");
    await pollUntil(async () => ((await infoOf(get(r), "replication")).get("role") === "master" ? true : `${r} not primary yet`), {
      timeoutMs: o.timeoutMs,
      what: `${r} to take over ${p.id} (CLUSTER FAILOVER)`,
    });
    handedOver.push(`${p.id} -> ${r}`);
    gaveUp.add(p.id);
    o.step(`${p.id} handed its shard to ${r} (CLUSTER FAILOVER)`);
  }
  if (gaveUp.size > 0)
    await pollUntil(
      async () => (currentTopology(await view(first), o.members).primaries.every((p) => !gaveUp.has(p.id)) ? true : "the failovers not seen yet"),
      {
        timeoutMs: o.timeoutMs,
        what: "the staying members to see the hand-overs",
      },
    );
  topo = currentTopology(await view(first), o.members);

  // 3. The primaries that stay, and every other slot moved to them.
  const zoneOf = (id: string): string => get(id).member.zone;
  const targets = chooseKeptPrimaries(
    topo.primaries.filter((p) => !o.leaving.has(p.id)).map((p) => ({ ...p, zone: zoneOf(p.id) })),
    o.primaries,
  );
  const moves = planSlotDrain(topo.primaries, targets);
  for (let i = 0; i < moves.length; i += SLOTS_IN_FLIGHT) {
    await Promise.all(moves.slice(i, i + SLOTS_IN_FLIGHT).map((m) => moveSlot(get(m.from), get(m.to), m.slot, o.password)));
  }
  if (moves.length > 0) o.step(`moved ${moves.length} slots with their keys to ${targets.join(", ")}`);

  // 4. The staying non-primaries replicate the kept primaries.
  const spares = staying
    .filter((m) => !targets.includes(m.member.id))
    .map((m) => ({ id: m.member.id, zone: m.member.zone, replicaOf: topo.replicaOf[m.member.id] }));
  const pairs = pairSpares(
    targets.map((id) => ({ id, zone: zoneOf(id) })),
    spares,
    o.replicasPerPrimary,
  );
  for (const [r, p] of Object.entries(pairs)) {
    if (topo.replicaOf[r] === p) continue;
    await replicateWhenKnown(get(r), get(p).nodeId, p, o.timeoutMs, (msg) => new Error(`scale-in: ${msg}`));
    o.step(`${r} (${zoneOf(r)}) replicates ${p} (${zoneOf(p)})`);
  }

  // 5. The leaving nodes forget the cluster, the staying ones forget them.
  const gone = o.members.filter((m) => o.leaving.has(m.member.id));
  for (const m of gone) {
    await m.client.call("CLUSTER", "RESET", "HARD");
    o.step(`${m.member.id} left the cluster (CLUSTER RESET HARD)`);
  }
  const goneIds = new Set(gone.map((m) => m.nodeId));
  await pollUntil(
    async () => {
      const still: string[] = [];
      for (const s of staying) {
        const known = parseClusterNodes(await view(s)).nodes.filter((n) => goneIds.has(n.id));
        for (const n of known) {
          still.push(`${s.member.id} knows ${n.id.slice(0, 8)}`);
          await s.client.call("CLUSTER", "FORGET", n.id).catch(() => undefined);
        }
      }
      return still.length === 0 ? true : still.join(", ");
    },
    { timeoutMs: o.timeoutMs, intervalMs: 500, what: "every staying member to forget the leaving nodes" },
  );
  await pollUntil(
    async () => {
      const bad = [];
      for (const s of staying) {
        const i = parseInfo((await s.client.call("CLUSTER", "INFO")) as string);
        if (i.get("cluster_state") !== "ok" || Number(i.get("cluster_known_nodes")) !== staying.length)
          bad.push(`${s.member.id}: ${i.get("cluster_state")}, ${i.get("cluster_known_nodes")} known`);
      }
      return bad.length === 0 ? true : bad.join("; ");
    },
    { timeoutMs: o.timeoutMs, what: "cluster_state:ok with only the staying members" },
  );
  o.step(`${gone.length} members left; ${targets.length} primaries stay`);
  const end = currentTopology(await view(first), o.members);
  return { primaries: end.primaries.map((p) => ({ id: p.id, slots: p.slots.length })), slotsMoved: moves.length, handedOver };
}
