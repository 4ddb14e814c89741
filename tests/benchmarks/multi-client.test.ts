/**
 * Load from many clients: the combination rule (rps summed, worst client's percentiles,
 * request-weighted mean), the claim the README makes about percentiles (the combined quantile
 * lies between the clients' quantiles) checked on synthetic samples, and two real benchmark
 * processes against a real valkey-server through `vbench bench --client-processes 2`, summed
 * correctly (the row's rps is the sum of the two processes' own reports; the server counted
 * both processes' SETs).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { parseBenchmarkCsv, type BenchmarkLine } from "../../benchmarks/run/benchmark-csv.js";
import { combineClients, perClientNote } from "../../benchmarks/run/multi-client.js";
import type { ResultRow } from "../../benchmarks/run/result-row.js";
import { runVbench } from "../support/verify-helpers.js";

const line = (rps: number, p50: number, p99: number, avg: number): BenchmarkLine => ({
  test: "SET",
  rps,
  avgMs: avg,
  minMs: 0.1,
  p50Ms: p50,
  p95Ms: p99 - 0.1,
  p99Ms: p99,
  maxMs: p99 * 3,
});

describe("combineClients", () => {
  it("sums rps and requests, takes the worst client's percentiles, the request-weighted mean, min of min and max of max", () => {
    const c = combineClients([
      { line: line(100_000, 0.4, 1.0, 0.5), requests: 1000, wallSeconds: 2 },
      { line: line(50_000, 0.6, 2.0, 0.8), requests: 3000, wallSeconds: 3 },
    ]);
    expect(c.line).toEqual({
      test: "SET",
      rps: 150_000,
      avgMs: 0.725,
      minMs: 0.1,
      p50Ms: 0.6,
      p95Ms: 1.9,
      p99Ms: 2.0,
      maxMs: 6,
    });
    expect(c.requests).toBe(4000);
    expect(c.wallSeconds).toBe(3);
    expect(perClientNote(c.perClient)).toBe(
      "2 client processes: rps summed, p50/p95/p99 are the worst client's; per client rps 100000|50000, p50 0.4|0.6 ms, p99 1|2 ms",
    );
  });
  it("refuses nothing to combine and clients that measured different tests", () => {
    expect(() => combineClients([])).toThrow(/no client measurements/);
    expect(() =>
      combineClients([
        { line: line(1, 1, 1, 1), requests: 1, wallSeconds: 1 },
        { line: { ...line(1, 1, 1, 1), test: "GET" }, requests: 1, wallSeconds: 1 },
      ]),
    ).toThrow(/different tests \(SET, GET\)/);
  });
  it("the worst client's p99 bounds the true combined p99 from above, the best one's from below (synthetic latencies)", () => {
    const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.ceil(q * xs.length) - 1] ?? NaN;
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let trial = 0; trial < 50; trial++) {
      const a = Array.from({ length: 500 + trial * 7 }, () => rand() * (1 + (trial % 5)));
      const b = Array.from({ length: 300 + trial * 11 }, () => rand() ** 2 * 4);
      const merged = quantile([...a, ...b], 0.99);
      expect(merged).toBeLessThanOrEqual(Math.max(quantile(a, 0.99), quantile(b, 0.99)));
      expect(merged).toBeGreaterThanOrEqual(Math.min(quantile(a, 0.99), quantile(b, 0.99)));
    }
  });
});

describe("two benchmark processes against a real server", () => {
  const scratch = mkdtempSync(join(tmpdir(), "vbench-multi-"));
  const fleet = new LocalFleet();
  let server: ValkeyProcess;
  beforeAll(async () => {
    server = await fleet.start({ name: "multi-client" });
  });
  afterAll(async () => {
    await fleet.stopAll();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("vbench bench --client-processes 2: one row, rps = the sum of the two processes' reports, worst p99, both processes' SETs reached the server", async () => {
    const redis = new Redis({ host: server.host, port: server.port, lazyConnect: true });
    await redis.connect();
    await redis.config("RESETSTAT");
    const n = 20000;
    const r = await runVbench([
      "bench",
      "--target",
      server.address,
      "--client-processes",
      "2",
      "--repeat",
      "1",
      "--requests",
      String(n),
      "--min-duration",
      "0",
      "--tests",
      "set",
      "--clients",
      "10",
      "--output",
      scratch,
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { runDir: string; rows: ResultRow[] };
    expect(out.rows).toHaveLength(1);
    const row = out.rows[0] as ResultRow;
    const perProcess = [1, 2].map((i) => {
      const raw = readFileSync(join(out.runDir, "raw", `replication-set-1-client${i}.txt`), "utf8");
      const stdout = raw.slice(raw.indexOf("# --- stdout ---") + 16, raw.indexOf("# --- stderr ---"));
      const [l] = parseBenchmarkCsv(stdout);
      if (!l) throw new Error(`client ${i}: no result line`);
      return l;
    });
    expect(row.rps).toBeCloseTo((perProcess[0]?.rps ?? 0) + (perProcess[1]?.rps ?? 0), 1);
    expect(row.p99_ms).toBe(Math.max(perProcess[0]?.p99Ms ?? 0, perProcess[1]?.p99Ms ?? 0));
    expect(row).toMatchObject({ test: "SET", requests: 2 * n, clients: 20 });
    expect(row.notes).toMatch(/^2 client processes: rps summed/);
    const stats = await redis.info("commandstats");
    await redis.quit();
    expect(/cmdstat_set:calls=(\d+)/.exec(stats)?.[1]).toBe(String(2 * n));
  }, 120_000);
});
