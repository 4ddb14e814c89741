/**
 * Open-loop latency (`--mix set:100 --rate N`) on a real valkey-server, against the closed loop,
 * each run with the server frozen (SIGSTOP) for a known 1 s in the middle: the closed loop sends
 * nothing while the server is frozen, so only the few requests in flight wait and its p99 hides
 * the stall; the open loop keeps sending on schedule, every request due during the stall waits
 * behind it and is measured from its intended send time, so its p99 and p99.9 show the stall,
 * and so do its histogram (.hgrm text) and its latency-over-time series.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { runMix, type MixResult, type RunMixOptions } from "../../benchmarks/run/mix-runner.js";
import { runMixComparingLoops } from "../../benchmarks/run/loop-comparison.js";
import { IntervalLog, LatencyHistogram, percentileDistribution } from "../../benchmarks/run/latency-histogram.js";
import { SEED_WORKLOAD, type Workload } from "../../vocabulary/workload.js";
import { runVbench } from "../support/verify-helpers.js";

const fleet = new LocalFleet();
let server: ValkeyProcess;
const STALL_MS = 1000;

beforeAll(async () => {
  server = await fleet.start({ name: "open-loop" });
}, 30_000);
afterAll(async () => {
  await fleet.stopAll();
});

const workload = (rate?: number): Workload => ({
  ...SEED_WORKLOAD,
  name: "open-loop",
  clients: 4,
  pipeline: 1,
  keyspaceLength: 10_000,
  mix: [{ test: "set", percent: 100 }],
  durationSeconds: 5,
  ...(rate === undefined ? {} : { rate }),
});

/** The options of a run against the test server. */
const options = (rate?: number): RunMixOptions => ({
  workload: workload(rate),
  target: { host: server.host, port: server.port, cluster: false },
  mode: "replication",
  serverVersion: "test",
  timestamp: "20260101-000000",
  members: [{ host: server.host, port: server.port }],
});

/** Runs the mix with the server frozen for STALL_MS from 2 s in. */
async function stalled(o: RunMixOptions): Promise<MixResult> {
  const freeze = setTimeout(() => {
    process.kill(server.pid, "SIGSTOP");
    setTimeout(() => process.kill(server.pid, "SIGCONT"), STALL_MS);
  }, 2000);
  try {
    return await runMix(o);
  } finally {
    clearTimeout(freeze);
    process.kill(server.pid, "SIGCONT");
  }
}
const withStall = (rate?: number): Promise<MixResult> => stalled(options(rate));

describe("open loop against closed loop, the server frozen for 1 s", () => {
  it("the closed loop's p99 hides the stall; the open loop's p99, p99.9, histogram and per-second series show it", async () => {
    const closed = await withStall();
    const open = await withStall(2000);
    const mixRow = (r: MixResult) => r.rows.find((x) => x.test === "MIX");
    const c = mixRow(closed);
    const o = mixRow(open);
    console.log(
      `[open-loop] closed loop: ${c?.rps} rps, p50 ${c?.p50_ms} ms, p99 ${c?.p99_ms} ms, p99.9 ${closed.latency.p999_ms.MIX} ms, max ${c?.max_ms} ms; ` +
        `open loop at 2000/s: ${o?.rps} rps, p50 ${o?.p50_ms} ms, p99 ${o?.p99_ms} ms, p99.9 ${open.latency.p999_ms.MIX} ms, max ${o?.max_ms} ms, generator lag mean ${open.openLoop?.generatorLagMeanMs} ms, max ${open.openLoop?.generatorLagMaxMs} ms`,
    );
    // Both saw the stall in their maximum (a request in flight waited it out).
    expect(c?.max_ms).toBeGreaterThan(0.8 * STALL_MS);
    expect(o?.max_ms).toBeGreaterThan(0.8 * STALL_MS);
    // Closed: a handful of requests out of tens of thousands waited; p99 says nothing of it.
    expect(c?.p99_ms).toBeLessThan(0.2 * STALL_MS);
    // Open: ~2000 of ~10000 requests were due during the stall, each counted from its intended time.
    expect(o?.p99_ms).toBeGreaterThan(0.5 * STALL_MS);
    expect(open.latency.p999_ms.MIX).toBeGreaterThan(0.8 * STALL_MS);
    expect(o?.requests).toBeGreaterThan(0.9 * 2000 * 5);
    expect(o?.notes).toMatch(
      /open loop at 2000\/s \(latency from each request's intended send time; generator lag mean [\d.]+ ms, max [\d.]+ ms\)/,
    );
    // The series: the seconds around the stall carry it, the first second does not.
    const series = open.openLoop?.series ?? [];
    expect(series).toHaveLength(5);
    expect(series[0]?.max_ms).toBeLessThan(0.2 * STALL_MS);
    expect(Math.max(...series.slice(1, 4).map((s) => s.max_ms))).toBeGreaterThan(0.8 * STALL_MS);
    // The histogram file (HdrHistogram's own text) holds the tail: its maximum and count are the row's.
    const hgrm = open.latency.histograms.MIX ?? "";
    expect(hgrm.split("\n")[0]).toMatch(/Value\s+Percentile\s+TotalCount\s+1\/\(1-Percentile\)/);
    const [, max, count] = /#\[Max\s+=\s+([\d.]+), Total count\s+=\s+(\d+)\]/.exec(hgrm) ?? [];
    expect(Number(max)).toBeCloseTo(o?.max_ms ?? 0, 2);
    expect(Number(max)).toBeGreaterThan(0.8 * STALL_MS);
    expect(Number(count)).toBe(o?.requests);
  }, 60_000);

  it("at the same throughput: the closed loop paced to 1000/s hides the stall its open twin shows (runMixComparingLoops, each run frozen 1 s)", async () => {
    const r = await runMixComparingLoops(options(1000), stalled);
    const l = r.loops;
    console.log(
      `[open-loop] at 1000/s with a 1 s stall: closed ${JSON.stringify(l?.closed)}; open ${JSON.stringify(l?.open)}`,
    );
    expect(l?.rate).toBe(1000);
    // The same throughput on both sides (the closed loop falls a little behind during the stall, never ahead).
    expect(l?.closed.rps).toBeGreaterThan(0.75 * 1000);
    expect(l?.closed.rps).toBeLessThan(1.05 * 1000);
    expect(l?.open.rps).toBeGreaterThan(0.9 * 1000);
    // Both saw the stall in their maximum; only the open loop's p99 shows it.
    expect(l?.closed.max_ms).toBeGreaterThan(0.8 * STALL_MS);
    expect(l?.open.max_ms).toBeGreaterThan(0.8 * STALL_MS);
    expect(l?.closed.p99_ms).toBeLessThan(0.2 * STALL_MS);
    expect(l?.open.p99_ms).toBeGreaterThan(0.5 * STALL_MS);
    // The run's rows are the open loop's; the closed run gave only its figures.
    expect(r.rows.find((x) => x.test === "MIX")?.p99_ms).toBe(l?.open.p99_ms);
  }, 60_000);

  it("percentiles, merges and the histogram text come from HdrHistogram (hdr-histogram-js, 3 significant digits)", () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 1000; i++) h.record(i * 1000);
    // Within HdrHistogram's 0.1 % of the true value.
    expect(Math.abs(h.quantile(0.5) - 500_000)).toBeLessThanOrEqual(500);
    expect(Math.abs(h.quantile(0.99) - 990_000)).toBeLessThanOrEqual(990);
    expect([h.count, h.max, h.min]).toEqual([1000, 1_000_000, 1000]);
    const lines = percentileDistribution(h).trimEnd().split("\n");
    expect(lines[0]).toBe("       Value     Percentile TotalCount 1/(1-Percentile)");
    expect(lines[2]).toBe("       1.000 0.000000000000          1           1.00");
    expect(lines.find((l) => / 0\.500000000000 /.test(l))).toMatch(/^\s+500\.\d{3} 0\.500000000000\s+500\s+2\.00$/);
    expect(lines.slice(-3)).toEqual([
      expect.stringMatching(/^#\[Mean\s+=\s+500\.\d{3}, StdDeviation\s+=\s+288\.\d{3}\]$/),
      "#[Max     =     1000.000, Total count    =         1000]",
      expect.stringMatching(/^#\[Buckets =\s+\d+, SubBuckets\s+=\s+2048\]$/),
    ]);
    // A merge adds the counts: a 10 s stall recorded once is the new maximum, the median barely moves.
    const other = new LatencyHistogram();
    other.record(10_000_000);
    h.merge(other);
    expect([h.count, h.max]).toEqual([1001, 10_000_000]);
    expect(Math.abs(h.quantile(0.5) - 501_000)).toBeLessThanOrEqual(501);
  });

  it("interval histograms: each window the generator cut is logged as an HdrHistogram interval log", () => {
    const log = new IntervalLog(1_000_000);
    const first = new LatencyHistogram();
    for (let i = 0; i < 100; i++) first.record(100);
    const second = new LatencyHistogram();
    second.record(5_000);
    log.add(first, 1_000_000, 1_001_000);
    log.add(second, 1_001_000, 1_002_000);
    const lines = log.log().trim().split("\n");
    expect(lines[0]).toBe("#[Histogram log format version 1.3]");
    // StartTimestamp (s from the base time), Interval_Length, Interval_Max (ms), the compressed histogram.
    expect(lines.filter((l) => l.startsWith("0.") || l.startsWith("1."))).toEqual([
      expect.stringMatching(/^0\.000,1\.000,0\.100,HIST/),
      expect.stringMatching(/^1\.000,1\.000,5\.000,HIST/),
    ]);
  });

  it("vbench bench --mix --rate: the JSON carries p99.9 and the series, raw/ the .hgrm files; --rate without a mix exits 2 naming the flag", async () => {
    const out = mkdtempSync(join(tmpdir(), "open-loop-cli-"));
    try {
      const args = [
        "bench",
        "--target",
        `${server.host}:${server.port}`,
        "--mix",
        "set:100",
        "--rate",
        "500",
        "--duration-s",
        "2",
        "--clients",
        "2",
        "--repeat",
        "1",
      ];
      const r = await runVbench([...args, "--json", "--output", out]);
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as {
        runDir: string;
        rows: { test: string; p999_ms?: number; max_ms: number }[];
        mix: {
          p999_ms: Record<string, number>;
          openLoop: { rate: number; series: unknown[] };
          loops?: { rate: number; closed: { rps: number } };
        };
      };
      expect(j.mix.p999_ms.MIX).toBeGreaterThan(0);
      // The rows themselves carry p99.9 and the maximum (results.csv's appended p999_ms column too).
      for (const row of j.rows) {
        expect(row.p999_ms, row.test).toBe(j.mix.p999_ms[row.test]);
        expect(row.max_ms).toBeGreaterThanOrEqual(row.p999_ms ?? Number.POSITIVE_INFINITY);
      }
      expect([j.mix.openLoop.rate, j.mix.openLoop.series.length]).toEqual([500, 2]);
      for (const f of [
        "latency-replication-MIX.hgrm",
        "latency-replication-SET.hgrm",
        "latency-series-replication.json",
        "mix-served-replication.json",
        "loop-comparison-replication.json",
      ])
        expect(existsSync(join(j.runDir, "raw", f)), f).toBe(true);
      // The closed loop paced to the same rate ran first; the report sets both side by side and charts the open loop
      // over time.
      expect(j.mix.loops?.rate).toBe(500);
      expect(j.mix.loops?.closed.rps).toBeGreaterThan(0.5 * 500);
      const page = readFileSync(join(j.runDir, "report.html"), "utf8");
      expect(page).toContain('<section id="loops">');
      expect(page).toContain('data-chart="open-loop"');
      expect(page.match(/<tr data-series="replication">/g)).toHaveLength(1);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
    const bad = await runVbench(["bench", "--target", `${server.host}:${server.port}`, "--rate", "100"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--rate applies to a mix");
  }, 60_000);
});
