/**
 * `vbench bench` against endpoints that already exist: a real valkey-server primary and a real
 * 2-shard cluster started here, each benchmarked through the CLI, then both rendered side by
 * side with `vbench report --from A --from B`.
 */
import { existsSync, readdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { loadSource, loadSources } from "../../benchmarks/report/load.js";
import type { ResultRow } from "../../benchmarks/run/result-row.js";
import { runVbench } from "../support/verify-helpers.js";

const scratch = mkdtempSync(join(tmpdir(), "vbench-bench-"));
const fleet = new LocalFleet();
let primary: ValkeyProcess;
let cluster: LocalCluster;

beforeAll(async () => {
  primary = await fleet.start({ name: "bench-primary" });
  cluster = await startLocalCluster(fleet, { primaries: 2, replicasPerPrimary: 1, zones: ["zone-a", "zone-b"] });
});
afterAll(async () => {
  await fleet.stopAll();
  rmSync(scratch, { recursive: true, force: true });
});

interface BenchOut {
  runDir: string;
  report: string;
  topologyOk: boolean;
  rows: ResultRow[];
}

const workload = ["--requests", "5000", "--min-duration", "0.3", "--tests", "set,get", "--repeat", "2"];

describe("vbench bench against an existing endpoint", () => {
  it("benchmarks a primary and a cluster, writes results and reports, and both render side by side", async () => {
    const [single, clustered] = await Promise.all([
      runVbench(["bench", "--target", primary.address, ...workload, "--output", join(scratch, "primary"), "--json"]),
      runVbench([
        "bench",
        "--target",
        cluster.seed.address,
        "--cluster",
        ...workload,
        "--output",
        join(scratch, "cluster"),
        "--json",
      ]),
    ]);
    expect(single.code, single.stderr).toBe(0);
    expect(clustered.code, clustered.stderr).toBe(0);
    const a = JSON.parse(single.stdout) as BenchOut;
    const b = JSON.parse(clustered.stdout) as BenchOut;
    expect(a.rows.map((r) => `${r.mode}/${r.test}`)).toEqual(["replication/SET", "replication/GET"]);
    expect(b.rows.map((r) => `${r.mode}/${r.test}`)).toEqual(["cluster/SET", "cluster/GET"]);
    for (const r of [...a.rows, ...b.rows]) {
      expect(r.rps).toBeGreaterThan(0);
      expect(r.server_version).toMatch(/^\d+\.\d+\.\d+$/);
      // --repeat 2: each row the median of two runs, their range around it.
      expect(r.runs).toBe(2);
      expect(r.rps_min! <= r.rps && r.rps <= r.rps_max!).toBe(true);
    }
    // The tests interleave across the runs (SET GET, SET GET), each run's rows and raw output kept.
    const record = JSON.parse(readFileSync(join(a.runDir, "raw", "runs.json"), "utf8")) as {
      repeat: number;
      steps: { run: number; rows: ResultRow[] }[];
    };
    expect(record.repeat).toBe(2);
    expect(record.steps.flatMap((x) => x.rows.map((r) => `${x.run}:${r.test}`))).toEqual([
      "1:SET",
      "1:GET",
      "2:SET",
      "2:GET",
    ]);
    expect(readdirSync(join(a.runDir, "raw", "run-2")).some((f) => f.startsWith("replication-set-"))).toBe(true);
    expect(b.topologyOk).toBe(true);
    for (const [dir, mode] of [
      [a.runDir, "replication"],
      [b.runDir, "cluster"],
    ] as const) {
      for (const f of ["results.csv", "summary.md", "run.json", "report.html", `raw/verify-${mode}.json`]) {
        expect(existsSync(join(dir, f)), `${dir}/${f}`).toBe(true);
      }
    }
    const src = loadSource(b.runDir);
    expect(src.kind).toBe("endpoint");
    expect(src.environment).toContain(cluster.seed.address);
    expect(src.topology[0]?.shards).toHaveLength(2);
    // The keys SET wrote are on the cluster's primaries, as the verifier counted them afterwards.
    expect(src.topology[0]?.shards.every((s) => (s.keys ?? 0) > 0)).toBe(true);

    const out = join(scratch, "side-by-side");
    const report = await runVbench(["report", "--from", a.runDir, "--from", b.runDir, "--output", out]);
    expect(report.code, report.stderr).toBe(0);
    const page = readFileSync(join(out, "report.html"), "utf8");
    // Labels as the report makes them (two runs in the same second get "ts" and "ts (2)").
    const [la, lb] = loadSources([a.runDir, b.runDir]).map((s) => s.label);
    expect(page).toContain(`${lb} vs ${la}`); // one cluster and one replication series: the speedup compares them
    expect(page).toContain("Endpoint benchmarks include the path to the endpoint.");
  }, 180_000);

  it("exits 2 for a bad or unreachable target, without a stack trace", async () => {
    const [bad, down] = await Promise.all([
      runVbench(["bench", "--target", "nohost", "--output", join(scratch, "x")]),
      runVbench(["bench", "--target", "127.0.0.1:1", "--output", join(scratch, "y")]),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--target: 'nohost' is not HOST:PORT");
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/^vbench: cannot reach 127\.0\.0\.1:1: /);
    for (const r of [bad, down]) expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(existsSync(join(scratch, "y"))).toBe(false);
  });
});
