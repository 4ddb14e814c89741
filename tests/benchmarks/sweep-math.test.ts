/** The sweep's arithmetic and files: exponent from known inputs, pinning plan, CPU share, sweep.csv. */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { pinProcess } from "../../benchmarks/sweep/process-cpu.js";
import { parseSweepCsv, renderSweepCsv, SweepCsvError, type SweepRow } from "../../benchmarks/sweep/sweep-csv.js";
import { cpuList, parseShardList, pinPlan, scaling, SweepInputError } from "../../benchmarks/sweep/sweep-math.js";
import { clientCpuShare, parseStatCpuTicks } from "../../benchmarks/run/client-cpu.js";

describe("scale and exponent", () => {
  it("computes p = ln(scale) / ln(shards / first shards) per test against its own first step", () => {
    const rows = [
      { test: "SET", shards: 1, rps: 100 },
      { test: "GET", shards: 1, rps: 400 },
      { test: "SET", shards: 2, rps: 200 },
      { test: "GET", shards: 2, rps: 400 },
      { test: "SET", shards: 4, rps: 150 * 2 },
      { test: "GET", shards: 4, rps: 400 * Math.SQRT2 * Math.SQRT2 },
    ];
    const s = scaling(rows);
    expect(s[0]).toEqual({ scale: 1, exponent: null });
    expect(s[1]).toEqual({ scale: 1, exponent: null });
    expect(s[2]?.scale).toBe(2);
    expect(s[2]?.exponent).toBeCloseTo(1, 12); // linear
    expect(s[3]?.exponent).toBeCloseTo(0, 12); // flat
    expect(s[4]?.scale).toBe(3);
    expect(s[4]?.exponent).toBeCloseTo(Math.log(3) / Math.log(4), 12); // 0.792…
    expect(s[5]?.exponent).toBeCloseTo(0.5, 12); // doubled over 4×: square-root scaling
  });

  it("uses the fewest-shards step as the base even when rows come in another order, and gives null for zero rps", () => {
    const s = scaling([
      { test: "SET", shards: 3, rps: 300 },
      { test: "SET", shards: 1, rps: 100 },
      { test: "INCR", shards: 1, rps: 0 },
      { test: "INCR", shards: 3, rps: 10 },
    ]);
    expect(s[0]?.exponent).toBeCloseTo(1, 12);
    expect(s[2]).toEqual({ scale: null, exponent: null });
    expect(s[3]).toEqual({ scale: null, exponent: null });
  });
});

describe("--shards and --pin", () => {
  it("parses an increasing list and names what is wrong", () => {
    expect(parseShardList("1, 2,4")).toEqual([1, 2, 4]);
    expect(() => parseShardList("1,x")).toThrow(
      new SweepInputError("--shards: 'x' is not a positive whole number (e.g. --shards 1,2,4)"),
    );
    expect(() => parseShardList("2")).toThrow(/at least two/);
    expect(() => parseShardList("2,2")).toThrow(/increase strictly/);
    expect(() => parseShardList("0,1")).toThrow(/'0'/);
  });

  it("gives each primary its own CPU and the client the rest, or refuses with the CPU count", () => {
    expect(pinPlan(8, 4)).toEqual({ primaryCpus: [0, 1, 2, 3], clientCpus: [4, 5, 6, 7] });
    expect(pinPlan(3, 2)).toEqual({ primaryCpus: [0, 1], clientCpus: [2] });
    expect(() => pinPlan(2, 2)).toThrow(
      "--pin needs 3 CPUs for 2 shard(s) (one per primary plus at least one for the benchmark client); this machine has 2. Use fewer shards or drop --pin.",
    );
    expect(cpuList([4, 2, 3, 7, 9, 10])).toBe("2-4,7,9-10");
  });

  it("measures the client's CPU against what it could use", () => {
    expect(clientCpuShare(1.8, 1, 4, 2)).toBeCloseTo(0.9); // 4 threads but 2 CPUs
    expect(clientCpuShare(0.5, 1, 1, 8)).toBeCloseTo(0.5); // 1 thread on 8 CPUs
    expect(clientCpuShare(1, 0, 4, 4)).toBe(0);
  });

  it("reads utime + stime from a real /proc/<pid>/stat line, whatever the command name holds", () => {
    const own = parseStatCpuTicks(readFileSync("/proc/self/stat", "latin1"));
    expect(own).toBeGreaterThanOrEqual(0);
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3)); // fields 3.. ; utime = field 14, stime = 15
    expect(parseStatCpuTicks(`123 (odd ) name) ${fields.join(" ")}`)).toBe(14 + 15);
  });
});

describe("pinning a real process", () => {
  it("sets the CPU affinity of every thread with taskset", async () => {
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      const pid = child.pid as number;
      pinProcess(pid, [0]);
      expect(/Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, "latin1"))?.[1]).toBe("0");
    } finally {
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    }
  });
});

describe("sweep.csv", () => {
  const row: SweepRow = {
    workload: "sweep",
    test: "SET",
    shards: 2,
    replicas_per_primary: 0,
    rps: 243246.56,
    p50_ms: 1.023,
    p99_ms: 37.759,
    scale: 2.212823,
    exponent: 1.145888,
    client_cpus: 2,
    client_cpu_pct: 14.8,
    client_saturated: false,
    pinned: false,
    duration_s: 1.318,
    timestamp: "20261123-150415",
    server_version: "9.1.2",
    client_version: "redis-benchmark 7.0.15",
    notes: 'a "quoted", note',
  };

  it("round-trips, first step's exponent empty", () => {
    const first = { ...row, shards: 1, scale: 1, exponent: null };
    expect(parseSweepCsv(renderSweepCsv([first, row]))).toEqual([first, row]);
  });

  it("round-trips a deployed sweep's row, whose client CPU columns are empty (not measured in the cluster)", () => {
    const deployed = { ...row, client_cpus: null, client_cpu_pct: null, client_saturated: null };
    const text = renderSweepCsv([deployed]);
    expect(text.split("\n")[1]).toContain(",1.145888,,,,false,");
    expect(parseSweepCsv(text)).toEqual([deployed]);
  });

  it("names the line and column of a bad value", () => {
    const text = renderSweepCsv([row]).replace(",243246.56,", ",lots,");
    expect(() => parseSweepCsv(text)).toThrow(SweepCsvError);
    expect(() => parseSweepCsv(text)).toThrow(/^sweep\.csv line 2: rps: /);
  });
});
