/**
 * Scaling a running cluster up with the core executor on REAL valkey-server processes: a 3x1
 * cluster holding keys, plus two fresh nodes, becomes 4x1: slots rebalanced with their keys
 * (MIGRATE with AUTH), the new primary's replica in another zone, nothing lost; a second run
 * changes nothing.
 */
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planSlotMoves } from "../../core/bootstrap/cluster-scale.js";
import { bootstrapCluster } from "../../core/bootstrap/cluster-bootstrap.js";
import { localMember, startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const zones = ["us-west-2a", "us-west-2b", "us-west-2c"];

describe("planSlotMoves", () => {
  it("moves each donor's highest surplus slots so every primary ends at its splitSlots share", () => {
    const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);
    const owned = [
      { id: "p0", slots: range(0, 5460) },
      { id: "p1", slots: range(5461, 10921) },
      { id: "p2", slots: range(10922, 16383) },
    ];
    const moves = planSlotMoves(owned, ["p3"]);
    expect(moves).toHaveLength(4096);
    const from = (id: string): number => moves.filter((m) => m.from === id).length;
    expect([from("p0"), from("p1"), from("p2")]).toEqual([5461 - 4096, 5461 - 4096, 5462 - 4096]);
    expect(moves.every((m) => m.to === "p3")).toBe(true);
    expect(new Set(moves.map((m) => m.slot)).size).toBe(4096);
    expect(moves[0]).toEqual({ slot: 5460, from: "p0", to: "p3" });
  });
});

describe("scaling a 3x1 cluster to 4x1 on real valkey-server processes", () => {
  const fleet = new LocalFleet();
  let cluster: LocalCluster;
  let added: ValkeyProcess[];
  const zoneMap: Record<string, string> = {};

  beforeAll(async () => {
    cluster = await startLocalCluster(fleet, {
      primaries: 3,
      replicasPerPrimary: 1,
      zones,
      password,
      clusterNodeTimeoutMs: 2000,
    });
    Object.assign(zoneMap, cluster.zoneMap);
    const c = new Cluster([{ host: cluster.seed.host, port: cluster.seed.port }], { redisOptions: { password } });
    try {
      for (let i = 0; i < 300; i++) await c.set(`key:${i}`, `v${i}`);
    } finally {
      c.disconnect();
    }
    added = await fleet.startMany(2, (i) => ({
      name: `added-${i}`,
      clusterEnabled: true,
      password,
      clusterNodeTimeoutMs: 2000,
    }));
    zoneMap[added[0]?.address ?? ""] = "us-west-2a";
    zoneMap[added[1]?.address ?? ""] = "us-west-2b";
  });
  afterAll(() => fleet.stopAll());

  const run = () =>
    bootstrapCluster({
      members: [...cluster.nodes, ...added].map((n) => localMember(n, zoneMap[n.address] as string)),
      primaries: 4,
      replicasPerPrimary: 1,
      connector: new DirectConnector({ password }),
      password,
      timeoutMs: 30_000,
    });

  it("adds a shard, rebalances slots with their keys, and pairs the new replica in another zone", async () => {
    const result = await run();
    expect(result.changed).toBe(true);
    expect(result.plan?.shards.map((s) => s.primary.id).slice(0, 3)).toEqual(cluster.primaries.map((p) => p.address));
    const report = await verifyTopology({
      mode: "cluster",
      seeds: [cluster.seed],
      connector: new DirectConnector({ password }),
      zones: new StaticZoneSource(zoneMap),
      expect: { primaries: 4, replicasPerPrimary: 1 },
    });
    expect(report.failures).toEqual([]);
    expect(report.shards.map((s) => s.primary.slotCount).sort()).toEqual([4096, 4096, 4096, 4096]);
    expect(report.shards.reduce((n, s) => n + (s.primary.keys ?? 0), 0)).toBe(300);
    expect(report.shards.every((s) => s.replicas.length === 1 && s.replicas.every((r) => r.crossAz && r.linkUp))).toBe(
      true,
    );
    const c = new Cluster([{ host: cluster.seed.host, port: cluster.seed.port }], { redisOptions: { password } });
    try {
      expect(await c.get("key:0")).toBe("v0");
      expect(await c.get("key:299")).toBe("v299");
    } finally {
      c.disconnect();
    }
  });

  it("a second run changes nothing", async () => {
    const again = await run();
    expect(again.changed).toBe(false);
  });
});
