/**
 * Data transfer on real valkey-server processes with known traffic: N SETs of a known value size
 * to a primary whose replicas sit in named zones, read through the same snapshots the runs use
 * (mix-served.ts MemberBytesRecorder), priced by transfer-record.ts. The cross-zone bytes must
 * come within 5 % of the arithmetic of the RESP framing; then a 2 × 1 cluster's bus bytes are
 * read from CLUSTER INFO.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transferRecord } from "../../benchmarks/cost/transfer-record.js";
import type { ZoneTopology } from "../../benchmarks/cost/transfer.js";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { MemberBytesRecorder } from "../../benchmarks/run/mix-served.js";
import { runMix } from "../../benchmarks/run/mix-runner.js";
import { SEED_WORKLOAD } from "../../vocabulary/workload.js";
import { parseInfo } from "../../core/topology/info.js";

const N = 20_000;
const VALUE = "v".repeat(100);
const key = (i: number): string => `key:${String(i).padStart(12, "0")}`;
/** `*3\r\n$3\r\nSET\r\n$<klen>\r\n<key>\r\n$<vlen>\r\n<value>\r\n`, counted exactly. */
const setBytes = (k: string, v: string): number =>
  `*3\r\n$3\r\nSET\r\n$${k.length}\r\n${k}\r\n$${v.length}\r\n${v}\r\n`.length;
const OK_REPLY = "+OK\r\n".length;
const RATE = { region: "us-east-1", usdPerGBEachDirection: 0.01, source: "test" };

const fleet = new LocalFleet();
let primary: ValkeyProcess;
let replicas: ValkeyProcess[];
let cluster: LocalCluster;

async function waitUntil(what: string, ok: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  primary = await fleet.start({ name: "transfer-primary" });
  replicas = await Promise.all(
    ["b", "c", "a"].map((z) =>
      fleet.start({ name: `transfer-replica-${z}`, replicaOf: { host: primary.host, port: primary.port } }),
    ),
  );
  const p = new Redis({ host: primary.host, port: primary.port });
  // Every replica online (its full sync done), so the measured window holds the stream only.
  await waitUntil(
    "three replicas online",
    async () =>
      [...parseInfo(await p.info("replication")).values()].filter((v) => v.includes("state=online")).length === 3,
  );
  p.disconnect();
  cluster = await startLocalCluster(fleet, { primaries: 2, replicasPerPrimary: 1, zones: ["zone-a", "zone-b"] });
}, 90_000);
afterAll(async () => {
  await fleet.stopAll();
});

/** Replicas in b, c, a; the primary in a. */
const topology = (): ZoneTopology => ({
  shards: [
    {
      primary: { address: primary.address, zone: "a" },
      replicas: replicas.map((r, i) => ({ address: r.address, zone: ["b", "c", "a"][i] })),
    },
  ],
});

async function sendSets(): Promise<void> {
  const c = new Redis({ host: primary.host, port: primary.port });
  const p = c.pipeline();
  for (let i = 0; i < N; i++) p.set(key(i), VALUE);
  await p.exec();
  c.disconnect();
  // The replicas have applied the whole stream: their offsets equal the primary's.
  const offset = async (x: ValkeyProcess, field: string) => {
    const r = new Redis({ host: x.host, port: x.port });
    const v = Number(parseInfo(await r.info("replication")).get(field));
    r.disconnect();
    return v;
  };
  const target = await offset(primary, "master_repl_offset");
  for (const r of replicas)
    await waitUntil(`${r.address} caught up`, async () => (await offset(r, "slave_repl_offset")) >= target);
}

describe("cross-zone bytes of known traffic", () => {
  it(`${N} SETs of a 100-byte value: the replication and client bytes crossing zones are within 5 % of the RESP arithmetic`, async () => {
    const members = [primary, ...replicas].map((x) => ({ host: x.host, port: x.port }));
    const recorder = new MemberBytesRecorder(members, undefined);
    await recorder.around(sendSets);
    const L = Array.from({ length: N }, (_, i) => setBytes(key(i), VALUE)).reduce((a, b) => a + b, 0);
    const rps = 10_000;
    const record = (clientZones: string[]) =>
      transferRecord({
        test: "SET",
        path: "",
        rps,
        requests: N,
        deltas: recorder.last,
        topology: topology(),
        clientZones,
        cluster: false,
        rate: RATE,
      });
    const spread = record(["a", "b", "c"]);
    const inZone = record(["a"]);
    // Replicas in b and c are in other zones than the primary (a): the stream crosses twice.
    const replication = ((2 * L) / N) * rps;
    // Clients spread over a, b, c: 2/3 of what they sent (the SETs) and received (+OK) crossed.
    const client = (((L + N * OK_REPLY) * 2) / 3 / N) * rps;
    expect(spread.missing).toBeUndefined();
    expect(spread.figures?.crossZone.replication).toBeGreaterThan(replication * 0.95);
    expect(spread.figures?.crossZone.replication).toBeLessThan(replication * 1.05);
    expect(spread.figures?.crossZone.client).toBeGreaterThan(client * 0.95);
    expect(spread.figures?.crossZone.client).toBeLessThan(client * 1.05);
    expect(spread.figures?.crossZone.total).toBeGreaterThan((replication + client) * 0.95);
    expect(spread.figures?.crossZone.total).toBeLessThan((replication + client) * 1.05);
    // Clients in the primary's zone: the SETs no longer cross; what does is the replicas' own
    // client traffic in b and c (the snapshots' and this test's INFO, REPLCONF ACKs), under 1 % of the stream.
    expect(inZone.figures?.crossZone.client).toBeLessThan(replication * 0.01);
    expect(Math.abs((inZone.figures?.crossZone.total ?? 0) - replication) / replication).toBeLessThan(0.05);
    // Every replica received the stream (the one in a too, not crossing): 3 × L per N.
    expect(Math.abs((spread.figures?.replicationBytesPerOp ?? 0) - (3 * L) / N) / ((3 * L) / N)).toBeLessThan(0.05);
  }, 60_000);

  it("a mix: the load generator's own count of the bytes it wrote and read agrees with the members' client bytes within 2 %", async () => {
    const members = [primary, ...replicas].map((x) => ({ host: x.host, port: x.port }));
    const r = await runMix({
      workload: {
        ...SEED_WORKLOAD,
        name: "transfer",
        clients: 4,
        pipeline: 8,
        keyspaceLength: 10_000,
        dataSize: 100,
        mix: [
          { test: "get", percent: 50 },
          { test: "set", percent: 50 },
        ],
        durationSeconds: 2,
      },
      target: { host: primary.host, port: primary.port, cluster: false },
      mode: "replication",
      serverVersion: "test",
      timestamp: "20260101-000000",
      members,
    });
    const total = r.rows.find((x) => x.test === "MIX");
    const record = transferRecord({
      test: "MIX",
      path: "",
      rps: total?.rps ?? 0,
      requests: total?.requests ?? 0,
      deltas: r.served.members,
      topology: topology(),
      clientZones: ["a", "b", "c"],
      cluster: false,
      rate: RATE,
      generatorBytes: r.generator.bytes,
    });
    const membersBytes = record.members.reduce((n, m) => n + (m.clientBytes ?? 0), 0);
    const generator = r.generator.bytes.written + r.generator.bytes.read;
    console.log(
      `[transfer] mix: generator ${generator} bytes, members' client bytes ${membersBytes} (${((100 * (membersBytes - generator)) / generator).toFixed(2)} %)`,
    );
    expect(generator).toBeGreaterThan(100_000);
    expect(Math.abs(membersBytes - generator) / generator).toBeLessThan(0.02);
    expect(record.generatorBytes).toEqual(r.generator.bytes);
  }, 60_000);

  it("a cluster's bus bytes come from CLUSTER INFO, per node, and a share crosses zones", async () => {
    const members = cluster.nodes.map((x) => ({ host: x.host, port: x.port }));
    const recorder = new MemberBytesRecorder(members, undefined);
    // Gossip runs whatever the load: the window lasts until every node has sent bus bytes in it.
    const busSent = async (x: ValkeyProcess): Promise<number> => {
      const c = new Redis({ host: x.host, port: x.port });
      const n = Number(parseInfo(String(await c.call("cluster", "info"))).get("cluster_stats_bytes_sent"));
      c.disconnect();
      return n;
    };
    await recorder.around(async () => {
      const start = await Promise.all(cluster.nodes.map(busSent));
      await waitUntil("every node sent bus bytes", async () =>
        (await Promise.all(cluster.nodes.map(busSent))).every((n, i) => n > (start[i] ?? 0)),
      );
    });
    for (const d of recorder.last) expect(d.net?.busSent, d.member).toBeGreaterThan(0);
    const shards: ZoneTopology["shards"] = cluster.primaries.map((p) => ({
      primary: { address: p.address, zone: cluster.zoneMap[p.address] },
      replicas: (cluster.replicasOf.get(p.address) ?? []).map((r) => ({
        address: r.address,
        zone: cluster.zoneMap[r.address],
      })),
    }));
    const r = transferRecord({
      test: "GET",
      path: "",
      rps: 1,
      requests: 1,
      deltas: recorder.last,
      topology: { shards },
      clientZones: ["zone-a", "zone-b"],
      cluster: true,
      rate: RATE,
    });
    const sent = recorder.last.reduce((n, d) => n + (d.net?.busSent ?? 0), 0);
    const seconds = r.seconds ?? 0;
    expect(seconds).toBeGreaterThan(0);
    // Two nodes per zone, three peers each, two of them in the other zone: 2/3 of the bytes sent.
    expect(r.figures?.crossZone.bus).toBeCloseTo((sent * 2) / 3 / seconds, 3);
  }, 30_000);
});
