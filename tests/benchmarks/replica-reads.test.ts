/**
 * Reads from the replicas (`--reads replicas`) on real processes: a Sentinel topology (1 primary
 * + 2 replicas, HAProxy write and read endpoints) and a 2 × (1 + 1) cluster. Who served the reads
 * is read here, independently of the code under test, from every member's INFO commandstats:
 * after a GET run on the replicas each replica's cmdstat_get grew and the primaries' did not;
 * a run whose reads land on a primary instead fails naming GET and the counts. Validation of
 * `--reads` and `benchmark.reads` at the CLI and stack-config boundary.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveBinaries, type ValkeyBinaries } from "../../benchmarks/run/binaries.js";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { runEndpointBench } from "../../apps/vbench/endpoint-bench.js";
import { runMix } from "../../benchmarks/run/mix-runner.js";
import { parseCommandstats, ReplicaReadsError } from "../../benchmarks/run/mix-served.js";
import { parseReadPath, READ_PATHS } from "../../benchmarks/run/read-scale-out.js";
import { runReplicaReads } from "../../benchmarks/run/replica-reads.js";
import { ConfigError, parseStackConfig } from "../../config/schema.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { SEED_WORKLOAD, type Workload } from "../../vocabulary/workload.js";
import { runVbench } from "../support/verify-helpers.js";

const fleet = new LocalFleet();
let t: SentinelTopology;
let cluster: LocalCluster;
let binaries: ValkeyBinaries;
let primary: NodeEndpoint;
let replicas: NodeEndpoint[];

const TS = "20260101-000000";
const tests: Workload = {
  ...SEED_WORKLOAD,
  name: "reads",
  requests: 20_000,
  clients: 8,
  threads: 2,
  keyspaceLength: 1000,
  tests: ["get"],
  minDurationSeconds: 0,
};
const mix: Workload = {
  ...tests,
  pipeline: 4,
  clients: 4,
  mix: [
    { test: "get", percent: 80 },
    { test: "set", percent: 20 },
  ],
  durationSeconds: 2,
};

/** `cmdstat_<command>` calls per member, read here (not by the code under test). */
async function calls(members: readonly NodeEndpoint[], command: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const m of members) {
    const c = new Redis({ host: m.host, port: m.port, maxRetriesPerRequest: 0 });
    try {
      out.set(endpointKey(m), parseCommandstats(await c.info("commandstats")).get(command)?.calls ?? 0);
    } finally {
      c.disconnect();
    }
  }
  return out;
}
const grown = (before: Map<string, number>, after: Map<string, number>, m: NodeEndpoint): number =>
  (after.get(endpointKey(m)) ?? 0) - (before.get(endpointKey(m)) ?? 0);

beforeAll(async () => {
  binaries = resolveBinaries();
  t = await SentinelTopology.start({ replicas: 2, zones: ["zone-a", "zone-b", "zone-c"] });
  const p = t.member(await t.primaryFromSentinels());
  primary = { host: p.host, port: p.port };
  replicas = t.members.filter((m) => m.port !== p.port).map((m) => ({ host: m.host, port: m.port }));
  cluster = await startLocalCluster(fleet, { primaries: 2, replicasPerPrimary: 1, zones: ["zone-a", "zone-b"] });
}, 120_000);
const scratch = mkdtempSync(join(tmpdir(), "vbench-replica-reads-"));
afterAll(async () => {
  await Promise.all([fleet.stopAll(), t?.stopAll()]);
  rmSync(scratch, { recursive: true, force: true });
});

const common = () => ({ client: binaries.benchmark, serverVersion: "test", timestamp: TS });

describe("replication: reads on the replicas are served by the replicas", () => {
  it("GET direct to every replica: each replica's cmdstat_get grew, the primary's did not", async () => {
    const members = [primary, ...replicas];
    const before = await calls(members, "get");
    const r = await runReplicaReads({
      ...common(),
      workload: { ...tests, reads: "replicas" },
      mode: "replication",
      path: "replicasDirect",
      target: primary,
      readTargets: replicas,
      members,
    });
    const after = await calls(members, "get");
    for (const m of replicas) expect(grown(before, after, m)).toBeGreaterThan(1000);
    expect(grown(before, after, primary)).toBe(0);
    expect(r.rows.map((x) => x.test)).toEqual(["GET"]);
    const row = r.rows[0];
    expect(parseReadPath(row?.notes ?? "")).toMatchObject({ key: "replicasDirect", replicas: 2, primaries: 1 });
    expect(row?.notes).toMatch(/served \(INFO commandstats\): GET by the primaries 0, by the replicas \d+/);
    // One benchmark process per replica, started together, combined into one row.
    expect(row?.notes).toMatch(/2 client processes over 2 targets/);
    expect(row?.clients).toBe(2 * tests.clients);
  }, 60_000);

  it("GET through the HAProxy read endpoint: served by the replicas, not the primary", async () => {
    const members = [primary, ...replicas];
    const read = t.proxy?.read as NodeEndpoint;
    const before = await calls(members, "get");
    const r = await runReplicaReads({
      ...common(),
      workload: { ...tests, reads: "replicas" },
      mode: "replication",
      path: "readEndpoint",
      target: t.proxy?.write as NodeEndpoint,
      readTargets: [read],
      members,
    });
    const after = await calls(members, "get");
    for (const m of replicas) expect(grown(before, after, m)).toBeGreaterThan(0);
    expect(grown(before, after, primary)).toBe(0);
    expect(r.rows[0]?.notes.startsWith(READ_PATHS.readEndpoint.note)).toBe(true);
  }, 60_000);

  it("a mix with its reads on the replicas: GETs on the replicas, SETs on the primary (replicated, not served, on the replicas)", async () => {
    const members = [primary, ...replicas];
    const [getBefore, setBefore] = [await calls(members, "get"), await calls(members, "set")];
    const r = await runMix({
      workload: { ...mix, reads: "replicas" },
      target: { ...primary, cluster: false },
      readTargets: replicas,
      mode: "replication",
      serverVersion: "test",
      timestamp: TS,
      members,
    });
    const [getAfter, setAfter] = [await calls(members, "get"), await calls(members, "set")];
    for (const m of replicas) expect(grown(getBefore, getAfter, m)).toBeGreaterThan(0);
    expect(grown(getBefore, getAfter, primary)).toBe(0);
    const get = r.served.commands.find((c) => c.test === "get");
    const set = r.served.commands.find((c) => c.test === "set");
    expect(get?.servedByReplicas).toBe(get?.served);
    expect(get?.served).toBe(r.rows.find((x) => x.test === "GET")?.requests);
    expect(set?.served).toBe(grown(setBefore, setAfter, primary));
    expect(set?.replicated).toBeGreaterThan(0);
    expect(Math.abs((get?.servedPercent ?? 0) - 80)).toBeLessThan(2);
    expect(r.rows.find((x) => x.test === "MIX")?.notes).toMatch(
      /GET 8\d\.\d\d% \(wanted 80%\) \d+ calls, by the primaries 0, by the replicas \d+/,
    );
  }, 60_000);

  it("fails naming GET and the counts when the reads went to the primary instead", async () => {
    const members = [primary, ...replicas];
    // A "read target" that is the primary: the client reads from it and every replica stays idle.
    const err = await runReplicaReads({
      ...common(),
      workload: { ...tests, reads: "replicas" },
      mode: "replication",
      path: "replicasDirect",
      target: primary,
      readTargets: [primary],
      members,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReplicaReadsError);
    expect((err as Error).message).toMatch(
      /was to read from the replicas, but they served under 90% of the reads .*GET: the replicas served 0 of \d+ calls, the primaries \d+/,
    );
    const mixErr = await runMix({
      workload: { ...mix, reads: "replicas" },
      target: { ...primary, cluster: false },
      readTargets: [primary],
      mode: "replication",
      serverVersion: "test",
      timestamp: TS,
      members,
    }).catch((e: unknown) => e);
    expect(mixErr).toBeInstanceOf(ReplicaReadsError);
    expect((mixErr as Error).message).toMatch(/^the mix was to read from the replicas.*GET: the replicas served 0 of/);
  }, 60_000);
});

describe("cluster: reads on the replicas over READONLY connections (the load generator, a READONLY connection to its shard's replica per lane)", () => {
  const nodes = () => cluster.nodes.map((n) => ({ host: n.host, port: n.port }));
  const roles = async () => {
    const out: { primaries: NodeEndpoint[]; replicas: NodeEndpoint[] } = { primaries: [], replicas: [] };
    for (const m of nodes()) {
      const c = new Redis({ host: m.host, port: m.port, maxRetriesPerRequest: 0 });
      try {
        ((await c.info("replication")).includes("role:master") ? out.primaries : out.replicas).push(m);
      } finally {
        c.disconnect();
      }
    }
    return out;
  };

  const clusterMix = (workload: Workload) =>
    runMix({
      workload,
      target: { ...cluster.seed, cluster: true },
      mode: "cluster",
      serverVersion: "test",
      timestamp: TS,
      members: nodes(),
    });

  it("a get:100 run on the replicas: every replica's cmdstat_get grew, the primaries' did not", async () => {
    const { primaries, replicas: rs } = await roles();
    expect(rs).toHaveLength(2);
    const before = await calls(nodes(), "get");
    const r = await clusterMix({ ...mix, mix: [{ test: "get", percent: 100 }], reads: "replicas" });
    const after = await calls(nodes(), "get");
    for (const m of rs) expect(grown(before, after, m)).toBeGreaterThan(0);
    for (const m of primaries) expect(grown(before, after, m)).toBe(0);
    expect(r.served.commands[0]?.servedByReplicas).toBe(r.rows[0]?.requests);
  }, 60_000);

  it("a mix's served check counts the replicas' GETs as served, the SETs on the primaries", async () => {
    const { primaries } = await roles();
    const before = await calls(nodes(), "get");
    const r = await clusterMix({ ...mix, reads: "replicas" });
    const after = await calls(nodes(), "get");
    for (const m of primaries) expect(grown(before, after, m)).toBe(0);
    const get = r.served.commands.find((c) => c.test === "get");
    expect(get?.servedByReplicas).toBeGreaterThan(0);
    expect(get?.servedByReplicas).toBe(get?.served);
    expect(Math.abs((get?.servedPercent ?? 0) - 80)).toBeLessThan(2);
  }, 60_000);

  it("the read tests with a client without --rfr go through the generator: primaries' baseline, then the replicas", async () => {
    const r = await runReplicaReads({
      ...common(),
      client: { ...binaries.benchmark, flavor: "redis", version: "7.0.15" },
      workload: { ...tests, reads: "replicas", durationSeconds: 1 },
      mode: "cluster",
      path: "clusterReplicas",
      target: cluster.seed,
      members: nodes(),
    });
    expect(r.baseline.map((x) => parseReadPath(x.notes)?.key)).toEqual(["clusterPrimaries"]);
    expect(r.rows.map((x) => parseReadPath(x.notes))).toEqual([
      expect.objectContaining({ key: "clusterReplicas", replicas: 2, primaries: 2 }),
    ]);
    expect(r.rows[0]?.notes).toMatch(/redis-benchmark 7\.0\.15 has no --rfr/);
    // The replica run: the primaries served none of its GETs.
    expect(r.served[1]?.[0]).toMatchObject({ command: "get", byPrimaries: 0 });
    expect(r.served[0]?.[0]?.byReplicas).toBe(0);
  }, 60_000);
});

describe("vbench bench --reads replicas", () => {
  it("replication: the replicas found in INFO replication, or --read-target (the read endpoint): rows paired with the bench's own primary rows", async () => {
    const members = [primary, ...replicas];
    const before = await calls(members, "get");
    const found = await runEndpointBench({
      target: primary,
      cluster: false,
      workload: { ...tests, reads: "replicas" },
      outputDir: join(scratch, "found"),
      timestamp: TS,
    });
    const after = await calls(members, "get");
    for (const m of replicas) expect(grown(before, after, m)).toBeGreaterThan(1000);
    expect(found.rows.map((r) => parseReadPath(r.notes)?.key ?? "primary")).toEqual(["primary", "replicasDirect"]);
    expect(found.table).toMatch(/replication\s+GET\s+direct to the replicas .* 2 vs 1 /);
    expect(readFileSync(join(found.runDir, "summary.md"), "utf8")).toContain("## Read scale-out");
    const viaEndpoint = await runEndpointBench({
      target: primary,
      cluster: false,
      workload: { ...tests, reads: "replicas" },
      readTargets: [t.proxy?.read as NodeEndpoint],
      outputDir: join(scratch, "endpoint"),
      timestamp: TS,
    });
    expect(parseReadPath(viaEndpoint.rows[1]?.notes ?? "")).toMatchObject({ key: "readTargets", replicas: 2 });
  }, 90_000);
});

describe("--reads and benchmark.reads", () => {
  it(
    "the CLI refuses a bad --reads with exit 2, naming the flag",
    async () => {
      const target = `${primary.host}:${primary.port}`;
      const bad = await runVbench(["bench", "--target", target, "--reads", "sideways"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--reads: 'sideways' is not one of primary, replicas");
      const noRead = await runVbench(["bench", "--target", target, "--reads", "replicas", "--tests", "set,incr"]);
      expect(noRead.code).toBe(2);
      expect(noRead.stderr).toContain(
        "--reads replicas needs the get test to send to the replicas, and the tests (set,incr) have none",
      );
      const list = await runVbench(["bench", "--target", target, "--reads", "replicas", "--tests", "get,lrange_100"]);
      expect(list.code).toBe(2);
      expect(list.stderr).toContain("--reads replicas: lrange_100 cannot run on a replica as a test");
      const mixNone = await runVbench(["bench", "--target", target, "--reads", "replicas", "--mix", "set:100"]);
      expect(mixNone.code).toBe(2);
      expect(mixNone.stderr).toContain("--reads replicas needs a read command in the mix");
      const none = await runVbench([
        "local",
        "--reads",
        "replicas",
        "--replicas",
        "0",
        "--output",
        join(scratch, "none"),
      ]);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain("--reads replicas needs replicas to read from: --replicas 0");
      const target2 = await runVbench(["bench", "--target", target, "--read-target", "127.0.0.1:6379"]);
      expect(target2.code).toBe(2);
      expect(target2.stderr).toContain("--read-target applies to --reads replicas");
      // A hang guard, not a speed bound: a minute per CLI start (six here; each ~2 s of CPU, far more on a loaded machine).
    },
    6 * 60_000,
  );

  it("the stack config names benchmark.reads", () => {
    const parse = (benchmark: Record<string, unknown>) =>
      parseStackConfig({
        "aws:region": "eu-west-1",
        "benchmark": { loadgenImage: "registry.example/vload:1", ...benchmark },
      });
    expect(parse({ reads: "replicas", enabled: false }).config.benchmark.reads).toBe("replicas");
    expect(() => parse({ reads: "sideways", enabled: false })).toThrow(ConfigError);
    expect(() => parse({ reads: "sideways", enabled: false })).toThrow(/benchmark\.reads/);
    expect(() => parse({ reads: "replicas", enabled: true })).toThrow(
      /benchmark\.reads.*reads from the replicas only in a mix/,
    );
    expect(parse({ reads: "replicas", enabled: true, mix: "get:90,set:10" }).config.benchmark.reads).toBe("replicas");
    expect(() => parse({ reads: "replicas", enabled: false, tests: ["set"] })).toThrow(
      /benchmark\.reads.*needs the get test/,
    );
  });
});
