/** The report loader: a real run's results dir, stack reports, and clear errors for bad input. */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadSource, loadSources, ReportLoadError, type StackReportInput } from "../../benchmarks/report/load.js";
import { stackReportSchema } from "../../benchmarks/report/stack-report-schema.js";
import type { StackReport } from "../../stacks/outputs.js";
import { fixtureStackReport, LOCAL_RUN_DIR, writeJson } from "../support/report-fixtures.js";

const scratch = mkdtempSync(join(tmpdir(), "vbench-report-load-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// Compile-time: every StackReport the stack outputs is accepted by the loader's schema type.
const _stackShapeFits = (r: StackReport): StackReportInput => r;
void _stackShapeFits;

function loadError(path: string): string {
  try {
    loadSource(path);
  } catch (err) {
    expect(err).toBeInstanceOf(ReportLoadError);
    return (err as Error).message;
  }
  throw new Error(`expected ${path} to be rejected`);
}

describe("loading a local run's results directory", () => {
  it("reads rows, workload, versions, machine and the verifier's topology per mode", () => {
    const s = loadSource(LOCAL_RUN_DIR);
    expect(s.kind).toBe("local-run");
    expect(s.label).toBe("local-run");
    expect(s.rows.map((r) => `${r.mode}/${r.test}`)).toEqual([
      "replication/SET",
      "replication/GET",
      "replication/INCR",
      "cluster/SET",
      "cluster/GET",
      "cluster/INCR",
    ]);
    expect(s.workload).toMatchObject({
      name: "fixture",
      tests: ["SET", "GET", "INCR"],
      clients: 50,
      pipeline: 16,
      dataSize: 256,
      threads: 4,
      requests: 20000,
    });
    expect(s.machine?.cpus).toBeGreaterThan(0);
    expect(s.versions.map(([k]) => k)).toContain("Valkey server");
    const cluster = s.topology.find((t) => t.mode === "cluster");
    expect(cluster?.ok).toBe(true);
    expect(cluster?.shards).toHaveLength(3);
    expect(cluster?.zones).toEqual(["zone-a", "zone-b", "zone-c"]);
    // The "after" report (keys counted after the benchmark) is the one shown.
    for (const shard of cluster?.shards ?? []) expect(shard.keys).toBeGreaterThan(0);
    expect(s.topology.find((t) => t.mode === "replication")?.shards[0]?.replicas).toHaveLength(3);
  });

  it("still loads a directory without run.json or verifier reports, marking those facts unrecorded", () => {
    const dir = join(scratch, "bare");
    mkdirSync(dir);
    cpSync(join(LOCAL_RUN_DIR, "results.csv"), join(dir, "results.csv"));
    const s = loadSource(dir);
    expect(s.machine).toBeNull();
    expect(s.topology).toEqual([]);
    expect(s.workload).toMatchObject({ clients: 50, pipeline: 16, threads: null, keyspaceLength: null });
  });

  it("names the directory when it holds no results.csv", () => {
    const dir = join(scratch, "empty");
    mkdirSync(dir);
    expect(loadError(dir)).toBe(
      `${dir}: no results.csv, sweep.csv or scale-ladder.json in this directory (is it a results/<timestamp>/ run directory?)`,
    );
  });

  it("names the file and the problem for a garbage results.csv", () => {
    const dir = join(scratch, "garbage");
    mkdirSync(dir);
    writeFileSync(join(dir, "results.csv"), "this is,not\na results file\n");
    expect(loadError(dir)).toMatch(
      new RegExp(`^${join(dir, "results.csv")}: results.csv (header is|is not valid CSV)`),
    );
  });

  it("names the row and column of a bad number", () => {
    const dir = join(scratch, "badnum");
    mkdirSync(dir);
    const csvPath = join(dir, "results.csv");
    const text = `workload,mode,test,rps,p50_ms,clients,pipeline,datasize,timestamp,p95_ms,p99_ms,duration_s,requests,server_version,client_version,avg_ms,min_ms,max_ms,notes\nx,cluster,SET,fast,1,50,16,256,20260101-000000,1,1,1,1,9,7,1,1,1,\n`;
    writeFileSync(csvPath, text);
    expect(loadError(dir)).toBe(`${csvPath}: results.csv line 2: rps is "fast", not a number`);
  });

  it("names the field of a malformed verifier report", () => {
    const dir = join(scratch, "badverify");
    cpSync(LOCAL_RUN_DIR, dir, { recursive: true });
    writeJson(join(dir, "raw"), "verify-cluster.json", { after: { ok: "yes" } });
    const msg = loadError(dir);
    expect(msg).toContain(join(dir, "raw", "verify-cluster.json"));
    expect(msg).toContain("after.ok");
  });
});

describe("loading a deployed stack's report", () => {
  it("accepts `pulumi stack output report --json` and the whole `pulumi stack output --json`", () => {
    const report = fixtureStackReport("cluster");
    const one = loadSource(writeJson(scratch, "cluster.json", report));
    expect(one.kind).toBe("stack");
    expect(one.label).toBe("stack cluster");
    expect(one.rows.every((r) => r.mode === "cluster")).toBe(true);
    expect(one.topology[0]?.shards).toHaveLength(3);
    expect(one.versions).toContainEqual(["Valkey image", report.versions.valkeyImage]);
    const all = loadSource(writeJson(scratch, "all-outputs.json", { report, kubeconfig: "[secret]" }));
    expect(all.rows).toEqual(one.rows);
  });

  it("names the field that is wrong", () => {
    const report = fixtureStackReport("cluster") as unknown as { benchmark: { rows: Record<string, unknown>[] } };
    (report.benchmark.rows[1] as Record<string, unknown>).p99_ms = "slow";
    const msg = loadError(writeJson(scratch, "bad-field.json", report));
    expect(msg).toContain("bad-field.json: not a stack report");
    expect(msg).toContain("benchmark.rows.1.p99_ms");
  });

  it("the stack's own report fits the one schema exactly; one written before `cost` and the drills were added still loads; a missing field is named", () => {
    for (const mode of ["cluster", "replication"] as const) {
      const written = JSON.parse(JSON.stringify(fixtureStackReport(mode))) as Record<string, unknown>;
      const strict = stackReportSchema.safeParse(written);
      expect(strict.success, strict.error?.message).toBe(true);
      const older = Object.fromEntries(
        Object.entries(written).filter(
          ([k]) => !["sentinels", "cost", "drills", "drillsCsv", "drillsNote"].includes(k),
        ),
      );
      expect(stackReportSchema.safeParse(older).success).toBe(false);
      expect(loadSource(writeJson(scratch, `older-${mode}.json`, older)).rows).toHaveLength(3);
      const { endpoints: _e, ...noEndpoints } = written;
      expect(loadError(writeJson(scratch, `no-endpoints-${mode}.json`, noEndpoints))).toContain("endpoints");
    }
  });

  it("rejects JSON that is not a stack report, and a report without benchmark rows", () => {
    expect(loadError(writeJson(scratch, "other.json", { hello: "world" }))).toMatch(
      /other\.json: not a stack report .*schemaVersion/,
    );
    expect(
      loadError(writeJson(scratch, "nobench.json", { ...fixtureStackReport("replication"), benchmark: null })),
    ).toContain("nobench.json: benchmark: the stack report has no benchmark rows");
    const broken = join(scratch, "broken.json");
    writeFileSync(broken, "{ not json");
    expect(loadError(broken)).toMatch(/broken\.json: not JSON: /);
  });
});

describe("loading several sources", () => {
  it("keeps their order and makes labels unique", () => {
    const sources = loadSources([LOCAL_RUN_DIR, LOCAL_RUN_DIR, join(LOCAL_RUN_DIR, "results.csv")]);
    expect(sources.map((s) => s.label)).toEqual(["local-run", "local-run (2)", "results.csv"]);
    expect(sources[2]?.kind).toBe("results-csv");
  });

  it("names a missing path", () => {
    expect(loadError(join(scratch, "nope"))).toBe(`${join(scratch, "nope")}: no such file or directory`);
    expect(() => loadSources([])).toThrow(/no source given/);
  });
});

describe("loading a file that is neither", () => {
  it("says it is not a results.csv, a directory or JSON", () => {
    const path = join(scratch, "notes.txt");
    writeFileSync(path, "just some text\nwith, commas, here\n");
    expect(loadError(path)).toMatch(
      new RegExp(`^${path}: not a results\\.csv \\(and not a directory or JSON\\): results\\.csv `),
    );
  });
});

describe("loading a sweep's results directory", () => {
  const SWEEP_HEADER =
    "workload,test,shards,replicas_per_primary,rps,p50_ms,p99_ms,scale,exponent,client_cpus,client_cpu_pct,client_saturated,pinned,duration_s,timestamp,server_version,client_version,notes";
  /** A new results directory `name` holding a sweep.csv of `rows` (CSV lines after the header). */
  const sweepDir = (name: string, rows: string): string => {
    const dir = join(scratch, name);
    mkdirSync(dir);
    writeFileSync(join(dir, "sweep.csv"), `${SWEEP_HEADER}\n${rows}`);
    return dir;
  };

  it("reads sweep.csv without a results.csv, and names a bad sweep.csv", () => {
    const dir = sweepDir(
      "sweep",
      `sweep,SET,1,0,100,1,2,1,,2,10,false,false,1,20260101-000000,9.1.2,redis-benchmark 7.0.15,\nsweep,SET,2,0,200,1,2,2,1,2,95,true,false,1,20260101-000000,9.1.2,redis-benchmark 7.0.15,\n`,
    );
    const s = loadSource(dir);
    expect(s.rows).toEqual([]);
    expect(s.sweep?.map((r) => [r.shards, r.exponent, r.client_saturated])).toEqual([
      [1, null, false],
      [2, 1, true],
    ]);
    expect(s.workload.tests).toEqual(["SET"]);
    writeFileSync(join(dir, "sweep.csv"), `${SWEEP_HEADER}\nsweep,SET,one,0,100,1,2,1,,2,10,false,false,1,t,v,c,\n`);
    expect(loadError(dir)).toMatch(new RegExp(`^${join(dir, "sweep.csv")}: sweep\\.csv line 2: shards: `));
  });

  it("a deployed stack's sweep (run.json names the stack): kind stack, where it ran, no machine", () => {
    const dir = sweepDir(
      "stack-sweep",
      `cluster,SET,3,1,100,1,2,1,,,,,false,1,20260101-000000,9.0.2,valkey-benchmark 9.0.2,\ncluster,SET,6,1,190,1,2,1.9,0.93,,,,false,1,20260101-000000,9.0.2,valkey-benchmark 9.0.2,\n`,
    );
    const workload = {
      name: "cluster",
      requests: 1000,
      clients: 4,
      pipeline: 1,
      dataSize: 16,
      threads: 1,
      keyspaceLength: 200,
      tests: ["set"],
      minDurationSeconds: 0,
      maxRequests: 1000,
    };
    const meta = {
      schemaVersion: 1,
      kind: "local-run",
      workload,
      versions: { server: "9.0.2", client: "valkey-benchmark 9.0.2", cli: "not used" },
      topologies: ["shard sweep: 3, 6"],
      stack: { name: "sw", platform: "eks", zones: ["a", "b"] },
    };
    writeFileSync(join(dir, "run.json"), JSON.stringify(meta));
    const s = loadSource(dir);
    expect(s.kind).toBe("stack");
    expect(s.machine).toBeNull();
    expect(s.environment).toMatch(
      /^eks stack "sw": one cluster-mode deployment scaled up step by step over zones a, b; the benchmark ran as the stack's Job inside the cluster/,
    );
    expect(s.sweep?.map((r) => [r.shards, r.client_cpus, r.client_saturated])).toEqual([
      [3, null, null],
      [6, null, null],
    ]);
  });
});
