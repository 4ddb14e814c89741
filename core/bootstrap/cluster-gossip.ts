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

/** MEETs every node of `others` from `from`, then waits until all of `all` know each other. */
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
  await pollUntil(
    async () => {
      const views = await Promise.all(all.map(async (s) => (await s.client.call("CLUSTER", "NODES")) as string));
      const behind = all
        .map((s, i) => {
          const lines = (views[i] ?? "").split("\n").filter((l) => l.trim() !== "");
          const settled = lines.filter((l) => !/handshake|noaddr/.test(l)).length;
          return settled === n ? undefined : `${s.member.id} knows ${settled}/${n}`;
        })
        .filter((x): x is string => x !== undefined);
      return behind.length === 0 ? true : behind.join(", ");
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
        // The replica may not have learned the primary's role yet; anything else is fatal.
        if (/unknown node|not a master|only replicate a master/i.test(msg)) return msg;
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
