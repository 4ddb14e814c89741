/**
 * Data transfer in the deployed program under Pulumi mocks: the benchmark results carry a mix
 * whose every member's byte deltas the pod read (served.members), the topology check gives the
 * members' zones; the report's `benchmark.transfer` and the MIX row's columns must be the
 * arithmetic below, its usd_per_hour the stack's hour plus the transfer; `cost.clientZones`
 * primary moves the clients; a valkey-benchmark run says "not measured" with the reason, never 0;
 * the report loader and the verdict read it back.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { awsMockInvokes, awsMockOutputs, installMocks, settle, valueOf } from "../support/pulumi-mocks.js";
import { resultRow } from "../support/result-rows.js";

const ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"];
const PRIMARIES = ["10.0.1.1:6379", "10.0.1.2:6379", "10.0.1.3:6379"];
const REPLICAS = ["10.0.1.4:6379", "10.0.1.5:6379", "10.0.1.6:6379"];
/** Cluster 3 × 1: primaries in a, b, c; each replica in the next zone. */
const TOPOLOGY = {
  ok: true,
  mode: "cluster",
  failures: [],
  shards: PRIMARIES.map((p, i) => ({
    primary: { address: p, zone: ZONES[i], slotRanges: [], keys: null },
    replicas: [{ address: REPLICAS[i], zone: ZONES[(i + 1) % 3], crossAz: true }],
  })),
  primariesPerZone: { "us-east-1a": 1, "us-east-1b": 1, "us-east-1c": 1 },
};
const CLIENT_IN = [3e6, 1e6, 1e6];
const net = (o: Record<string, number>) => ({
  input: 0,
  output: 0,
  replInput: 0,
  replOutput: 0,
  busSent: 60_000,
  busReceived: 60_000,
  ...o,
});
const MEMBERS = [
  ...PRIMARIES.map((member, i) => ({
    member,
    primary: true,
    delta: {},
    seconds: 10,
    net: net({ input: CLIENT_IN[i] ?? 0, output: 1e6 + 5e5, replOutput: 5e5 }),
  })),
  ...REPLICAS.map((member, i) => ({
    member,
    primary: false,
    replicaOf: PRIMARIES[i],
    delta: {},
    seconds: 10,
    net: net({ input: 5e5 + 100, replInput: 5e5 }),
  })),
];
const ROWS = [
  resultRow({ mode: "cluster", test: "GET", rps: 80_000 }),
  resultRow({ mode: "cluster", test: "SET", rps: 20_000 }),
  resultRow({ mode: "cluster", test: "MIX", rps: 100_000, requests: 1_000_000 }),
];
const MIX = {
  served: { total: 1_000_000, commands: [{ test: "get", servedPercent: 80 }], other: {}, members: MEMBERS },
  latency: { p999_ms: {}, histograms: {} },
};
let withMix = true;

const recorder = installMocks({
  invokes: {
    ...awsMockInvokes,
    "aws:pricing/getProduct:getProduct": () => {
      throw new Error("no Pricing API in this test: table prices");
    },
  },
  outputs: (r) => {
    if (r.name === "valkey-benchmark-results-run")
      return withMix ? { rows: ROWS, csv: "", mix: MIX } : { rows: ROWS.slice(0, 2), csv: "" };
    if (r.name === "valkey-check-after-benchmark-run" || r.name === "valkey-check-run")
      return { report: TOPOLOGY, table: "" };
    return awsMockOutputs(r);
  },
});

const { loadStackFile } = await import("../../config/schema.js");
const { runProgram } = await import("../../stacks/program.js");
const { parseResultsCsv } = await import("../../benchmarks/run/results-csv.js");
const { loadSource } = await import("../../benchmarks/report/load.js");
const { transferClause } = await import("../../benchmarks/report/verdict-transfer.js");
const { JOB_NOT_MEASURED } = await import("../../benchmarks/cost/stack-transfer.js");
const pulumi = await import("@pulumi/pulumi");

async function run(clientZones: "spread" | "primary") {
  recorder.reset();
  const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
  const east = { ...config, aws: { ...config.aws, region: "us-east-1", zones: ZONES }, cost: { clientZones } };
  const out = runProgram({ stack: "cluster", config: east, password: pulumi.secret("pw") });
  await settle();
  return valueOf(out.report);
}

const usdPerHour = (bytesPerS: number) => (bytesPerS * 3600 * 2 * 0.01) / 1e9;
// Per request (1,000,000 requests, at 100,000 rps = × 0.1): replication, each replica in another
// zone than its primary, 3 × 500,000; the bus, 6 nodes two per zone (4 of 5 peers elsewhere),
// 6 × 60,000 × 4/5 over 10 s; client bytes per member = input − repl input + output − repl output.
const REPLICATION = 3 * 5e5 * 0.1;
const BUS = (6 * 60_000 * 4) / 5 / 10;
const CLIENT = [4e6, 2e6, 2e6, 100, 100, 100];

describe("data transfer in the deployed program (mocks)", () => {
  it("a mix: the MIX row's crossing bytes and their price are the arithmetic, added to its usd_per_hour; the other rows say not measured", async () => {
    withMix = true;
    const report = await run("spread");
    const t = report.benchmark?.transfer;
    expect(t).toMatchObject({
      mode: "cluster",
      placement: "spread",
      clientZones: ZONES,
      rate: { region: "us-east-1", usdPerGBEachDirection: 0.01 },
    });
    const total = ((CLIENT.reduce((a, b) => a + b, 0) * 2) / 3) * 0.1 + REPLICATION + BUS;
    expect(t?.records.map((r) => r.test)).toEqual(["MIX"]);
    expect(t?.records[0]?.figures?.crossZone.total).toBeCloseTo(total, 6);
    expect(t?.records[0]?.figures?.crossZone.bus).toBeCloseTo(BUS, 9);
    const [get, , mix] = report.benchmark?.rows ?? [];
    expect(mix?.cross_zone_bytes_per_s).toBe(Math.round(total));
    expect(mix?.transfer_usd_per_hour).toBeCloseTo(usdPerHour(total), 6);
    const hour = report.cost?.usdPerHour as number;
    expect(hour).toBeGreaterThan(0);
    expect(mix?.usd_per_hour).toBeCloseTo(hour + usdPerHour(total), 6);
    expect(mix?.usd_per_million_ops_per_s).toBeCloseTo((hour + usdPerHour(total)) / 0.1, 3);
    // A mix's per-command rows: not measured apart (empty columns, the stack's hour alone).
    expect(get).toMatchObject({ cross_zone_bytes_per_s: null, transfer_usd_per_hour: null });
    expect(get?.usd_per_hour).toBeCloseTo(hour, 6);
    expect(parseResultsCsv(report.benchmark?.csv ?? "")).toEqual(report.benchmark?.rows);
  });

  it("cost.clientZones primary: the clients in us-east-1a (one primary per zone: the first by name), the bytes of the primaries in b and c cross", async () => {
    withMix = true;
    const report = await run("primary");
    const t = report.benchmark?.transfer;
    expect(t?.clientZones).toEqual(["us-east-1a"]);
    // Primaries in b and c, replicas in b (10.0.1.4) and c (10.0.1.5).
    expect(t?.records[0]?.figures?.crossZone.client).toBeCloseTo((2e6 + 2e6 + 100 + 100) * 0.1, 6);
  });

  it("valkey-benchmark rows: not measured, with the reason, never 0; the report loader and the verdict read it back", async () => {
    withMix = false;
    const report = await run("spread");
    expect(report.benchmark?.transfer?.records.map((r) => [r.test, r.figures, r.missing])).toEqual([
      ["GET", null, JOB_NOT_MEASURED],
      ["SET", null, JOB_NOT_MEASURED],
    ]);
    expect(report.benchmark?.rows.map((r) => [r.cross_zone_bytes_per_s, r.transfer_usd_per_hour])).toEqual([
      [null, null],
      [null, null],
    ]);
    const file = join(mkdtempSync(join(tmpdir(), "transfer-")), "stack.json");
    writeFileSync(file, JSON.stringify(report));
    const source = loadSource(file);
    expect(source.transfer?.[0]?.records).toHaveLength(2);
    const clause = transferClause({ replication: undefined, cluster: source }, true);
    expect(clause.measured).toBe(false);
    expect(clause.text).toContain(`GET replication not measured; cluster not measured (${JOB_NOT_MEASURED})`);
    expect(clause.text).not.toMatch(/\$0(\.0+)?\/h/);
  });
});
