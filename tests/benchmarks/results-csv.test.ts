import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clusterSpeedup, renderComparisonTable, renderSummaryMarkdown } from "../../benchmarks/run/comparison.js";
import { formatResultTimestamp, type ResultRow } from "../../benchmarks/run/result-row.js";
import {
  CLIENT_CPU_CSV_COLUMNS,
  COST_CSV_COLUMNS,
  P999_CSV_COLUMNS,
  SPREAD_CSV_COLUMNS,
  parseResultsCsv,
  renderResultsCsv,
  ResultsCsvError,
  RESULTS_CSV_COLUMNS,
} from "../../benchmarks/run/results-csv.js";
import { rangeOf } from "../../benchmarks/run/run-spread.js";
import { fixtureRows } from "../support/report-fixtures.js";

function row(over: Partial<ResultRow>): ResultRow {
  return {
    workload: "seed",
    mode: "cluster",
    test: "SET",
    rps: 1_250_000.5,
    p50_ms: 0.567,
    clients: 50,
    pipeline: 16,
    datasize: 256,
    timestamp: "20260522-231743",
    p95_ms: 0.9,
    p99_ms: 1.2,
    duration_s: 5.123,
    requests: 6_875_000,
    server_version: "9.1.2",
    client_version: "redis-benchmark 7.0.15",
    avg_ms: 0.6,
    min_ms: 0.05,
    max_ms: 4.2,
    notes: "",
    ...over,
  };
}

const ROWS: ResultRow[] = [
  row({ test: "SET", notes: "rerun: first run 0.42 s < 5 s; requests scaled 500000→6875000" }),
  row({ test: "GET", rps: 2_000_000, p50_ms: 0.375, p99_ms: 0.8 }),
  row({
    mode: "replication",
    test: "SET",
    rps: 500_000.25,
    p50_ms: 1.783,
    p99_ms: 3.1,
    notes: 'has, "quotes" and\na newline',
  }),
  row({ mode: "replication", test: "GET", rps: 2_000_000, p50_ms: 0.75, p99_ms: 1.6 }),
];

describe("results.csv", () => {
  it("header is the seed's nine columns, then the added ones, notes last", () => {
    expect(RESULTS_CSV_COLUMNS.join(",")).toBe(
      "workload,mode,test,rps,p50_ms,clients,pipeline,datasize,timestamp," +
        "p95_ms,p99_ms,duration_s,requests,server_version,client_version,avg_ms,min_ms,max_ms,notes",
    );
    const text = renderResultsCsv(ROWS);
    expect(text.split("\n")[0]).toBe(RESULTS_CSV_COLUMNS.join(","));
    expect(text.split("\n")[2]).toBe(
      "seed,cluster,GET,2000000,0.375,50,16,256,20260522-231743,0.9,0.8,5.123,6875000,9.1.2,redis-benchmark 7.0.15,0.6,0.05,4.2,",
    );
    expect(text.endsWith("\n")).toBe(true);
  });

  it("round-trips, quotes and newlines in notes included", () => {
    expect(parseResultsCsv(renderResultsCsv(ROWS))).toEqual(ROWS);
    expect(parseResultsCsv(renderResultsCsv([]))).toEqual([]);
  });

  it("round-trips arbitrary rows", () => {
    const text = fc.string({ maxLength: 30 });
    const num = fc.double({ min: 0, max: 1e9, noNaN: true, noDefaultInfinity: true });
    const int = fc.integer({ min: 0, max: 1e9 });
    const arb = fc.record({
      workload: text, mode: fc.constantFrom("cluster" as const, "replication" as const), test: text, rps: num, p50_ms: num,
      clients: int, pipeline: int, datasize: int, timestamp: fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => formatResultTimestamp(d)),
      p95_ms: num, p99_ms: num, duration_s: num, requests: int, server_version: text, client_version: text,
      avg_ms: num, min_ms: num, max_ms: num, notes: text,
    }); // prettier-ignore
    fc.assert(
      fc.property(fc.array(arb, { maxLength: 5 }), (rows) => {
        expect(parseResultsCsv(renderResultsCsv(rows))).toEqual(rows);
      }),
    );
  });

  it("rejects a foreign header, bad numbers, bad modes and non-finite values", () => {
    expect(() => parseResultsCsv("workload,mode,test,rps,p50_ms,clients,pipeline,datasize,timestamp\n")).toThrow(
      ResultsCsvError,
    );
    const good = renderResultsCsv([ROWS[1] as ResultRow]);
    expect(() => parseResultsCsv(good.replace(",2000000,", ",fast,"))).toThrow(/rps is "fast", not a number/);
    expect(() => parseResultsCsv(good.replace(",cluster,", ",sharded,"))).toThrow(/mode is "sharded"/);
    expect(() => parseResultsCsv(good.replace("20260522-231743", "yesterday"))).toThrow(/not YYYYMMDD-HHMMSS/);
    expect(() => parseResultsCsv("")).toThrow(/empty/);
    expect(() => renderResultsCsv([row({ rps: Number.POSITIVE_INFINITY })])).toThrow(/rps=Infinity/);
  });

  it("p99.9 (a mix's rows) is an appended column, before the cost ones, written only when a row has it; empty reads back as not measured", () => {
    const mixed = [row({ test: "GET", p999_ms: 2.5 }), row({ test: "SET" })];
    const text = renderResultsCsv(mixed);
    expect(text.split("\n")[0]).toBe([...RESULTS_CSV_COLUMNS, ...P999_CSV_COLUMNS].join(","));
    expect(parseResultsCsv(text)).toEqual(mixed);
    expect(parseResultsCsv(text)[1]).not.toHaveProperty("p999_ms");
    const both = [
      row({ test: "GET", p999_ms: 2.5, usd_per_hour: 1.2, usd_per_million_ops_per_s: 0.5 }),
      row({ test: "SET", usd_per_hour: 1.2, usd_per_million_ops_per_s: null }),
    ];
    const withCost = renderResultsCsv(both);
    expect(withCost.split("\n")[0]).toBe([...RESULTS_CSV_COLUMNS, ...P999_CSV_COLUMNS, ...COST_CSV_COLUMNS].join(","));
    expect(parseResultsCsv(withCost)).toEqual(both);
    // The groups in another order are a foreign header; a negative p99.9 is named.
    expect(() =>
      parseResultsCsv(
        withCost.replace(
          "p999_ms,usd_per_hour,usd_per_million_ops_per_s",
          "usd_per_hour,usd_per_million_ops_per_s,p999_ms",
        ),
      ),
    ).toThrow(/header is/);
    expect(() => parseResultsCsv(text.replace(",2.5\n", ",-1\n"))).toThrow(
      /p999_ms is "-1", not a non-negative number or empty \(not measured\)/,
    );
  });

  it("the spread and client CPU groups come last, each written only when a row has it, and round-trip", () => {
    const measured = [
      row({ runs: 3, rps_min: 1_200_000, rps_max: 1_300_000, p50_min_ms: 0.5, p50_max_ms: 0.6, p95_min_ms: 0.8, p95_max_ms: 1, p99_min_ms: 1.1, p99_max_ms: 1.3, client_cpu_pct: 95.2, client_cores: 2, client_bound: true }),
      row({ test: "GET", runs: 3, rps_min: 1, rps_max: 2, p50_min_ms: 0, p50_max_ms: 1, p95_min_ms: 0, p95_max_ms: 1, p99_min_ms: 0, p99_max_ms: 1, client_cpu_pct: 50, client_cores: 2, client_bound: false }),
      row({ test: "INCR", p999_ms: 2 }),
    ]; // prettier-ignore
    const text = renderResultsCsv(measured);
    expect(text.split("\n")[0]).toBe(
      [...RESULTS_CSV_COLUMNS, ...P999_CSV_COLUMNS, ...SPREAD_CSV_COLUMNS, ...CLIENT_CPU_CSV_COLUMNS].join(","),
    );
    expect(text.split("\n")[0]?.split(",").slice(0, 9)).toEqual([
      "workload",
      "mode",
      "test",
      "rps",
      "p50_ms",
      "clients",
      "pipeline",
      "datasize",
      "timestamp",
    ]);
    expect(text.split("\n")[1]).toMatch(/,3,1200000,1300000,0\.5,0\.6,0\.8,1,1\.1,1\.3,95\.2,2,true$/);
    expect(parseResultsCsv(text)).toEqual(measured);
    expect(parseResultsCsv(text)[2]).not.toHaveProperty("runs");
    expect(parseResultsCsv(text)[2]).not.toHaveProperty("client_bound");
    // Only the client group (a row measured once, before --repeat): its own header.
    const clientOnly = [row({ client_cpu_pct: 12.5, client_cores: 1, client_bound: false })];
    expect(renderResultsCsv(clientOnly).split("\n")[0]).toBe(
      [...RESULTS_CSV_COLUMNS, ...CLIENT_CPU_CSV_COLUMNS].join(","),
    );
    expect(parseResultsCsv(renderResultsCsv(clientOnly))).toEqual(clientOnly);
    expect(() => parseResultsCsv(text.replace(",95.2,2,true", ",95.2,2,maybe"))).toThrow(
      /client_bound is "maybe", not a non-negative number \(client_bound: true or false\)/,
    );
    expect(() => parseResultsCsv(text.replace(",3,1200000,", ",0,1200000,"))).toThrow(
      /runs is "0", not a non-negative number \(runs: a whole number ≥ 1\)/,
    );
  });

  it("a results.csv from before the spread and client columns still reads: one run, client not measured", () => {
    const old = fixtureRows();
    expect(old.length).toBeGreaterThan(0);
    for (const r of old) {
      expect(r).not.toHaveProperty("runs");
      expect(r).not.toHaveProperty("client_cpu_pct");
      expect(rangeOf(r, "rps")).toEqual({ median: r.rps, min: r.rps, max: r.rps, runs: 1 });
    }
  });

  it("timestamps look like the seed's", () => {
    expect(formatResultTimestamp(new Date(Date.UTC(2026, 4, 22, 23, 17, 43)))).toBe("20260522-231743");
  });
});

describe("comparison", () => {
  it("ratios come from the rows", () => {
    const s = clusterSpeedup(ROWS[0] as ResultRow, ROWS[2] as ResultRow);
    expect(s?.rps).toBeCloseTo(1_250_000.5 / 500_000.25, 9);
    expect(s?.p50).toBeCloseTo(1.783 / 0.567, 9);
  });

  it("terminal table: per test and mode its figures and client CPU, then per test the speedup", () => {
    const table = renderComparisonTable(ROWS);
    const lines = table.split("\n");
    expect(lines).toHaveLength(11);
    expect(lines[0]).toMatch(
      /^test\s+mode\s+runs\s+rps \(min–max\)\s+p50 ms \(min–max\)\s+p99 ms \(min–max\)\s+client CPU$/,
    );
    expect(table).toMatch(/^SET\s+cluster\s+1\s+1,250,001\s+0\.567\s+1\.200\s+not measured$/m);
    expect(table).toMatch(/^SET\s+replication\s+1\s+500,000\s+1\.783\s+3\.100\s+not measured$/m);
    expect(table).toMatch(/^SET\s+2\.50× rps · 3\.14× lower p50$/m);
    expect(table).toMatch(/^GET\s+1\.00× rps · 2\.00× lower p50$/m);
    expect(table).not.toMatch(/1,000,000|≥|[^\S\n]$/m);
  });

  it("a missing side and a slower cluster are shown as such", () => {
    const table = renderComparisonTable([
      row({ test: "INCR", p50_ms: 2 }),
      row({ test: "INCR", mode: "replication", rps: 2_500_001, p50_ms: 1 }),
      row({ test: "LPUSH" }),
    ]);
    expect(table).toMatch(/^INCR\s+0\.50× rps · 2\.00× higher p50$/m);
    expect(table).toMatch(/^LPUSH\s+replication\s+—\s+—\s+—\s+—\s+—$/m);
    expect(table).toMatch(/^LPUSH\s+—$/m);
    expect(renderComparisonTable([])).toBe("(no results)");
  });

  it("rows of several runs: median and min–max, the ratio's range, noise and a client-bound row named", () => {
    const spread = (rps: number, min: number, max: number): Partial<ResultRow> => ({
      rps, rps_min: min, rps_max: max, runs: 3, p50_min_ms: 0.5, p50_max_ms: 0.6, p95_min_ms: 0.9, p95_max_ms: 0.9, p99_min_ms: 1.1, p99_max_ms: 1.3,
    }); // prettier-ignore
    const noisy = [
      row({ ...spread(1000, 900, 1100), p50_ms: 0.55 }),
      row({ mode: "replication", ...spread(950, 800, 1000), p50_ms: 0.55 }),
    ];
    const table = renderComparisonTable(noisy);
    expect(table).toMatch(
      /^SET\s+cluster\s+3\s+1,000 \(900–1,100\)\s+0\.550 \(0\.500–0\.600\)\s+1\.200 \(1\.100–1\.300\)\s+not measured$/m,
    );
    // 1000 ÷ 950 = 1.05; from 900 ÷ 1000 to 1100 ÷ 800; the rps ranges overlap.
    expect(table).toMatch(
      /^SET\s+1\.05× \(0\.90–1\.38×\) rps, within run-to-run noise · 1\.00× \(0\.83–1\.20×\) lower p50$/m,
    );
    const apart = [
      row({ ...spread(2000, 1900, 2100) }),
      row({
        mode: "replication",
        ...spread(950, 800, 1000),
        client_cpu_pct: 96.5,
        client_cores: 2,
        client_bound: true,
      }),
    ];
    const md = renderSummaryMarkdown({ rows: apart, versions: { server: "9.1.2", client: "redis-benchmark 7.0.15" } });
    expect(md).toContain("2.11× (1.90–2.63×) rps · ");
    expect(md).not.toContain("within run-to-run noise");
    expect(md).toContain(
      "| 950 (800–1,000) rps · p50 0.567 (0.500–0.600) ms · p99 1.200 (1.100–1.300) ms · CLIENT-BOUND: 96.5 % of 2 cores |",
    );
    expect(renderComparisonTable(apart)).toMatch(
      /^SET\s+replication\s+3\s+950 \(800–1,000\).*CLIENT-BOUND: 96\.5 % of 2 cores$/m,
    );
  });

  it("summary.md has versions, topology, the side-by-side table and every row", () => {
    const md = renderSummaryMarkdown({
      rows: ROWS,
      title: "Local comparison",
      topology: ["### cluster: 3 primaries", "", "```", "shard 1 | a", "```"],
      versions: { server: "9.1.2", client: "redis-benchmark 7.0.15" },
    });
    expect(md.startsWith("# Local comparison\n")).toBe(true);
    expect(md).toContain("- Server: 9.1.2");
    expect(md).toContain("- Benchmark client: redis-benchmark 7.0.15");
    expect(md).toContain("```\nshard 1 | a\n```");
    expect(md).toContain(
      "| SET | 1,250,001 rps · p50 0.567 ms · p99 1.200 ms | 500,000 rps · p50 1.783 ms · p99 3.100 ms | 2.50× rps · 3.14× lower p50 |",
    );
    expect(md).toContain("rerun: first run 0.42 s < 5 s; requests scaled 500000→6875000");
    expect(md).toContain('has, "quotes" and a newline');
    expect(md).toMatch(/## Cluster mode[\s\S]*## Replication mode/);
    expect(md).toMatch(/no 1,000,000 rps cap/);
  });
});
