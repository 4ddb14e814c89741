import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { dashboardFileName, dashboardJson } from "../../core/metrics/dashboard.js";
import { processesLeftWithMarker, runVbench, type CliRun } from "../support/processes.js";
import { REPLICATION_PATH_NOTES, runLocalComparison } from "../../apps/vbench/local-comparison.js";
import { liveServerCount } from "../../harness/local/valkey-process.js";
import {
  CLIENT_CPU_CSV_COLUMNS,
  parseResultsCsv,
  RESULTS_CSV_COLUMNS,
  SPREAD_CSV_COLUMNS,
  TRANSFER_CSV_COLUMNS,
} from "../../benchmarks/run/results-csv.js";
import { transferFileSchema } from "../../benchmarks/cost/transfer-record.js";
import { RUNS_FILE, type RunsRecord } from "../../benchmarks/run/repeated-runs.js";
import { availableParallelism } from "node:os";
import { trackedChildCount } from "../../core/util/process-reaper.js";
import { SEED_WORKLOAD } from "../../vocabulary/workload.js";

const scratch = mkdtempSync(join(tmpdir(), "vbench-local-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `vbench local <args>` in a child node process (runVbench). */
const runCli = (args: string[], interruptWhen?: RegExp): Promise<CliRun> =>
  runVbench(["local", ...args], "VBENCH_TEST_MARKER", interruptWhen);

describe("local comparison on real valkey-server processes", () => {
  it("starts both topologies, verifies them, benchmarks both (two runs, interleaved), writes results and both dashboards and stops every server", async () => {
    const result = await runLocalComparison({
      workload: {
        ...SEED_WORKLOAD,
        name: "test",
        requests: 20_000,
        tests: ["set", "get"],
        minDurationSeconds: 0.3,
        repeat: 2,
      },
      replicas: 3,
      primaries: 3,
      replicasPerPrimary: 1,
      zones: ["zone-a", "zone-b", "zone-c"],
      outputDir: join(scratch, "results"),
      ioThreads: 1,
      timestamp: "20260101-000000",
    });
    expect(result.runDir).toBe(join(scratch, "results", "20260101-000000"));
    const csv = readFileSync(join(result.runDir, "results.csv"), "utf8");
    expect(csv.split("\n")[0]?.split(",").slice(0, 9)).toEqual([
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
    // The seed's columns, then the data transfer, the spread over the runs and the client's CPU.
    expect(csv.split("\n")[0]).toBe(
      [...RESULTS_CSV_COLUMNS, ...TRANSFER_CSV_COLUMNS, ...SPREAD_CSV_COLUMNS, ...CLIENT_CPU_CSV_COLUMNS].join(","),
    );
    const rows = parseResultsCsv(csv);
    expect(rows.map((r) => `${r.mode}/${r.test}`)).toEqual([
      "replication/SET",
      "replication/GET",
      "replication/SET",
      "replication/GET",
      "cluster/SET",
      "cluster/GET",
    ]);
    // Replication: direct to the primary first, then through the HAProxy write endpoint; each row says its path.
    expect(rows.slice(0, 2).map((r) => r.notes.split(";")[0])).toEqual([
      REPLICATION_PATH_NOTES.direct,
      REPLICATION_PATH_NOTES.direct,
    ]);
    expect(rows.slice(2, 4).map((r) => r.notes.split(";")[0])).toEqual([
      REPLICATION_PATH_NOTES.endpoint,
      REPLICATION_PATH_NOTES.endpoint,
    ]);
    expect(rows.filter((r) => r.mode === "cluster").every((r) => !r.notes.includes("path:"))).toBe(true);
    // The runs interleaved: run 1 of every step (direct, endpoint, cluster), then run 2 of every step.
    const record = JSON.parse(readFileSync(join(result.runDir, "raw", RUNS_FILE), "utf8")) as RunsRecord;
    expect(record.steps.map((x) => `${x.run}: ${x.step.replace(/ \(.*$/, "")}`)).toEqual([
      "1: Benchmark replication direct to the primary",
      "1: Benchmark replication through the write endpoint",
      "1: Benchmark cluster",
      "2: Benchmark replication direct to the primary",
      "2: Benchmark replication through the write endpoint",
      "2: Benchmark cluster",
    ]);
    for (const x of record.steps) expect(x.rows.map((r) => r.test)).toEqual(["SET", "GET"]);
    expect(Date.parse(record.steps[3]!.startedAt)).toBeGreaterThanOrEqual(Date.parse(record.steps[2]!.finishedAt!));
    for (const [i, r] of rows.entries()) {
      // Each row: the median of its two runs (the mean of the two), their min and max around it.
      const own = [i, i + rows.length].map((k) => record.steps.flatMap((x) => x.rows)[k]!.rps);
      expect([r.runs, r.rps_min, r.rps_max]).toEqual([2, Math.min(...own), Math.max(...own)]);
      expect(r.rps).toBeCloseTo((own[0]! + own[1]!) / 2, 1);
      // The client's CPU: the benchmark processes' own, on min(--threads 4, this machine's CPUs) cores.
      expect(r.client_cpu_pct).toBeGreaterThan(0);
      expect(r.client_cores).toBe(Math.min(4, availableParallelism()));
      expect(
        readdirSync(
          join(
            result.runDir,
            "raw",
            "run-2",
            ...(r.mode === "cluster"
              ? []
              : [r.notes.includes("direct") ? "replication-direct" : "replication-endpoint"]),
          ),
        ).length,
      ).toBeGreaterThan(0);
    }
    for (const r of rows) {
      expect(r.rps).toBeGreaterThan(0);
      expect(r.p50_ms).toBeGreaterThan(0);
      expect(r.duration_s).toBeGreaterThanOrEqual(0.3 * 0.8);
      expect(r.server_version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(r.timestamp).toBe("20260101-000000");
    }
    expect(result.reports.replication.before.ok).toBe(true);
    // The verifier went through the Sentinels: three, all agreeing, one per zone.
    const sentinels = result.reports.replication.before.sentinels ?? [];
    expect(sentinels).toHaveLength(3);
    expect(sentinels.every((x) => x.reachable && x.agrees)).toBe(true);
    expect(new Set(sentinels.map((x) => x.zone))).toEqual(new Set(["zone-a", "zone-b", "zone-c"]));
    expect(result.reports.replication.before.shards[0]?.replicas).toHaveLength(3);
    expect(result.reports.cluster.before.ok).toBe(true);
    expect(result.reports.cluster.before.shards).toHaveLength(3);
    // After SET ran on the cluster, keys are spread over all three primaries.
    for (const s of result.reports.cluster.after.shards) expect(s.primary.keys).toBeGreaterThan(0);
    const summary = readFileSync(join(result.runDir, "summary.md"), "utf8");
    expect(summary).toContain("SET");
    expect(summary).toContain("## Replication: write endpoint vs direct to the primary");
    expect(summary).toContain(REPLICATION_PATH_NOTES.endpoint);
    expect(summary).toMatch(/3 Sentinels .*HAProxy write endpoint/);
    expect(result.table).toContain("replication: HAProxy write endpoint vs direct to the primary");
    expect(readdirSync(join(result.runDir, "raw")).some((f) => f.startsWith("verify-cluster"))).toBe(true);
    // Both modes' dashboards, as the stack ships them.
    for (const mode of ["replication", "cluster"] as const)
      expect(readFileSync(join(result.runDir, "dashboards", dashboardFileName(mode)), "utf8")).toBe(
        dashboardJson(mode),
      );
    // Data transfer: every row measured; replication's SET streamed its 300-byte commands
    // (256-byte values, 16-byte keys) to three replicas, two in other zones than the primary.
    for (const r of rows) expect(r.cross_zone_bytes_per_s, `${r.mode} ${r.test}`).toBeGreaterThan(0);
    const file = transferFileSchema.parse(
      JSON.parse(readFileSync(join(result.runDir, "raw", "transfer-replication.json"), "utf8")),
    );
    const set = file.records.find((x) => x.test === "SET" && x.path === REPLICATION_PATH_NOTES.direct);
    expect(Math.abs((set?.figures?.replicationBytesPerOp ?? 0) - 900) / 900).toBeLessThan(0.05);
    expect(summary).toContain("## Data transfer");
    expect(result.table).toMatch(/SET/);
    expect(liveServerCount()).toBe(0);
    expect(trackedChildCount()).toBe(0);
  });

  it("leaves no process behind when interrupted with Ctrl-C mid-benchmark", async () => {
    const out = join(scratch, "interrupted");
    const run = await runCli(
      ["--requests", "2000000", "--min-duration", "30", "--tests", "set", "--output", out],
      /Benchmark replication/,
    );
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain("SIGINT: stopped every server and benchmark process");
    expect(await processesLeftWithMarker(run.marker)).toEqual([]);
  });

  it("stops the servers it started when a later step fails, and says why", async () => {
    // One zone: the AZ-aware planner cannot put any replica in a zone other than its primary's.
    const run = await runCli([
      "--zones",
      "only-one",
      "--requests",
      "1000",
      "--tests",
      "set",
      "--output",
      join(scratch, "fail"),
      "--quiet",
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/vbench: .*zone/);
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(await processesLeftWithMarker(run.marker)).toEqual([]);
  });

  it("rejects bad flags with exit 2 before starting anything", async () => {
    const zero = await runCli(["--repeat", "0", "--output", join(scratch, "usage")]);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain("--repeat must be a positive integer (got '0')");
    const soak = await runCli([
      "--mix",
      "get:100",
      "--sample-s",
      "1",
      "--duration-s",
      "4",
      "--repeat",
      "2",
      "--output",
      join(scratch, "usage"),
    ]);
    expect(soak.code).toBe(2);
    expect(soak.stderr).toContain("--repeat 2 runs of a soak: a soak runs once");
    const run = await runCli(["--tests", "set,bogus", "--output", join(scratch, "usage")]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown test(s) bogus");
    expect(existsSync(join(scratch, "usage"))).toBe(false);
    const bad = await runCli(["--requests", "lots"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--requests must be a positive integer (got 'lots')");
  });
});
