import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clusterSpeedup, renderComparisonTable, renderSummaryMarkdown } from "../../benchmarks/run/comparison.js";
import { formatResultTimestamp, type ResultRow } from "../../benchmarks/run/result-row.js";
import {
  COST_CSV_COLUMNS,
  P999_CSV_COLUMNS,
  parseResultsCsv,
  renderResultsCsv,
  ResultsCsvError,
  RESULTS_CSV_COLUMNS,
} from "../../benchmarks/run/results-csv.js";

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
  row({ mode: "replication", test: "SET", rps: 500_000.25, p50_ms: 1.783, p99_ms: 3.1, notes: 'has, "quotes" and\na newline' }),
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
    expect(() => parseResultsCsv("workload,mode,test,rps,p50_ms,clients,pipeline,datasize,timestamp\n")).toThrow(ResultsCsvError);
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
    expect(() => parseResultsCsv(withCost.replace("p999_ms,usd_per_hour,usd_per_million_ops_per_s", "usd_per_hour,usd_per_million_ops_per_s,p999_ms"))).toThrow(
      /header is/,
    );
    expect(() => parseResultsCsv(text.replace(",2.5\n", ",-1\n"))).toThrow(/p999_ms is "-1", not a non-negative number or empty \(not measured\)/);
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

  it("terminal table: per test, both sides and the speedup", () => {
    const table = renderComparisonTable(ROWS);
    const lines = table.split("\n");
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/cluster.*\|.*replication.*\|.*cluster speedup/);
    const set = lines.find((l) => l.startsWith("SET")) ?? "";
    expect(set).toMatch(/^SET\s+1,250,001\s+0\.567\s+1\.200\s+\|\s+500,000\s+1\.783\s+3\.100\s+\|\s+2\.50× rps · 3\.14× lower p50$/);
    const get = lines.find((l) => l.startsWith("GET")) ?? "";
    expect(get).toMatch(/1\.00× rps · 2\.00× lower p50$/);
    expect(table).not.toMatch(/1,000,000|≥/);
  });

  it("a missing side and a slower cluster are shown as such", () => {
    const table = renderComparisonTable([
      row({ test: "INCR", p50_ms: 2 }),
      row({ test: "INCR", mode: "replication", rps: 2_500_001, p50_ms: 1 }),
      row({ test: "LPUSH" }),
    ]);
    expect(table).toMatch(/INCR .*0\.50× rps · 2\.00× higher p50/);
    expect(table).toMatch(/LPUSH .*\|\s+—\s+—\s+—\s+\|\s+—$/m);
    expect(renderComparisonTable([])).toBe("(no results)");
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
    expect(md).toContain("| SET | 1,250,001 rps · p50 0.567 ms · p99 1.200 ms | 500,000 rps · p50 1.783 ms · p99 3.100 ms | 2.50× rps · 3.14× lower p50 |");
    expect(md).toContain("rerun: first run 0.42 s < 5 s; requests scaled 500000→6875000");
    expect(md).toContain('has, "quotes" and a newline');
    expect(md).toMatch(/## Cluster mode[\s\S]*## Replication mode/);
    expect(md).toMatch(/no 1,000,000 rps cap/);
  });
});
