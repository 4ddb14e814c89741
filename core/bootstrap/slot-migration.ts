/**
 * Moving slots with their keys between primaries of a running cluster, shared by the scale-up
 * and the scale-in. Two ways:
 * - atomic slot migration (Valkey 9.0+, `CLUSTER MIGRATESLOTS`): the source streams the slots'
 *   keys and writes to the target and hands the slots over in one step; clients never see
 *   ASK redirections or half-moved slots, and a failed migration leaves the slots with the
 *   source. Used when the source node knows the command (`COMMAND INFO`).
 * - MIGRATE-based resharding (any version): per slot, CLUSTER SETSLOT IMPORTING on the target,
 *   MIGRATING on the source, MIGRATE of its keys in batches, SETSLOT NODE on both.
 * Both resume: a slot a previous run left MIGRATING or IMPORTING (`[slot->-target]`,
 * `[slot-<-source]` in a node's own CLUSTER NODES line) is finished towards the same target first; an atomic migration
 * still
 * running on the source is waited for before a new one starts.
 */
import type { Redis } from "ioredis";
import { pollUntil, sleep } from "../util/poll-until.js";
import type { ClusterMember } from "./cluster-member.js";
import type { SlotMove } from "./slot-moves.js";
import { groupMoves } from "./slot-moves.js";
import { formatSlotRange } from "../topology/slots.js";

/** Slots moved concurrently on the MIGRATE path. */
const SLOTS_IN_FLIGHT = 256;

export interface ScaleMember {
  member: ClusterMember;
  client: Redis;
  nodeId: string;
}

export type SlotMigrationMethod = "atomic" | "migrate";

/** `atomic` when the node knows CLUSTER MIGRATESLOTS (Valkey 9.0+), else `migrate`. */
export async function detectSlotMigration(client: Redis): Promise<SlotMigrationMethod> {
  const info = (await client.call("COMMAND", "INFO", "CLUSTER|MIGRATESLOTS")) as unknown[];
  return Array.isArray(info) && info[0] !== null && info[0] !== undefined ? "atomic" : "migrate";
}

/** The slots `node` itself lists as MIGRATING (`[slot->-target]`) or IMPORTING (`[slot-<-source]`). */
export async function openSlots(node: ScaleMember): Promise<{ slot: number; fromNodeId: string; toNodeId: string }[]> {
  const view = (await node.client.call("CLUSTER", "NODES")) as string;
  const mine = view.split("\n").find((l) => l.split(" ")[2]?.split(",").includes("myself")) ?? "";
  return [...mine.matchAll(/\[(\d+)-([<>])-([0-9a-f]{40})\]/g)].map((m) =>
    m[2] === ">"
      ? { slot: Number(m[1]), fromNodeId: node.nodeId, toNodeId: m[3] as string }
      : { slot: Number(m[1]), fromNodeId: m[3] as string, toNodeId: node.nodeId },
  );
}

/**
 * One command of a slot move, again while the node answers NOREPLICAS (Valkey 8+ replicates
 * CLUSTER SETSLOT and answers it only once its replicas acked it, NOREPLICAS after its timeout: a
 * replica in a full sync, such as a drained primary that just became one, or a slow machine),
 * TRYAGAIN, or CLUSTERDOWN (a node's view while the ownership of a moved slot spreads); up to
 * 30 s. Every command of a move is idempotent. The error names the slot, the nodes and the step;
 * it is a new Error, not the ReplyError, which carries the command's argv (MIGRATE's AUTH
 * password included).
 */
async function patiently(what: string, call: () => Promise<unknown>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await call();
      return;
    } catch (e) {
      if (attempt >= 300 || !/NOREPLICAS|TRYAGAIN|CLUSTERDOWN/.test((e as Error).message))
        throw new Error(`${what}: ${(e as Error).message}`, { cause: e });
      await sleep(100);
    }
  }
}

/** Moves one slot with its keys from `from` to `to` (MIGRATE path); safe to repeat after an interruption. */
export async function moveSlot(
  from: ScaleMember,
  to: ScaleMember,
  slot: number,
  password: string | undefined,
): Promise<void> {
  const s = String(slot);
  const what = (step: string): string => `slot ${s} ${from.member.id} -> ${to.member.id}, ${step}`;
  const setSlot = (node: ScaleMember, step: string, args: readonly string[]): Promise<void> =>
    patiently(what(step), () => node.client.call("CLUSTER", "SETSLOT", ...args));
  try {
    await setSlot(to, "SETSLOT IMPORTING", [s, "IMPORTING", from.nodeId]);
  } catch (err) {
    // A previous run handed the slot to the target but stopped before the source learned it.
    if (!/already the owner/i.test((err as Error).message)) throw err;
    await setSlot(from, "SETSLOT NODE (source)", [s, "NODE", to.nodeId]).catch(ignoreDemoted);
    return;
  }
  await setSlot(from, "SETSLOT MIGRATING", [s, "MIGRATING", to.nodeId]);
  for (;;) {
    const keys = (await from.client.call("CLUSTER", "GETKEYSINSLOT", s, "100")) as string[];
    if (keys.length === 0) break;
    const auth = password === undefined ? [] : ["AUTH", password];
    await patiently(what("MIGRATE"), () =>
      from.client.call(
        "MIGRATE",
        to.member.meet.ip,
        String(to.member.meet.port),
        "",
        "0",
        "10000",
        ...auth,
        "KEYS",
        ...keys,
      ),
    );
  }
  await setSlot(to, "SETSLOT NODE (target)", [s, "NODE", to.nodeId]);
  await setSlot(from, "SETSLOT NODE (source)", [s, "NODE", to.nodeId]).catch(ignoreDemoted);
}

/**
 * A source whose last slot the target has claimed turns itself into a replica (replica
 * migration) before its own SETSLOT NODE arrives: the slot is the target's either way.
 */
function ignoreDemoted(err: unknown): void {
  if (!/only with masters/i.test((err as Error).message)) throw err;
}

export interface MigrateOptions {
  /** Member id -> member. */
  get: (id: string) => ScaleMember;
  method: SlotMigrationMethod;
  /** The Valkey password, for MIGRATE's AUTH (never logged). */
  password?: string;
  timeoutMs: number;
  step: (s: string) => void;
  fail: (message: string) => Error;
}

/**
 * Finishes the slot moves an interrupted run left open on `nodes` (a slot MIGRATING on its
 * source, IMPORTING on its target, or both), each towards the target it names.
 */
export async function finishInterruptedMoves(
  nodes: readonly ScaleMember[],
  all: readonly ScaleMember[],
  o: MigrateOptions,
): Promise<number> {
  const byNodeId = new Map(all.map((m) => [m.nodeId, m]));
  const open = new Map<number, { fromNodeId: string; toNodeId: string }>();
  for (const node of nodes) for (const { slot, ...move } of await openSlots(node)) open.set(slot, move);
  for (const [slot, { fromNodeId, toNodeId }] of open) {
    const [from, to] = [byNodeId.get(fromNodeId), byNodeId.get(toNodeId)];
    if (from === undefined || to === undefined)
      throw o.fail(
        `slot ${slot} is being moved from node ${fromNodeId} to node ${toNodeId}, and one of them is no member`,
      );
    await moveSlot(from, to, slot, o.password);
  }
  if (open.size > 0) o.step(`finished ${open.size} slot move(s) an earlier run left half done`);
  return open.size;
}

const TERMINAL = new Set(["success", "failed", "cancelled"]);

/** The node's atomic slot migrations (CLUSTER GETSLOTMIGRATIONS) as field maps. */
async function slotMigrations(node: ScaleMember): Promise<Map<string, string>[]> {
  const rows = (await node.client.call("CLUSTER", "GETSLOTMIGRATIONS")) as unknown[][];
  return rows.map((r) => {
    const m = new Map<string, string>();
    for (let i = 0; i + 1 < r.length; i += 2) m.set(String(r[i]), String(r[i + 1]));
    return m;
  });
}

/** Waits until `node` runs no atomic slot migration; throws naming a failed one started at or after `since` (s). */
async function waitMigrationsDone(node: ScaleMember, since: number, o: MigrateOptions): Promise<void> {
  await pollUntil(
    async () => {
      const rows = await slotMigrations(node);
      const failed = rows.find(
        (r) =>
          Number(r.get("create_time") ?? 0) >= since && (r.get("state") === "failed" || r.get("state") === "cancelled"),
      );
      if (failed !== undefined) {
        throw o.fail(
          `atomic slot migration of ${failed.get("slot_ranges")} from ${node.member.id} to node ${failed.get("target_node")} ` +
            `${failed.get("state")}: ${failed.get("message") || "no message"}; the slots stay with ${node.member.id}, run again to retry`,
        );
      }
      const running = rows.filter((r) => !TERMINAL.has(r.get("state") ?? ""));
      return running.length === 0
        ? true
        : `${node.member.id} still migrating ${running.map((r) => `${r.get("slot_ranges")} (${r.get("state")})`).join(", ")}`;
    },
    { timeoutMs: o.timeoutMs, what: `the atomic slot migrations on ${node.member.id} to finish` },
  );
}

/** Applies `moves` with the chosen method; returns after every slot is owned by its target. */
export async function migrateSlots(moves: readonly SlotMove[], o: MigrateOptions): Promise<void> {
  if (moves.length === 0) return;
  if (o.method === "migrate") {
    // Many slots at a time: each slot's steps are ordered, different slots are independent. (Valkey
    // 8+ primaries hold each SETSLOT until their replicas ack it, which paces one connection.)
    for (let i = 0; i < moves.length; i += SLOTS_IN_FLIGHT) {
      await Promise.all(
        moves.slice(i, i + SLOTS_IN_FLIGHT).map((m) => moveSlot(o.get(m.from), o.get(m.to), m.slot, o.password)),
      );
      o.step(`moved ${Math.min(moves.length, i + SLOTS_IN_FLIGHT)}/${moves.length} slots (MIGRATE)`);
    }
    return;
  }
  const groups = groupMoves(moves);
  // Every source at once: each streams its own slots (on EKS each is its own node), so the moving takes about one
  // source's share however many primaries there are; one source after another made it grow with their number.
  await Promise.all(
    [...new Set(groups.map((g) => g.from))].map((from) =>
      migrateFrom(
        from,
        groups.filter((g) => g.from === from),
        o,
      ),
    ),
  );
}

/** One source's atomic slot migrations (one CLUSTER MIGRATESLOTS for all its targets), until they end. */
async function migrateFrom(from: string, mine: ReturnType<typeof groupMoves>, o: MigrateOptions): Promise<void> {
  const source = o.get(from);
  // One an interrupted run started may still be running on the server: let it end first.
  await waitMigrationsDone(source, Number.POSITIVE_INFINITY, o);
  const args = mine.flatMap((g) => [
    "SLOTSRANGE",
    ...g.ranges.flatMap((r) => [String(r.start), String(r.end)]),
    "NODE",
    o.get(g.to).nodeId,
  ]);
  const since = Math.floor(Date.now() / 1000) - 1;
  await source.client.call("CLUSTER", "MIGRATESLOTS", ...args);
  await waitMigrationsDone(source, since, o);
  for (const g of mine)
    o.step(`${from} -> ${g.to}: ${g.ranges.map(formatSlotRange).join(" ")} (atomic slot migration)`);
}
