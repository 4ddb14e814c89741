/**
 * `vbench drill` as a user runs it (a child node process): --json figures and exit code, usage
 * errors (exit 2 before anything starts), Ctrl-C leaves no process behind; and
 * `vbench local --drills` appends drills.csv, the summary section and the terminal table.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DRILL_CSV_COLUMNS } from "../../core/drill/drill-table.js";
import { FAULTS } from "../../vocabulary/faults.js";
import { runLocalComparison } from "../../apps/vbench/local-comparison.js";
import { liveServerCount } from "../../harness/local/valkey-process.js";
import { trackedChildCount } from "../../core/util/process-reaper.js";
import { SEED_WORKLOAD } from "../../vocabulary/workload.js";
import { processesLeftWithMarker, runVbench, type CliRun } from "../support/processes.js";

const scratch = mkdtempSync(join(tmpdir(), "vbench-drill-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const vbench = (args: string[], interruptWhen?: RegExp): Promise<CliRun> =>
  runVbench(args, "VBENCH_DRILL_MARKER", interruptWhen);

const FAST = ["--duration-s", "1", "--warmup-s", "2", "--rate", "50"];

describe("vbench drill (CLI, real processes)", () => {
  it("--json: one object with the figures, the verifier's report, exit 0 when healed with nothing WAIT-confirmed lost", async () => {
    const out = join(scratch, "json");
    const run = await vbench(["drill", "--mode", "cluster", "--fault", "replica", ...FAST, "--json", "--output", out]);
    expect(run.code, run.stderr).toBe(0);
    const r = JSON.parse(run.stdout) as Record<string, unknown>;
    for (const key of [
      "mode",
      "fault",
      "ok",
      "writeOutageMs",
      "recoveryMs",
      "ackedWrites",
      "lostAckedWrites",
      "waitedWrites",
      "lostWaitedWrites",
      "p99MsBefore",
      "p99MsDuring",
      "after",
    ]) {
      expect(r, key).toHaveProperty(key);
    }
    expect(r).toMatchObject({
      mode: "cluster",
      fault: "replica",
      ok: true,
      lostWaitedWrites: 0,
      clientSettings: "recommended",
    });
    // The second client library wrote beside ioredis, into the same ledger.
    const streams = r.streams as { stream: string; ackedWrites: number }[];
    const shards = ["0-5460", "10922-16383", "5461-10921"];
    // Per shard a no-WAIT and a WAIT writer (in the order the shards were listed), then valkey-py's.
    expect(streams.map((s) => s.stream).sort()).toEqual(
      [...shards.flatMap((sh) => [`cluster-client@${sh}`, `cluster-client+wait@${sh}`]), "valkey-py-cluster"].sort(),
    );
    expect(streams.at(-1)!.stream).toBe("valkey-py-cluster");
    expect(streams.at(-1)!.ackedWrites).toBeGreaterThan(0);
    expect((r.after as { ok: boolean }).ok).toBe(true);
    expect(r.ackedWrites as number).toBeGreaterThan(0);
    expect(existsSync(join(out, "drill-cluster-replica.json"))).toBe(true);
    expect(await processesLeftWithMarker(run.marker)).toEqual([]);
  }, 120_000);

  it("usage errors exit 2 and name the flag", async () => {
    const bad = await vbench(["drill", "--mode", "cluster", "--fault", "meteor"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`--fault must be one of ${FAULTS.join(", ")} (got 'meteor')`);
    const mode = await vbench(["drill", "--mode", "sharded", "--fault", "primary"]);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain("--mode must be cluster or replication");
    const settings = await vbench([
      "drill",
      "--mode",
      "replication",
      "--fault",
      "primary",
      "--client-settings",
      "tuned",
    ]);
    expect(settings.code).toBe(2);
    expect(settings.stderr).toContain("--client-settings must be one of recommended, defaults (got 'tuned')");
    const noDrills = await vbench(["local", "--metrics"]);
    expect(noDrills.code).toBe(2);
    expect(noDrills.stderr).toContain("--metrics watches the drills: give --drills too");
    const local = await vbench(["local", "--drills", "primary,flood"]);
    expect(local.code).toBe(2);
    expect(local.stderr).toContain("--drills: unknown fault(s) flood");
  }, 60_000);

  it("Ctrl-C in the middle of a drill leaves no process behind", async () => {
    const run = await vbench(["drill", "--mode", "replication", "--fault", "primary", ...FAST], /fault: /);
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain("SIGINT: stopped every process it started");
    expect(await processesLeftWithMarker(run.marker)).toEqual([]);
  }, 120_000);
});

describe("vbench local --drills (real processes)", () => {
  it("appends the drills in both modes: drills.csv beside results.csv, the summary section, the terminal table", async () => {
    const result = await runLocalComparison({
      workload: { ...SEED_WORKLOAD, name: "test", requests: 2000, tests: ["set"], minDurationSeconds: 0 },
      replicas: 2,
      primaries: 3,
      replicasPerPrimary: 1,
      zones: ["zone-a", "zone-b", "zone-c"],
      outputDir: join(scratch, "local"),
      ioThreads: 1,
      timestamp: "20260101-000000",
      drills: ["replica"],
    });
    expect(result.drills.map((d) => `${d.mode}/${d.fault}`)).toEqual(["replication/replica", "cluster/replica"]);
    const csv = readFileSync(join(result.runDir, "drills.csv"), "utf8").trim().split("\n");
    expect(csv[0]).toBe(DRILL_CSV_COLUMNS.join(","));
    expect(csv.slice(1).map((l) => l.split(",").slice(0, 4).join(","))).toEqual([
      "replication,replica,true,true",
      "cluster,replica,true,true",
    ]);
    expect(existsSync(join(result.runDir, "results.csv"))).toBe(true);
    const summary = readFileSync(join(result.runDir, "summary.md"), "utf8");
    expect(summary).toContain("## Failure drills");
    expect(summary).toMatch(/\| replication \| replica \| yes \|/);
    expect(result.table).toMatch(/failure drills[\s\S]*replication\s+replica\s+yes[\s\S]*cluster\s+replica\s+yes/);
    expect(liveServerCount()).toBe(0);
    expect(trackedChildCount()).toBe(0);
  }, 240_000);
});
