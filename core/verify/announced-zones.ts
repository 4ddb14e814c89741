/**
 * Zones the nodes announce themselves: Valkey >= 9.1 gossips each node's `availability-zone`
 * config (a setting since 8.1) and reports it in CLUSTER SHARDS (valkey-io/valkey#3156). The verifier prefers these
 * over the zone source (the
 * Kubernetes node labels or a static map), which stays the fallback for nodes that announce none.
 */
import type { Connector } from "../topology/connector.js";
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";

/** `ip:port` -> announced zone, from a CLUSTER SHARDS reply as ioredis returns it. */
export function announcedZones(reply: unknown): Map<string, string> {
  const zones = new Map<string, string>();
  if (!Array.isArray(reply)) return zones;
  for (const shard of reply) {
    if (!Array.isArray(shard)) continue;
    const nodesAt = shard.indexOf("nodes");
    const nodes: unknown = nodesAt >= 0 ? shard[nodesAt + 1] : undefined;
    if (!Array.isArray(nodes)) continue;
    for (const node of nodes) {
      if (!Array.isArray(node)) continue;
      const f = new Map<string, unknown>();
      for (let i = 0; i + 1 < node.length; i += 2) f.set(String(node[i]), node[i + 1]);
      const zone = f.get("availability-zone");
      const ip = f.get("ip");
      const port = f.get("port");
      if (
        typeof zone === "string" &&
        zone !== "" &&
        typeof ip === "string" &&
        ip !== "" &&
        (typeof port === "number" || typeof port === "string")
      ) {
        zones.set(`${ip}:${String(port)}`, zone);
      }
    }
  }
  return zones;
}

/** Announced zones as seen by the first seed that answers CLUSTER SHARDS; empty if none does. */
export async function collectAnnouncedZones(
  connector: Connector,
  seeds: readonly NodeEndpoint[],
): Promise<Map<string, string>> {
  for (const seed of seeds) {
    try {
      const client = await connector.connect(seed);
      try {
        return announcedZones(await client.call("CLUSTER", "SHARDS"));
      } finally {
        client.disconnect();
      }
    } catch {
      /* an older server (no CLUSTER SHARDS) or an unreachable seed: try the next */
    }
  }
  return new Map();
}

/** The zone map the analysis gets: announced zones win, the zone source fills the rest. */
export function mergeZones(
  announced: Map<string, string>,
  fromSource: Map<string, string> | undefined,
): Map<string, string> | undefined {
  if (announced.size === 0) return fromSource;
  return new Map([...(fromSource ?? new Map<string, string>()), ...announced]);
}
