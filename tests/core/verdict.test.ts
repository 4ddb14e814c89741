/**
 * The computed "when to use which" (benchmarks/report/verdict.ts): every line comes from a
 * measurement it names, or says it was not measured; the choice only weighs measured lines.
 * Inputs: the fixture local run (a real `npm run local`), two fixture stack reports (one per mode,
 * with a price), and hand-added drills and loop figures.
 */
import { mkdtempSync, readFileSync, rmSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadSource } from "../../benchmarks/report/load.js";
import type { ReportSource } from "../../benchmarks/report/model.js";
import type { TransferFile, TransferRecord } from "../../benchmarks/cost/transfer-record.js";
import type { DrillView } from "../../benchmarks/report/drill-files.js";
import { renderVerdictMarkdown, verdict, verdictInputs, type VerdictLine } from "../../benchmarks/report/verdict.js";
import { writeRunVerdict } from "../../benchmarks/report/verdict-run.js";
import { buildReportHtml } from "../../benchmarks/report/page.js";
import { fixtureStackReport, LOCAL_RUN_DIR, writeJson } from "../support/report-fixtures.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const line = (lines: VerdictLine[], topic: VerdictLine["topic"]): VerdictLine => {
  const l = lines.find((x) => x.topic === topic);
  if (l === undefined) throw new Error(`no ${topic} line`);
  return l;
};

function drill(mode: "cluster" | "replication", outageMs: number, lost: number): DrillView {
  return {
    mode,
    fault: "primary",
    ok: true,
    healed: true,
    faultDescription: "primary killed",
    writeOutageMs: outageMs,
    recoveryMs: outageMs + 2000,
    detectionMs: 1000,
    writes: 1000,
    failedWrites: 40,
    ackedWrites: 960,
    lostAckedWrites: lost,
    waitedWrites: 950,
    lostWaitedWrites: 0,
    p99MsBefore: 1,
    p99MsDuring: 900,
    maxMsDuring: 1200,
    timeline: [],
  };
}

describe("verdict", () => {
  it("a local run with both modes: the write ceilings from its SET rows, each line naming its rows; what the run did not measure is said, not guessed", () => {
    const source = loadSource(LOCAL_RUN_DIR);
    const [cmp] = verdictInputs([source]);
    const lines = verdict(cmp!.input);
    const writes = line(lines, "writes");
    // The fixture run predates the path notes: its one replication SET row is taken, its path named as not recorded.
    const set = (mode: string) => source.rows.find((r) => r.mode === mode && r.test === "SET")!;
    expect(writes.measured).toBe(true);
    expect(writes.text).toContain(`one primary ${Math.round(set("replication").rps).toLocaleString("en-US")} ops/s`);
    expect(writes.text).toContain(`the cluster ${Math.round(set("cluster").rps).toLocaleString("en-US")} ops/s`);
    expect(writes.text).toContain("not a scale-out figure");
    expect(writes.from.join(" ")).toMatch(/replication SET row \(path not recorded\).*cluster SET row/);
    for (const t of ["reads", "latency", "slo", "failover", "cost"] as const) {
      expect(line(lines, t).measured, t).toBe(false);
      expect(line(lines, t).text, t).toMatch(/not measured/);
      expect(line(lines, t).from, t).toEqual([]);
    }
    const choice = line(lines, "choice");
    expect(choice.measured).toBe(true);
    expect(choice.text).toContain("Not measured, so not weighed: reads, latency, slo, failover, cost.");
  });

  it("drills, loop figures and prices make their lines; the choice weighs each", () => {
    const base = loadSource(LOCAL_RUN_DIR);
    const source: ReportSource = {
      ...base,
      drills: [drill("replication", 12_000, 3), drill("cluster", 2_500, 0)],
      loops: [
        {
          mode: "cluster",
          rate: 5000,
          durationSeconds: 30,
          closed: { rps: 4990, requests: 149_700, p50_ms: 0.3, p99_ms: 1.1, p999_ms: 2, max_ms: 1004 },
          open: { rps: 5000, requests: 150_000, p50_ms: 0.4, p99_ms: 812, p999_ms: 990, max_ms: 1004 },
        },
      ],
      rows: base.rows.map((r) => ({ ...r, usd_per_hour: r.mode === "cluster" ? 2 : 1, usd_per_million_ops_per_s: r.mode === "cluster" ? 20 : 9 })),
    };
    const lines = verdict({ replication: source, cluster: source });
    expect(line(lines, "failover").text).toBe(
      "A primary killed: replication: writes stopped 12.0 s, healed in 14.0 s, 3 of 960 acknowledged and 0 WAIT-confirmed writes lost; cluster: writes stopped 2.5 s, healed in 4.5 s, 0 of 960 acknowledged and 0 WAIT-confirmed writes lost.",
    );
    expect(line(lines, "latency").text).toContain(
      "cluster at 5,000/s p99 812.000 ms, p99.9 990.000 ms, max 1004.000 ms (the closed loop at the same rate: p99 1.100 ms)",
    );
    expect(line(lines, "latency").from).toEqual([`${source.label}: raw/loop-comparison-cluster.json`]);
    expect(line(lines, "cost").text).toBe(
      "Cost per 1M ops/s for an hour (on-demand estimate): SET replication $9.00, cluster $20.00; GET replication $9.00, cluster $20.00. " +
        "Data transfer: not measured (no member's INFO byte counters were read for these rows: a local run or a deployed mix reads them).",
    );
    const choice = line(lines, "choice").text;
    expect(choice).toContain("stopped writes for less time in cluster mode");
    expect(choice).toContain("a million SET/s costs less in replication mode");
    expect(choice).toContain("Not measured, so not weighed: reads, slo.");
  });

  it("the cost line carries data transfer: per mode the crossing bytes and their price, the placement and rate, in-zone reads' saving; a mode not measured says why, never $0", () => {
    const base = loadSource(LOCAL_RUN_DIR);
    const rate = { region: "us-east-1", usdPerGBEachDirection: 0.01, source: "t, read 2026-11-25" };
    const figures = (total: number, readSaving: number | null) => ({
      clientBytesPerOp: 300,
      replicationBytesPerOp: 900,
      crossZone: { client: total / 4, replication: (3 * total) / 4, bus: null, total },
      bus: "no cluster bus (replication mode)",
      readSaving,
    });
    const rec = (test: string, path: string, total: number, usd: number, saving: number | null): TransferRecord => ({
      test,
      path,
      rps: 40_000,
      requests: 100_000,
      seconds: 2.5,
      members: [],
      figures: figures(total, saving === null ? null : 1e6),
      usdPerHour: usd,
      readSavingUsdPerHour: saving,
    });
    const file = (mode: "replication" | "cluster", records: TransferRecord[]): TransferFile => ({
      mode,
      placement: "spread",
      clientZones: ["a", "b", "c"],
      zones: ["a", "b", "c"],
      rate,
      records,
    });
    const source: ReportSource = {
      ...base,
      transfer: [
        file("replication", [
          rec("SET", "path: HAProxy write endpoint (role:master check) -> primary", 9e6, 0.648, null),
          rec("SET", "path: direct to the primary", 33.8e6, 2.43, null),
          rec("GET", "path: direct to the primary", 10.1e6, 0.73, 0.72),
        ]),
        file("cluster", [
          rec("SET", "", 47e6, 3.39, null),
          { ...rec("GET", "", 0, 0, null), figures: null, usdPerHour: null, missing: "10.0.0.9:6379 is not in the topology report, so its zone is unknown" },
        ]),
      ],
    };
    const cost = line(verdict({ replication: source, cluster: source }), "cost");
    expect(cost.measured).toBe(false);
    expect(cost.text).toContain(
      "Data transfer (clients spread evenly over a, b, c (cost.clientZones spread: 2/3 of each member's client bytes cross zones); $0.01/GB in each direction (us-east-1; t, read 2026-11-25); what this traffic would cost on AWS)",
    );
    // Replication's SET is the row direct to the primary (as the write ceiling), not the endpoint's.
    expect(cost.text).toContain("SET replication 33.8 MB/s crossing zones, $2.43/h at 40,000 ops/s; cluster 47.0 MB/s crossing zones, $3.39/h at 40,000 ops/s");
    expect(cost.text).toContain(
      "GET replication 10.1 MB/s crossing zones, $0.7300/h at 40,000 ops/s; cluster not measured (10.0.0.9:6379 is not in the topology report, so its zone is unknown)",
    );
    expect(cost.text).toContain("Reads (GET) from a member in the client's own zone would save replication $0.7200/h.");
    expect(cost.text).not.toContain("cluster $0");
    expect(cost.from).toEqual([
      `${source.label}: replication data transfer (raw/transfer-replication.json or benchmark.transfer)`,
      `${source.label}: cluster data transfer (raw/transfer-cluster.json or benchmark.transfer)`,
    ]);
  });

  it("replication's ceiling is the row direct to the primary, not the one through the endpoint; a mix's rows are no ceiling", () => {
    const base = loadSource(LOCAL_RUN_DIR);
    const set = base.rows.find((r) => r.mode === "replication" && r.test === "SET")!;
    const rows = [
      ...base.rows.filter((r) => r !== set),
      { ...set, rps: 50_000, notes: "path: direct to the primary" },
      { ...set, rps: 30_000, notes: "path: HAProxy write endpoint (role:master check) -> primary" },
    ];
    const writes = line(verdict({ replication: { ...base, rows }, cluster: base }), "writes");
    expect(writes.text).toContain("one primary 50,000 ops/s");
    expect(writes.from[0]).toContain("(path: direct to the primary)");
    const mixOnly = base.rows.map((r) => ({ ...r, client_version: "vbench mix (vload)" }));
    expect(line(verdict({ replication: { ...base, rows: mixOnly }, cluster: { ...base, rows: mixOnly } }), "writes").text).toMatch(
      /^Write ceiling: not measured for replication and cluster/,
    );
  });

  it("two stacks, one per mode, are compared together; one stack alone has nothing to compare", () => {
    const dir = mkdtempSync(join(tmpdir(), "verdict-"));
    dirs.push(dir);
    // The deployed drills' figures (the stack report's `drills`, no per-write timeline) reach the failover line.
    const deployed = (mode: "cluster" | "replication", ms: number) => {
      const { timeline: _t, ...figures } = drill(mode, ms, 0);
      return { ...figures, loadPod: "vbench-drill-x", deletedPods: [] };
    };
    const c = loadSource(writeJson(dir, "cluster.json", { ...fixtureStackReport("cluster"), drills: [deployed("cluster", 3000)] }));
    const r = loadSource(writeJson(dir, "replication.json", { ...fixtureStackReport("replication"), drills: [deployed("replication", 9000)] }));
    const [cmp] = verdictInputs([c, r]);
    expect(cmp?.label).toBe(`${c.label} vs ${r.label}`);
    const lines = verdict(cmp!.input);
    expect(line(lines, "writes").measured).toBe(true);
    expect(line(lines, "failover").text).toContain("replication: writes stopped 9.0 s");
    expect(line(lines, "failover").text).toContain("cluster: writes stopped 3.0 s");
    expect(verdictInputs([c])).toEqual([]);
  });

  it("summary.md and the report carry the same lines (a copy of the fixture run)", () => {
    const dir = mkdtempSync(join(tmpdir(), "verdict-run-"));
    dirs.push(dir);
    cpSync(LOCAL_RUN_DIR, dir, { recursive: true });
    const text = writeRunVerdict(dir);
    const lines = verdict(verdictInputs([loadSource(dir)])[0]!.input);
    expect(text.split("\n").slice(1)).toEqual(lines.map((l) => `  - ${l.text}`));
    const summary = readFileSync(join(dir, "summary.md"), "utf8");
    for (const l of renderVerdictMarkdown("", lines)) expect(summary).toContain(l);
    const page = buildReportHtml({ title: "t", generatedAt: "now", sources: [loadSource(dir)] }, new Map());
    expect(page).toContain('id="verdict"');
    expect(page.match(/<li data-topic="/g)).toHaveLength(lines.length);
  });
});
