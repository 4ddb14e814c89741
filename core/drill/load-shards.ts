/**
 * A cluster's shards as the drill load writes to them (per-shard streams, writers.ts), read from
 * one member: the local drills (cluster-target.ts) and the deployed load pod (load-main.ts) use
 * the same reading. No process, file or pod is touched here: a member's address in, its view out.
 */
import { Redis } from "ioredis";
import { parseClusterNodes } from "../topology/cluster-nodes-parser.js";
import { openClient } from "../topology/connector.js";
import { pickTag, shardLabel, type LoadShard } from "./writers.js";

export type ClusterNodes = ReturnType<typeof parseClusterNodes>["nodes"];

/** One member's CLUSTER NODES through a short-lived connection (no retries); throws when it does not answer. */
export async function clusterNodesOf(
  host: string,
  port: number,
  password: string | undefined,
  connectTimeout: number,
  commandTimeout: number,
): Promise<ClusterNodes> {
  const c = new Redis({
    host,
    port,
    password,
    connectTimeout,
    commandTimeout,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    lazyConnect: true,
  });
  c.on("error", () => undefined);
  try {
    await c.connect();
    return parseClusterNodes(String(await c.call("CLUSTER", "NODES"))).nodes;
  } finally {
    c.disconnect();
  }
}

/**
 * The shards the drill load writes to, as the member at host:port sees them: each primary
 * serving slots is a shard (named by its slot ranges, writers.ts), with its replicas, and a hash
 * tag whose slot, as the server computes it (CLUSTER KEYSLOT), lies in its ranges.
 */
export async function loadShardsOf(
  p: { host: string; port: number },
  password: string | undefined,
): Promise<LoadShard[]> {
  const nodes = await clusterNodesOf(p.host, p.port, password, 1000, 2000);
  const c = await openClient(p.host, p.port, `${p.host}:${p.port}`, { password });
  try {
    const candidates: { tag: string; slot: number }[] = [];
    const shards: LoadShard[] = [];
    for (const primary of nodes.filter((n) => n.role === "primary" && n.slots.length > 0 && !n.failed)) {
      let tag = pickTag(primary.slots, candidates);
      while (tag === undefined && candidates.length < 100_000) {
        const batch = Array.from({ length: 256 }, (_, i) => `t${candidates.length + i}`);
        const slots = await Promise.all(batch.map((t) => c.call("CLUSTER", "KEYSLOT", t)));
        batch.forEach((t, i) => candidates.push({ tag: t, slot: Number(slots[i]) }));
        tag = pickTag(primary.slots, candidates);
      }
      if (tag === undefined)
        throw new Error(`no hash tag found for the shard of ${primary.id} (${shardLabel(primary.slots)})`);
      const replicas = nodes.filter((n) => n.primaryId === primary.id).map((n) => n.id);
      shards.push({
        label: shardLabel(primary.slots),
        tag: tag.tag,
        slot: tag.slot,
        nodeIds: [primary.id, ...replicas],
      });
    }
    return shards;
  } finally {
    c.disconnect();
  }
}
