/**
 * Every figure with its spread (pure): the medians and min–max of N runs of the same measurement,
 * which rows are the same measurement, ratio and difference ranges, overlap; the client CPU
 * columns and the Linux readers' parsers; the interleaved order of repeated steps.
 */
import { describe, expect, it } from "vitest";
import {
  aggregateRows,
  aggregateRuns,
  differenceRange,
  median,
  overlaps,
  pathOf,
  rangeOf,
  ratioRange,
  type Range,
} from "../../benchmarks/run/run-spread.js";
import {
  clientCpuColumns,
  clientCpuText,
  parseCpuList,
  parseCpuQuota,
  parseStatCpuTicks,
  parseStatusCpus,
  usableCores,
  withClientCpu,
} from "../../benchmarks/run/client-cpu.js";
import { RepeatedRuns } from "../../benchmarks/run/repeated-runs.js";
import { silentProgress } from "../../core/util/progress.js";
import { REPLICATION_PATH_NOTES } from "../../benchmarks/run/replication-paths.js";
import { readPathNote } from "../../benchmarks/run/read-scale-out.js";
import type { ResultRow } from "../../benchmarks/run/result-row.js";
import { resultRow } from "../support/result-rows.js";

const range = (median: number, min: number, max: number, runs = 3): Range => ({ median, min, max, runs });

describe("median", () => {
  it.each([
    [[1], 1],
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2.5],
    [[5, 5, 9], 5],
  ])("median(%j) = %d", (values, want) => expect(median(values)).toBe(want));
  it("of nothing is an error", () => expect(() => median([])).toThrow(/no values/));
});

describe("aggregateRows: one row from a measurement's runs", () => {
  const runs: ResultRow[] = [
    resultRow({
      rps: 1000,
      p50_ms: 0.5,
      p95_ms: 0.9,
      p99_ms: 1.5,
      avg_ms: 0.6,
      min_ms: 0.1,
      max_ms: 9,
      requests: 5000,
      notes: "a",
      p999_ms: 3,
    }),
    resultRow({
      rps: 1200,
      p50_ms: 0.4,
      p95_ms: 0.8,
      p99_ms: 1.1,
      avg_ms: 0.5,
      min_ms: 0.05,
      max_ms: 4,
      requests: 6000,
      notes: "b",
      p999_ms: 2,
    }),
    resultRow({
      rps: 900,
      p50_ms: 0.7,
      p95_ms: 1.2,
      p99_ms: 2.0,
      avg_ms: 0.8,
      min_ms: 0.2,
      max_ms: 20,
      requests: 4500,
      notes: "c",
      p999_ms: 5,
    }),
  ];

  it.each<[string, keyof ResultRow, unknown]>([
    ["rps is the median", "rps", 1000],
    ["p50 is the median", "p50_ms", 0.5],
    ["p95 is the median", "p95_ms", 0.9],
    ["p99 is the median", "p99_ms", 1.5],
    ["avg is the median", "avg_ms", 0.6],
    ["p99.9 is the median when every run has it", "p999_ms", 3],
    ["min latency is the lowest", "min_ms", 0.05],
    ["max latency is the highest", "max_ms", 20],
    ["runs", "runs", 3],
    ["rps_min", "rps_min", 900],
    ["rps_max", "rps_max", 1200],
    ["p50_min_ms", "p50_min_ms", 0.4],
    ["p50_max_ms", "p50_max_ms", 0.7],
    ["p95_min_ms", "p95_min_ms", 0.8],
    ["p95_max_ms", "p95_max_ms", 1.2],
    ["p99_min_ms", "p99_min_ms", 1.1],
    ["p99_max_ms", "p99_max_ms", 2.0],
    ["requests are the median-rps run's", "requests", 5000],
    [
      "notes are the median-rps run's, saying which run",
      "notes",
      "a; median of 3 runs (these notes, requests and duration: run 1)",
    ],
  ])("%s", (_what, field, want) => expect(aggregateRows(runs)[field]).toEqual(want));

  it("an even number of runs: the mean of the middle two; the notes of the lower middle run", () => {
    const r = aggregateRows([
      resultRow({ rps: 10, notes: "x" }),
      resultRow({ rps: 30, notes: "y" }),
      resultRow({ rps: 20, notes: "z" }),
      resultRow({ rps: 40 }),
    ]);
    expect(r.rps).toBe(25);
    expect(r.notes).toBe("z; median of 4 runs (these notes, requests and duration: run 3)");
  });

  it("one run: its figures, runs 1 and a range that is its value", () => {
    const one = resultRow({ rps: 7, notes: "only" });
    expect(aggregateRows([one])).toEqual({
      ...one,
      runs: 1,
      rps_min: 7,
      rps_max: 7,
      p50_min_ms: 0.5,
      p50_max_ms: 0.5,
      p95_min_ms: 0.9,
      p95_max_ms: 0.9,
      p99_min_ms: 1.2,
      p99_max_ms: 1.2,
    });
  });

  it("p99.9 only when every run has it; the client CPU of the busiest run, bound when any run was", () => {
    const r = aggregateRows([
      resultRow({ p999_ms: 2, client_cpu_pct: 50, client_cores: 2, client_bound: false }),
      resultRow({ client_cpu_pct: 93, client_cores: 2, client_bound: true }),
      resultRow({ client_cpu_pct: 70, client_cores: 2, client_bound: false }),
    ]);
    expect(r).not.toHaveProperty("p999_ms");
    expect([r.client_cpu_pct, r.client_cores, r.client_bound]).toEqual([93, 2, true]);
    expect(aggregateRows([resultRow(), resultRow()])).not.toHaveProperty("client_cpu_pct");
  });

  it("rows already aggregated keep their outer range (ranges of ranges)", () => {
    const r = aggregateRows([
      resultRow({ rps: 10, rps_min: 8, rps_max: 12, runs: 3 }),
      resultRow({ rps: 11, rps_min: 9, rps_max: 15, runs: 3 }),
    ]);
    expect([r.rps_min, r.rps_max]).toEqual([8, 15]);
  });
});

describe("aggregateRuns: which rows are the same measurement", () => {
  const direct = (rps: number, notes = "") =>
    resultRow({ mode: "replication", rps, notes: [REPLICATION_PATH_NOTES.direct, notes].filter(Boolean).join("; ") });
  const endpoint = (rps: number) => resultRow({ mode: "replication", rps, notes: REPLICATION_PATH_NOTES.endpoint });
  const cluster = (rps: number, test = "SET") => resultRow({ mode: "cluster", rps, test });

  it("same mode, path, client and test across runs; re-run notes do not split them; order as first measured", () => {
    const rows = aggregateRuns([
      [direct(100, "rerun: first run 0.2 s < 2 s"), endpoint(80), cluster(300), cluster(400, "GET")],
      [direct(110), endpoint(70), cluster(310), cluster(390, "GET")],
      [direct(90), endpoint(75), cluster(290), cluster(410, "GET")],
    ]);
    expect(
      rows.map((r) => `${r.mode} ${pathOf(r.notes)} ${r.test} ${r.rps} (${r.rps_min}–${r.rps_max}) ×${r.runs}`),
    ).toEqual([
      `replication ${REPLICATION_PATH_NOTES.direct} SET 100 (90–110) ×3`,
      `replication ${REPLICATION_PATH_NOTES.endpoint} SET 75 (70–80) ×3`,
      "cluster  SET 300 (290–310) ×3",
      "cluster  GET 400 (390–410) ×3",
    ]);
  });

  it("a read path's server counts do not split it; another client does", () => {
    const note = (replicas: number) => `${readPathNote("replicasDirect", { replicas, primaries: 1 })}; served …`;
    const rows = aggregateRuns([
      [resultRow({ mode: "replication", test: "GET", rps: 10, notes: note(3) })],
      [
        resultRow({ mode: "replication", test: "GET", rps: 20, notes: note(2) }),
        resultRow({ mode: "replication", test: "GET", rps: 5, client_version: "vbench mix (ioredis)", notes: note(3) }),
      ],
    ]);
    expect(rows.map((r) => [r.client_version, r.runs, r.rps])).toEqual([
      ["valkey-benchmark 9.0.2", 2, 15],
      ["vbench mix (ioredis)", 1, 5],
    ]);
  });
});

describe("ranges", () => {
  it.each<[string, Range, Range, Range]>([
    [
      "cluster ÷ replication rps: min_c ÷ max_r to max_c ÷ min_r",
      range(300, 270, 330),
      range(100, 90, 120),
      range(3, 2.25, 330 / 90),
    ],
    ["one run each: a point", range(300, 300, 300, 1), range(100, 100, 100, 1), range(3, 3, 3, 1)],
    ["a zero denominator: not computable", range(1, 1, 1), range(0, 0, 0), range(Number.NaN, Number.NaN, Number.NaN)],
  ])("ratioRange: %s", (_what, a, b, want) => {
    const r = ratioRange(a, b);
    for (const k of ["median", "min", "max"] as const) {
      if (Number.isNaN(want[k])) expect(r[k]).toBeNaN();
      else expect(r[k]).toBeCloseTo(want[k], 9);
    }
  });

  it("differenceRange: a − b from a.min − b.max to a.max − b.min", () => {
    expect(differenceRange(range(5, 4, 7), range(2, 1, 3))).toEqual(range(3, 1, 6));
  });

  it.each<[string, Range, Range, boolean]>([
    ["overlapping", range(100, 90, 110), range(105, 100, 120), true],
    ["touching", range(100, 90, 100), range(105, 100, 120), true],
    ["apart", range(100, 90, 99), range(105, 100, 120), false],
    ["one inside the other", range(100, 50, 150), range(100, 99, 101), true],
    ["single runs, equal", range(7, 7, 7, 1), range(7, 7, 7, 1), true],
    ["single runs, different", range(7, 7, 7, 1), range(8, 8, 8, 1), false],
  ])("overlaps: %s", (_what, a, b, want) => {
    expect(overlaps(a, b)).toBe(want);
    expect(overlaps(b, a)).toBe(want);
  });

  it("rangeOf a row without spread columns is one run at its value", () => {
    expect(rangeOf(resultRow({ p99_ms: 4 }), "p99")).toEqual(range(4, 4, 4, 1));
    expect(rangeOf(resultRow({ p99_ms: 4, p99_min_ms: 3, p99_max_ms: 6, runs: 5 }), "p99")).toEqual(range(4, 3, 6, 5));
  });
});

describe("client CPU", () => {
  it.each<[string, { cpuSeconds: number; wallSeconds: number; cores: number }, { pct: number; bound: boolean }]>([
    ["95 % of its cores: client-bound", { cpuSeconds: 1.9, wallSeconds: 1, cores: 2 }, { pct: 95, bound: true }],
    ["exactly 90 %: client-bound", { cpuSeconds: 0.9, wallSeconds: 1, cores: 1 }, { pct: 90, bound: true }],
    ["50 %: not", { cpuSeconds: 1, wallSeconds: 1, cores: 2 }, { pct: 50, bound: false }],
    ["89.9 %: not", { cpuSeconds: 8.99, wallSeconds: 10, cores: 1 }, { pct: 89.9, bound: false }],
    ["no wall time: 0", { cpuSeconds: 1, wallSeconds: 0, cores: 1 }, { pct: 0, bound: false }],
  ])("%s", (_what, cpu, want) => {
    const c = clientCpuColumns(cpu);
    expect([c.client_cpu_pct, c.client_bound, c.client_cores]).toEqual([want.pct, want.bound, cpu.cores]);
  });

  it.each<[number, number, number | undefined, number]>([
    [4, 2, undefined, 2],
    [4, 8, undefined, 4],
    [4, 8, 1.5, 1.5],
    [1, 8, undefined, 1],
    [4, 8, 0.5, 1],
  ])("usableCores(threads %d, CPUs %d, limit %s) = %d", (threads, cpus, limit, want) =>
    expect(usableCores(threads, cpus, limit)).toBe(want),
  );

  it("rows gain the columns; unmeasured rows stay as they were; the text says which", () => {
    const [bound] = withClientCpu([resultRow()], { cpuSeconds: 0.95, wallSeconds: 1, cores: 1 });
    expect(clientCpuText(bound as ResultRow)).toBe("CLIENT-BOUND: 95.0 % of 1 core");
    const [half] = withClientCpu([resultRow()], { cpuSeconds: 1, wallSeconds: 1, cores: 2 });
    expect(clientCpuText(half as ResultRow)).toBe("50.0 % of 2 cores");
    expect(withClientCpu([resultRow()], undefined)).toEqual([resultRow()]);
    expect(clientCpuText(resultRow())).toBe("not measured");
  });

  it.each<[string, number | undefined]>([
    ["0-1", 2],
    ["0-3,6", 5],
    ["5", 1],
    ["0-1,x", undefined],
    ["", undefined],
  ])("parseCpuList(%j) = %s", (list, want) => expect(parseCpuList(list)).toBe(want));

  it("the affinity from /proc/<pid>/status, the cgroup quota, the children's ticks from /proc/<pid>/stat", () => {
    expect(parseStatusCpus("Name:\tx\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed:\t1\n")).toBe(2);
    expect(parseStatusCpus("Name:\tx\n")).toBeUndefined();
    expect(parseCpuQuota("200000", "100000")).toBe(2);
    expect(parseCpuQuota("150000", "100000")).toBe(1.5);
    expect(parseCpuQuota("max", "100000")).toBeUndefined();
    expect(parseCpuQuota("-1", "100000")).toBeUndefined();
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3)); // field k holds k
    const stat = `42 (a (b) c) ${fields.join(" ")}`;
    expect(parseStatCpuTicks(stat)).toBe(14 + 15);
    expect(parseStatCpuTicks(stat, "children")).toBe(16 + 17);
    expect(parseStatCpuTicks("42 (x) R 1", "children")).toBeUndefined();
  });
});

describe("RepeatedRuns: the steps interleave run by run, each recorded in the order it ran", () => {
  it("A B A B, titles naming the run, rows per run and their medians", async () => {
    const runs = new RepeatedRuns(2);
    let rps = 100;
    const step = (title: string, mode: "cluster" | "replication") => ({
      title,
      run: () => Promise.resolve(runs.add([resultRow({ mode, rps: (rps += 10) })])),
    });
    const steps = runs.steps(() => [step("A", "replication"), step("B", "cluster")]);
    expect(steps.map((s) => s.title)).toEqual(["Run 1/2: A", "Run 1/2: B", "Run 2/2: A", "Run 2/2: B"]);
    await silentProgress(steps);
    expect(runs.record().steps.map((s) => `${s.run}:${s.step}:${s.rows.map((r) => r.rps).join()}`)).toEqual([
      "1:A:110",
      "1:B:120",
      "2:A:130",
      "2:B:140",
    ]);
    // Run 2's A starts where run 1's A ended; run 1 has no earlier run.
    expect(runs.previousRequests(2, "A")).toEqual({ set: 5100 });
    expect(runs.previousRequests(1, "A")).toEqual({});
    expect(runs.perRun().map((r) => r.map((x) => x.rps))).toEqual([
      [110, 120],
      [130, 140],
    ]);
    expect(runs.rows().map((r) => [r.mode, r.rps, r.rps_min, r.rps_max])).toEqual([
      ["replication", 120, 110, 130],
      ["cluster", 130, 120, 140],
    ]);
  });

  it("one run keeps the titles; rows outside a step and a repeat below 1 are refused", async () => {
    const runs = new RepeatedRuns(1);
    expect(runs.steps(() => [{ title: "A", run: () => Promise.resolve() }]).map((s) => s.title)).toEqual(["A"]);
    expect(() => runs.add([resultRow()])).toThrow(/no step is running/);
    expect(() => new RepeatedRuns(0)).toThrow(/repeat must be a whole number ≥ 1/);
    await runs.measure(1, "bench", () => Promise.resolve([resultRow({ rps: 5 })]));
    expect(runs.record()).toMatchObject({ repeat: 1, steps: [{ run: 1, step: "bench", rows: [{ rps: 5 }] }] });
  });
});
