/**
 * Cluster scale-in with the core executor (benchmarks/bootstrap/cluster-scale-in.ts) on REAL
 * valkey-server processes: 4 × 1 → 3 × 1 and 6 × 1 → 3 × 1, the highest-started members leaving
 * (a StatefulSet shrinks by its highest ordinals), keys preloaded and a write load running
 * through a cluster client the whole time. Every preloaded key and every write the cluster
 * acknowledged must read back with its value; the verifier must pass with the new shape and zones;
 * the leaving nodes must have left (known to nobody). Plus the pure plan and the memory refusal.
 */
import { Cluster, Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { scaleIn, type ScaleInResult } from "../../benchmarks/bootstrap/cluster-scale-in.js";
import type { ScaleMember } from "../../benchmarks/bootstrap/cluster-scale.js";
import { chooseKeptPrimaries, memoryRefusal, pairSpares, planSlotDrain } from "../../benchmarks/bootstrap/scale-in-plan.js";
import { localMember, startLocalCluster, type LocalCluster } from "../../benchmarks/local/local-cluster.js";
import { LocalFleet } from "../../benchmarks/local/valkey-process.js";
import { DirectConnector } from "../../benchmarks/topology/connector.js";
import { StaticZoneSource } from "../../benchmarks/topology/zones.js";
import { verifyTopology } from "../../benchmarks/verify/verify-topology.js";
import { pollUntil } from "../../benchmarks/util/poll-until.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const zones = ["us-west-2a", "us-west-2b", "us-west-2c"];
const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe("scale-in plan (pure)", () => {
  it("keeps primaries spread over zones, largest first", () => {
    const p = (id: string, zone: string, n: number) => ({ id, zone, slots: range(0, n - 1) });
    expect(chooseKeptPrimaries([p("a1", "a", 10), p("a2", "a", 20), p("b1", "b", 5), p("c1", "c", 1)], 3)).toEqual(["a2", "b1", "c1"]);
    expect(() => chooseKeptPrimaries([p("a1", "a", 1)], 2)).toThrow(/needs 2 primaries on the nodes that stay, found 1 \(a1\)/);
  });

  it("drains the leaving primaries and evens the kept ones out to their splitSlots share", () => {
    const owned = [
      { id: "p0", slots: range(0, 4095) },
      { id: "p1", slots: range(4096, 8191) },
      { id: "p2", slots: range(8192, 12287) },
      { id: "p3", slots: range(12288, 16383) },
    ];
    const moves = planSlotDrain(owned, ["p0", "p1", "p2"]);
    expect(moves).toHaveLength(4096);
    expect(moves.every((m) => m.from === "p3")).toBe(true);
    const got = (id: string): number => (owned.find((o) => o.id === id)?.slots.length ?? 0) + moves.filter((m) => m.to === id).length;
    expect([got("p0"), got("p1"), got("p2")]).toEqual([5461, 5461, 5462]);
  });

  it("pairs the spare nodes: existing links kept, the rest in another zone than their primary", () => {
    const pairs = pairSpares(
      [
        { id: "p0", zone: "a" },
        { id: "p1", zone: "b" },
      ],
      [
        { id: "r0", zone: "b", replicaOf: "p0" },
        { id: "x", zone: "b", replicaOf: "gone" },
      ],
      1,
    );
    expect(pairs).toEqual({ r0: "p0", x: "p1" });
  });

  it("refuses naming the figures when the data does not fit the remaining primaries", () => {
    const mib = 2 ** 20;
    expect(memoryRefusal([{ id: "a", bytes: 100 * mib }], [{ id: "k", bytes: 0 }])).toBeUndefined();
    expect(
      memoryRefusal(
        [
          { id: "a", bytes: 60 * mib },
          { id: "b", bytes: 60 * mib },
        ],
        [{ id: "k", bytes: 100 * mib }],
      ),
    ).toBe(
      "scale-in refused: the data (120.0 MiB on 2 primaries) does not fit 1 primaries at 80% of their maxmemory (80.0 MiB); raise valkey.maxmemory / resources or keep more primaries",
    );
  });
});

/** Writes `w:<n>` every 10 ms through a cluster client until stopped; returns the keys it acknowledged. */
function writeLoad(seed: { host: string; port: number }): { stop: () => Promise<{ acked: string[]; failed: number }> } {
  const c = new Cluster([seed], { redisOptions: { password }, maxRedirections: 64, retryDelayOnTryAgain: 50, retryDelayOnClusterDown: 100 });
  c.on("error", () => undefined);
  const acked: string[] = [];
  const inFlight: Promise<unknown>[] = [];
  let failed = 0;
  let n = 0;
  const timer = setInterval(() => {
    const key = `w:${n++}`;
    inFlight.push(
      c.set(key, key).then(
        () => acked.push(key),
        () => failed++,
      ),
    );
  }, 10);
  return {
    stop: async () => {
      clearInterval(timer);
      await Promise.all(inFlight);
      c.disconnect();
      return { acked, failed };
    },
  };
}

async function scaleInUnderLoad(primaries: number, to: number): Promise<void> {
  const fleet = new LocalFleet();
  let cluster: LocalCluster | undefined;
  const clients: Redis[] = [];
  try {
    cluster = await startLocalCluster(fleet, { primaries, replicasPerPrimary: 1, zones, password, clusterNodeTimeoutMs: 2000 });
    const seed = cluster.seed;
    const verify = (seedNode: { host: string; port: number }, zoneMap: Record<string, string>, shape: number) =>
      verifyTopology({
        mode: "cluster",
        seeds: [seedNode],
        connector: new DirectConnector({ password }),
        zones: new StaticZoneSource(zoneMap),
        expect: { primaries: shape, replicasPerPrimary: 1 },
      });
    // As the deployed cluster members run (their valkey.conf has no min-replicas-to-write; the
    // local fleet's conf is the replication primary's): no fencing, so a slot move is never
    // refused while a replica catches up.
    for (const n of cluster.nodes) {
      const c = new Redis({ host: n.host, port: n.port, password });
      await c.call("CONFIG", "SET", "min-replicas-to-write", "0");
      c.disconnect();
    }
    // Replicas synced before the first write (min-replicas-to-write refuses writes until then).
    await pollUntil(async () => ((await verify(seed, cluster!.zoneMap, primaries)).ok ? true : "not healthy yet"), {
      timeoutMs: 30_000,
      what: "the cluster to verify",
    });
    const pre = new Cluster([{ host: seed.host, port: seed.port }], { redisOptions: { password } });
    for (let i = 0; i < 2000; i++) await pre.set(`pre:${i}`, `v${i}`);
    pre.disconnect();
    const leavingNodes = cluster.nodes.slice(2 * to);
    const members: ScaleMember[] = await Promise.all(
      cluster.nodes.map(async (n) => {
        const client = new Redis({ host: n.host, port: n.port, password, lazyConnect: true });
        clients.push(client);
        await client.connect();
        return { member: localMember(n, cluster?.zoneMap[n.address] as string), client, nodeId: (await client.call("CLUSTER", "MYID")) as string };
      }),
    );
    const load = writeLoad({ host: seed.host, port: seed.port });
    const at = Date.now();
    let result: ScaleInResult;
    const steps: string[] = [];
    try {
      result = await scaleIn({
        members,
        leaving: new Set(leavingNodes.map((n) => n.address)),
        primaries: to,
        replicasPerPrimary: 1,
        password,
        timeoutMs: 60_000,
        step: (s) => steps.push(s),
      });
    } finally {
      await new Promise((r) => setTimeout(r, 500));
    }
    const ms = Date.now() - at;
    const { acked, failed } = await load.stop();
    // The leaving nodes stop only now, as the StatefulSet shrinks after the step.
    for (const c of clients.slice(2 * to)) c.disconnect();
    for (const n of leavingNodes) await n.stop();
    const staying = cluster.nodes.slice(0, 2 * to);
    const zoneMap = Object.fromEntries(staying.map((n) => [n.address, cluster?.zoneMap[n.address] as string]));
    const report = await verify({ host: staying[0]!.host, port: staying[0]!.port }, zoneMap, to);
    console.log(
      `[scale-in] ${primaries} x 1 -> ${to} x 1: ${ms} ms, ${result.slotsMoved} slots moved, hand-overs ${JSON.stringify(result.handedOver)}; ` +
        `load: ${acked.length} acked, ${failed} failed\n  ${steps.join("\n  ")}`,
    );
    expect(report.failures).toEqual([]);
    expect(result.primaries.map((p) => p.slots).reduce((a, b) => a + b, 0)).toBe(16384);
    const reader = new Cluster([{ host: staying[0]!.host, port: staying[0]!.port }], { redisOptions: { password } });
    try {
      const preKeys = range(0, 1999).map((i) => `pre:${i}`);
      const preValues = await Promise.all(preKeys.map((k) => reader.get(k)));
      expect(
        preKeys.filter((k, i) => preValues[i] !== `v${k.slice(4)}`),
        "preloaded keys lost",
      ).toEqual([]);
      const values = await Promise.all(acked.map((k) => reader.get(k)));
      expect(acked.length).toBeGreaterThan(50);
      expect(
        acked.filter((k, i) => values[i] !== k),
        `acknowledged writes lost (of ${acked.length})`,
      ).toEqual([]);
    } finally {
      reader.disconnect();
    }
  } finally {
    for (const c of clients) c.disconnect();
    await fleet.stopAll();
  }
}

describe("scale-in on real valkey-server processes, under a write load", () => {
  it("4 x 1 -> 3 x 1: no key and no acknowledged write lost, verifier passes, the leaving nodes forgotten", () => scaleInUnderLoad(4, 3), 180_000);
  it("6 x 1 -> 3 x 1: the same", () => scaleInUnderLoad(6, 3), 240_000);
});
