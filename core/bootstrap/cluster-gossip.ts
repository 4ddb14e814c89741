/**
 * Cluster steps the bootstrap and the scale-up share: CLUSTER MEET from one node to others and
 * the wait until every node knows every other, and CLUSTER REPLICATE retried until the replica
 * has learned its primary's role.
 */
import type { Redis } from "ioredis";
import { pollUntil } from "../util/poll-until.js";
import type { ClusterMember } from "./cluster-member.js";

export interface GossipNode {
  member: ClusterMember;
  client: Redis;
}

/** One node's answer to a wait's question, or why it gave none (a busy node's timeout: "not yet"). */
export type Answer<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Every node's answer to `ask`, asked at once. A node that does not answer (a command timeout on a
 * starved machine, a connection dropped) is an answer too, named, for the wait to say and poll again:
 * never the end of a bootstrap that would finish a moment later.
 */
export async function askAll<N extends GossipNode, T>(
  nodes: readonly N[],
  ask: (c: Redis) => Promise<T>,
): Promise<Answer<T>[]> {
  return Promise.all(
    nodes.map(async (s) => {
      try {
        return { ok: true as const, value: await ask(s.client) };
      } catch (err) {
        return { ok: false as const, error: `${s.member.id}: ${(err as Error).message}` };
      }
    }),
  );
}

/** The nodes a CLUSTER NODES view lists past their handshake and with an address. */
export function settledNodes(view: string): number {
  return view.split("\n").filter((l) => l.trim() !== "" && !/handshake|noaddr/.test(l)).length;
}

/** The `cluster_known_nodes` of a CLUSTER INFO reply, or -1. */
function knownNodes(info: string): number {
  const m = /^cluster_known_nodes:(\d+)/m.exec(info);
  return m ? Number(m[1]) : -1;
}

/**
 * MEETs every node of `others` from `from`, then waits until all of `all` know each other. Each look
 * asks every node CLUSTER INFO (a few hundred bytes) until each counts every node, and only then
 * CLUSTER NODES (a line per node: N² lines over the cluster, 6 MB a look at 200 nodes) to see none
 * still in its handshake.
 */
export async function meetAndWait(
  from: GossipNode,
  others: readonly GossipNode[],
  all: readonly GossipNode[],
  timeoutMs: number,
): Promise<void> {
  for (const s of others) {
    await from.client.call(
      "CLUSTER",
      "MEET",
      s.member.meet.ip,
      String(s.member.meet.port),
      String(s.member.meet.busPort),
    );
  }
  const n = all.length;
  const behind = <T>(answers: Answer<T>[], ok: (v: T) => number): string[] =>
    answers.flatMap((a, i) => {
      if (!a.ok) return [a.error];
      const known = ok(a.value);
      return known >= n ? [] : [`${all[i]?.member.id} knows ${known}/${n}`];
    });
  await pollUntil(
    async () => {
      const counted = behind(await askAll(all, async (c) => String(await c.call("CLUSTER", "INFO"))), knownNodes);
      if (counted.length > 0) return counted.join(", ");
      const settled = behind(await askAll(all, async (c) => String(await c.call("CLUSTER", "NODES"))), settledNodes);
      return settled.length === 0 ? true : settled.join(", ");
    },
    { timeoutMs, what: "every node to know every other node (CLUSTER MEET gossip)" },
  );
}

/** CLUSTER REPLICATE `primaryNodeId` on `replica`, retried while it has not learned the primary yet. */
export async function replicateWhenKnown(
  replica: GossipNode,
  primaryNodeId: string,
  primaryLabel: string,
  timeoutMs: number,
  fail: (message: string) => Error,
): Promise<void> {
  await pollUntil(
    async () => {
      try {
        await replica.client.call("CLUSTER", "REPLICATE", primaryNodeId);
        return true;
      } catch (err) {
        const msg = (err as Error).message;
        // The replica may not have learned the primary's role yet, or (a starved node) not answered in
        // time: asked again (REPLICATE of the same primary is idempotent); anything else is fatal.
        if (/unknown node|not a master|only replicate a master|timed out/i.test(msg)) return msg;
        throw fail(`CLUSTER REPLICATE on ${replica.member.id}: ${msg}`);
      }
    },
    { timeoutMs, what: `${replica.member.id} to accept CLUSTER REPLICATE ${primaryLabel}` },
  );
}

/**
 * Distinct config epochs (1..n in order) before the members meet: avoids the epoch collisions
 * gossip would otherwise resolve slowly. A node that already has an epoch refuses; that is fine.
 */
export async function setDistinctConfigEpochs(clients: readonly Redis[]): Promise<void> {
  await Promise.all(
    clients.map(async (client, i) => {
      try {
        await client.call("CLUSTER", "SET-CONFIG-EPOCH", String(i + 1));
      } catch (err) {
        if (!/epoch/i.test((err as Error).message)) throw err;
      }
    }),
  );
}
