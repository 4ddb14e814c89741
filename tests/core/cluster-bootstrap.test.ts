import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrapCluster } from "../../core/bootstrap/cluster-bootstrap.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { localMember, startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { DirectConnector, openClient } from "../../core/topology/connector.js";
import { parseInfo } from "../../core/topology/info.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const zones = ["us-west-2a", "us-west-2b", "us-west-2c"];

/** CLUSTER SHARDS as ioredis returns it: flat [key, value, ...] arrays. */
type ShardsReply = ["slots", number[], "nodes", (string | number)[][]][];

function readShard([, slots, , nodes]: ShardsReply[number]): { slots: number[]; primary: string; replicas: string[] } {
  const fields = nodes.map((n) => {
    const m = new Map<string, string | number>();
    for (let i = 0; i + 1 < n.length; i += 2) m.set(String(n[i]), n[i + 1] as string | number);
    return { address: `${m.get("ip")}:${m.get("port")}`, role: m.get("role") };
  });
  return {
    slots,
    primary: fields.find((f) => f.role === "master")?.address ?? "none",
    replicas: fields.filter((f) => f.role === "replica").map((f) => f.address),
  };
}

describe("cluster bootstrap on real valkey-server processes", () => {
  const fleet = new LocalFleet();
  let cluster: LocalCluster;
  const steps: string[] = [];

  beforeAll(async () => {
    cluster = await startLocalCluster(fleet, {
      primaries: 3,
      replicasPerPrimary: 1,
      zones,
      password,
      onStep: (s) => steps.push(s),
    });
  });
  afterAll(() => fleet.stopAll());

  it("assigns 5461/5461/5462 slots to the planned primaries and pairs replicas across zones", async () => {
    const client = await openClient(cluster.seed.host, cluster.seed.port, cluster.seed.address, { password });
    try {
      // CLUSTER SHARDS lists every member with its role (CLUSTER SLOTS hides replicas whose
      // replication offset is still 0, i.e. until the first write reaches them).
      const shards = ((await client.call("CLUSTER", "SHARDS")) as ShardsReply).map(readShard);
      shards.sort((a, b) => (a.slots[0] ?? 0) - (b.slots[0] ?? 0));
      expect(shards.map((s) => s.slots)).toEqual([
        [0, 5460],
        [5461, 10921],
        [10922, 16383],
      ]);
      expect(shards.map((s) => s.primary)).toEqual(cluster.primaries.map((p) => p.address));
      for (const s of shards) {
        expect(s.replicas).toHaveLength(1);
        const replica = s.replicas[0] as string;
        expect(cluster.zoneMap[replica]).not.toBe(cluster.zoneMap[s.primary]);
        expect(cluster.replicasOf.get(s.primary)?.map((r) => r.address)).toEqual([replica]);
      }
      const info = parseInfo((await client.call("CLUSTER", "INFO")) as string);
      expect(info.get("cluster_state")).toBe("ok");
      expect(info.get("cluster_known_nodes")).toBe("6");
      expect(info.get("cluster_size")).toBe("3");
    } finally {
      client.disconnect();
    }
    expect(steps.some((s) => s.startsWith("cluster_state:ok"))).toBe(true);
  });

  it("every replica's own INFO names its planned primary and a live link", async () => {
    for (const [primary, replicas] of cluster.replicasOf) {
      for (const r of replicas) {
        const c = await openClient(r.host, r.port, r.address, { password });
        const info = parseInfo(await c.info("replication"));
        c.disconnect();
        expect(info.get("role")).toBe("slave");
        expect(`${info.get("master_host")}:${info.get("master_port")}`).toBe(primary);
        expect(info.get("master_link_status")).toBe("up");
      }
    }
  });

  it("serves a cluster client across all shards", async () => {
    const c = new Cluster([{ host: cluster.seed.host, port: cluster.seed.port }], {
      redisOptions: { password },
      enableOfflineQueue: true,
    });
    try {
      const keys = Array.from({ length: 300 }, (_, i) => `key:${i}`);
      for (const k of keys) await c.set(k, k);
      expect(await c.get("key:299")).toBe("key:299");
      const perPrimary = await Promise.all(
        cluster.primaries.map(async (p) => {
          const pc = await openClient(p.host, p.port, p.address, { password });
          const n = await pc.dbsize();
          pc.disconnect();
          return n;
        }),
      );
      expect(perPrimary.reduce((a, b) => a + b, 0)).toBe(300);
      for (const n of perPrimary) expect(n).toBeGreaterThan(50);
    } finally {
      c.disconnect();
    }
  });

  it("is idempotent: a second run on the healthy cluster changes nothing", async () => {
    const again = await bootstrapCluster({
      members: cluster.nodes.map((n) => localMember(n, cluster.zoneMap[n.address] as string)),
      primaries: 3,
      replicasPerPrimary: 1,
      connector: new DirectConnector({ password }),
    });
    expect(again.changed).toBe(false);
    expect(again.plan).toBeUndefined();
    expect(again.steps).toEqual(["cluster already formed with this shape; nothing to do"]);
    expect(again.nodeIds).toEqual(cluster.nodeIds);
  });

  it("refuses, by name, nodes that belong to a cluster of another shape", async () => {
    await expect(
      bootstrapCluster({
        members: cluster.nodes.map((n) => localMember(n, cluster.zoneMap[n.address] as string)),
        primaries: 2,
        replicasPerPrimary: 2,
        connector: new DirectConnector({ password }),
      }),
    ).rejects.toThrow(/already belong to a cluster that does not have the wanted shape \(2 primaries x 2 replicas\)/);
  });
});

describe("cluster bootstrap input errors", () => {
  const fleet = new LocalFleet();
  afterAll(() => fleet.stopAll());

  it("names a node that is not cluster-enabled", async () => {
    const plain = await fleet.startMany(2, (i) => ({ name: `plain-${i}` }));
    await expect(
      bootstrapCluster({
        members: plain.map((p, i) => ({
          id: p.address,
          zone: zones[i] as string,
          endpoint: { host: p.host, port: p.port },
          meet: { ip: p.host, port: p.port, busPort: p.port + 10000 },
        })),
        primaries: 1,
        replicasPerPrimary: 1,
        connector: new DirectConnector(),
      }),
    ).rejects.toThrow(
      `${plain[0]?.address} is not cluster-enabled (cluster-enabled yes is missing from its config); ${plain[1]?.address} is not cluster-enabled`,
    );
  });

  it("names an unreachable node and a wrong password", async () => {
    const [node] = await fleet.startMany(1, () => ({ name: "lonely", clusterEnabled: true, password }));
    const member = localMember(node!, "us-west-2a");
    const dead = {
      ...member,
      id: "127.0.0.1:1",
      endpoint: { host: "127.0.0.1", port: 1 },
      meet: { ip: "127.0.0.1", port: 1, busPort: 2 },
    };
    await expect(
      bootstrapCluster({
        members: [member, { ...dead, zone: "us-west-2b" }],
        primaries: 1,
        replicasPerPrimary: 1,
        connector: new DirectConnector({ password }),
      }),
    ).rejects.toThrow(/cannot reach 127\.0\.0\.1:1/);
    await expect(
      bootstrapCluster({
        members: [member],
        primaries: 1,
        replicasPerPrimary: 0,
        connector: new DirectConnector({ password: "wrong" }),
      }),
    ).rejects.toThrow(/authentication failed/);
  });

  it("rejects a MEET address that is not an IP", () => {
    return expect(
      bootstrapCluster({
        members: [
          {
            id: "pod-0",
            zone: "a",
            endpoint: { host: "localhost", port: 1 },
            meet: { ip: "valkey-0.valkey", port: 6379, busPort: 16379 },
          },
        ],
        primaries: 1,
        replicasPerPrimary: 0,
        connector: new DirectConnector(),
      }),
    ).rejects.toThrow("cluster member pod-0: CLUSTER MEET needs an IP address, got 'valkey-0.valkey'");
  });
});
