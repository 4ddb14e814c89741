/**
 * Mixed workloads (`--mix get:80,set:20`) on real valkey-server processes: a primary with a
 * replica and a 2 × (1 + 1) cluster. The served shares come from INFO commandstats deltas of every
 * member; a run disturbed by extra SETs from another client fails naming SET. Validation of the
 * mix at the CLI and stack-config boundary.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { MixMismatchError } from "../../benchmarks/run/mix-served.js";
import { mixSchedule, runMix } from "../../benchmarks/run/mix-runner.js";
import { parseInfo } from "../../core/topology/info.js";
import { ConfigError, parseStackConfig } from "../../config/schema.js";
import { mixProblems, parseMixText, SEED_WORKLOAD, type MixEntry, type Workload } from "../../vocabulary/workload.js";
import { runVbench } from "../support/verify-helpers.js";

const fleet = new LocalFleet();
let primary: ValkeyProcess;
let replica: ValkeyProcess;
let cluster: LocalCluster;

const workload = (mix: MixEntry[]): Workload => ({
  ...SEED_WORKLOAD,
  name: "mix",
  clients: 4,
  pipeline: 8,
  keyspaceLength: 10_000,
  mix,
  durationSeconds: 2,
});
const GET_SET: MixEntry[] = [
  { test: "get", percent: 80 },
  { test: "set", percent: 20 },
];

beforeAll(async () => {
  [primary, replica] = await Promise.all([fleet.start({ name: "mix-primary" }), fleet.start({ name: "mix-replica" })]);
  const r = new Redis({ host: replica.host, port: replica.port });
  await r.call("replicaof", primary.host, String(primary.port));
  for (let i = 0; i < 100 && parseInfo(await r.info("replication")).get("master_link_status") !== "up"; i++)
    await new Promise((ok) => setTimeout(ok, 100));
  r.disconnect();
  cluster = await startLocalCluster(fleet, { primaries: 2, replicasPerPrimary: 1, zones: ["zone-a", "zone-b"] });
}, 60_000);
afterAll(async () => {
  await fleet.stopAll();
});

describe("a mixed workload, as the server saw it", () => {
  it("replication: get:80,set:20 is served 80/20 by the primary, the replica only replicates SET", async () => {
    const r = await runMix({
      workload: workload(GET_SET),
      target: { host: primary.host, port: primary.port, cluster: false },
      mode: "replication",
      serverVersion: "test",
      timestamp: "20260101-000000",
    });
    expect(r.rows.map((x) => x.test)).toEqual(["GET", "SET", "MIX"]);
    const [get, set, total] = r.rows;
    expect(get?.rps).toBeGreaterThan(0);
    expect(total?.requests).toBe((get?.requests ?? 0) + (set?.requests ?? 0));
    expect(Math.abs((get?.requests ?? 0) / (total?.requests ?? 1) - 0.8)).toBeLessThan(0.01);
    const servedGet = r.served.commands.find((c) => c.test === "get");
    const servedSet = r.served.commands.find((c) => c.test === "set");
    expect(Math.abs((servedGet?.servedPercent ?? 0) - 80)).toBeLessThan(1);
    expect(servedGet?.served).toBe(get?.requests);
    expect(servedSet?.served).toBe(set?.requests);
    // Both members were read: the replica executed every SET of the stream, and served no GET.
    expect(r.served.members.map((m) => m.member).sort()).toEqual([primary.address, replica.address].sort());
    expect(servedSet?.replicated).toBeGreaterThan(0);
    expect(servedGet?.replicated).toBe(0);
    expect(total?.notes).toMatch(
      /served \(INFO commandstats\): GET 8\d\.\d\d% \(wanted 80%\) \d+ calls, by the primaries \d+, by the replicas 0/,
    );
  }, 30_000);

  it("cluster: a three-command mix is served in its shares over both primaries", async () => {
    const mix: MixEntry[] = [
      { test: "get", percent: 50 },
      { test: "set", percent: 30 },
      { test: "incr", percent: 20 },
    ];
    const r = await runMix({
      workload: workload(mix),
      target: { host: cluster.seed.host, port: cluster.seed.port, cluster: true },
      mode: "cluster",
      serverVersion: "test",
      timestamp: "20260101-000000",
    });
    expect(r.served.members).toHaveLength(4);
    const primaries = r.served.members.filter((m) => m.primary);
    expect(primaries).toHaveLength(2);
    for (const p of primaries) expect(p.delta.get("get")?.calls ?? 0).toBeGreaterThan(0);
    for (const c of r.served.commands) expect(Math.abs(c.servedPercent - c.wantedPercent)).toBeLessThan(1);
    expect(r.rows.find((x) => x.test === "MIX")?.rps).toBeGreaterThan(0);
  }, 30_000);

  it("fails naming SET when another client adds SETs during the run", async () => {
    const other = new Redis({ host: primary.host, port: primary.port });
    let extra: Promise<unknown> = Promise.resolve();
    const run = runMix({
      workload: workload(GET_SET),
      target: { host: primary.host, port: primary.port, cluster: false },
      mode: "replication",
      serverVersion: "test",
      timestamp: "20260101-000000",
      onProgress: () => {
        const p = other.pipeline();
        for (let i = 0; i < 100_000; i++) p.set(`extra:${i}`, "x");
        extra = p.exec();
      },
    });
    const err: unknown = await run.catch((e: unknown) => e);
    await extra;
    other.disconnect();
    expect(err).toBeInstanceOf(MixMismatchError);
    expect((err as Error).message).toMatch(/SET: wanted 20%, served \d+\.\d\d%/);
  }, 30_000);
});

describe("the mix spec", () => {
  it("lays the shares out evenly", () => {
    const s = mixSchedule(GET_SET);
    expect(s).toHaveLength(100);
    // Every 5 consecutive requests hold 4 GETs and 1 SET.
    for (let i = 0; i + 5 <= s.length; i++) expect(s.slice(i, i + 5).filter((t) => t === "set")).toHaveLength(1);
  });

  it("names every problem", () => {
    expect(mixProblems(parseMixText("get:80,set:20"))).toEqual([]);
    expect(mixProblems(parseMixText("get:80,fetch:20"))).toEqual([expect.stringMatching(/^unknown command 'fetch'/)]);
    expect(mixProblems(parseMixText("get:80,set:30"))).toEqual(["shares sum to 110, not 100 (get:80,set:30)"]);
    expect(mixProblems(parseMixText("get:50,get:50"))).toEqual(["get is given twice"]);
    expect(mixProblems(parseMixText("get:100,set:0"))).toEqual([
      "set: share must be a whole percent from 1 to 100 (got 0)",
    ]);
    expect(mixProblems(parseMixText("lrange_100:50,lrange_300:50"))).toEqual([
      expect.stringMatching(/lrange_100 and lrange_300 both send LRANGE/),
    ]);
    expect(mixProblems(parseMixText("get"))[0]).toMatch(/get: share must be a whole percent/);
    expect(mixProblems(parseMixText(""))).toEqual(["names no command (e.g. get:80,set:20)"]);
  });

  it("the CLI refuses a bad --mix with exit 2, naming the flag and the command", async () => {
    const r = await runVbench([
      "bench",
      "--target",
      `${primary.host}:${primary.port}`,
      "--mix",
      "get:80,set:30",
      "--duration-s",
      "1",
      "--json",
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--mix: shares sum to 110, not 100");
    const d = await runVbench(["bench", "--target", `${primary.host}:${primary.port}`, "--duration-s", "1"]);
    expect(d.code).toBe(2);
    expect(d.stderr).toContain("--duration-s applies to a mix");
  }, 30_000);

  it("the stack config names benchmark.mix; the deployed Job runs it in one client pod", () => {
    const parse = (
      mix: string,
      enabled = false,
      clientPods = 1,
      loadgenImage: string | null = "registry.example/vload:1",
    ) =>
      parseStackConfig({
        "aws:region": "eu-west-1",
        "benchmark": { mix, enabled, clientPods, ...(loadgenImage === null ? {} : { loadgenImage }) },
      });
    expect(parse("get:80,set:20").config.benchmark.mix).toEqual(GET_SET);
    expect(() => parse("get:80,get:20")).toThrow(ConfigError);
    expect(() => parse("get:80,get:20")).toThrow(/benchmark\.mix.*get is given twice/);
    expect(parse("get:80,set:20", true).config.benchmark.mixImage).toMatch(/node:24/);
    expect(() => parse("get:80,set:20", true, 2)).toThrow(
      /benchmark\.clientPods.*a mix runs in one client pod \(got 2\)/,
    );
    // The load generator's image has no public default: a deployed mix names the key and how to build it.
    expect(() => parse("get:80,set:20", true, 1, null)).toThrow(
      /benchmark\.loadgenImage.*required with benchmark\.mix.*npm run loadgen:image/,
    );
    expect(() => parse("get:80,set:20", true, 1, "not an image!")).toThrow(
      /benchmark\.loadgenImage.*must be an image reference/,
    );
  });
});
