/**
 * The computed "when to use which" (benchmarks/report/verdict.ts): every line comes from a
 * measurement it names, or says it was not measured; the choice only weighs measured lines.
 * Inputs: the fixture local run (a real `npm run local`), two fixture stack reports (one per mode,
 * with a price), and hand-added drills and loop figures; rows with their spread over runs and
 * client-bound rows; and two sets of runs of the SAME real valkey-server compared as if they were
 * the two topologies.
 */
import { mkdtempSync, readFileSync, rmSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { runWorkload } from "../../benchmarks/run/benchmark-runner.js";
import type { ResultMode, ResultRow } from "../../benchmarks/run/result-row.js";
import { aggregateRuns } from "../../benchmarks/run/run-spread.js";
import { clientCpuText } from "../../benchmarks/run/client-cpu.js";
import { REPLICATION_PATH_NOTES } from "../../benchmarks/run/replication-paths.js";
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
      drills: [
        {
          ...drill("replication", 12_000, 3),
          waitWriter: { writes: 1000, ackedWrites: 900, lostAckedWrites: 1, lostAckedOutsideBound: 0 },
          unexpectedReplies: 0,
        },
        {
          ...drill("cluster", 2_500, 0),
          waitWriter: { writes: 1000, ackedWrites: 950, lostAckedWrites: 0, lostAckedOutsideBound: 0 },
          shards: [
            { shard: "0-5460", slots: 5461, share: 5461 / 16384, outageMs: 2500, failedWrites: 40, affected: true },
            {
              shard: "5461-16383",
              slots: 10923,
              share: 10923 / 16384,
              outageMs: 120,
              failedWrites: 0,
              affected: false,
            },
          ],
          keyspaceStopped: { slots: 5461, share: 5461 / 16384, forMs: 2500 },
          aggregateOutageMs: 150,
        },
      ],
      loops: [
        {
          mode: "cluster",
          rate: 5000,
          durationSeconds: 30,
          closed: { rps: 4990, requests: 149_700, p50_ms: 0.3, p99_ms: 1.1, p999_ms: 2, max_ms: 1004 },
          open: { rps: 5000, requests: 150_000, p50_ms: 0.4, p99_ms: 812, p999_ms: 990, max_ms: 1004 },
        },
      ],
      rows: base.rows.map((r) => ({
        ...r,
        usd_per_hour: r.mode === "cluster" ? 2 : 1,
        usd_per_million_ops_per_s: r.mode === "cluster" ? 20 : 9,
      })),
    };
    const lines = verdict({ replication: source, cluster: source });
    expect(line(lines, "failover").text).toBe(
      "A primary killed: replication: writes stopped 12.0 s, healed in 14.0 s, 3 of 960 acknowledged writes lost without WAIT; with WAIT after every write 1 of 900, 0 WAIT-confirmed writes lost; " +
        "cluster: the affected shard's writes stopped 2.5 s, 33% of the slots (all shards merged: 0.1 s), healed in 4.5 s, 0 of 960 acknowledged writes lost without WAIT; with WAIT after every write 0 of 950, 0 WAIT-confirmed writes lost.",
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
    expect(choice).toContain(
      "stopped writes for less time in cluster mode (replication 12.0 s, cluster's affected shard 2.5 s)",
    );
    expect(choice).toContain("a million SET/s costs less in replication mode");
    expect(choice).toContain("Not measured, so not weighed: reads, slo.");
    // The shorter outage ran to the load's end: a lower bound decides nothing, and both lines say "at least".
    const open = {
      ...source,
      drills: source.drills!.map((d) => (d.mode === "cluster" ? { ...d, writeOutageOpen: true } : d)),
    };
    const undecided = verdict({ replication: open, cluster: open });
    expect(line(undecided, "choice").text).toContain(
      "which mode's writes stopped for less time after a primary's failure is not known (replication 12.0 s, cluster's affected shard at least 2.5 s",
    );
    expect(line(undecided, "failover").text).toContain("the affected shard's writes stopped at least 2.5 s");
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
          {
            ...rec("GET", "", 0, 0, null),
            figures: null,
            usdPerHour: null,
            missing: "10.0.0.9:6379 is not in the topology report, so its zone is unknown",
          },
        ]),
      ],
    };
    const cost = line(verdict({ replication: source, cluster: source }), "cost");
    expect(cost.measured).toBe(false);
    expect(cost.text).toContain(
      "Data transfer (clients spread evenly over a, b, c (cost.clientZones spread: 2/3 of each member's client bytes cross zones); $0.01/GB in each direction (us-east-1; t, read 2026-11-25); what this traffic would cost on AWS)",
    );
    // Replication's SET is the row direct to the primary (as the write ceiling), not the endpoint's.
    expect(cost.text).toContain(
      "SET replication 33.8 MB/s crossing zones, $2.43/h at 40,000 ops/s; cluster 47.0 MB/s crossing zones, $3.39/h at 40,000 ops/s",
    );
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
    expect(
      line(verdict({ replication: { ...base, rows: mixOnly }, cluster: { ...base, rows: mixOnly } }), "writes").text,
    ).toMatch(/^Write ceiling: not measured for replication and cluster/);
  });

  it("two stacks, one per mode, are compared together; one stack alone has nothing to compare", () => {
    const dir = mkdtempSync(join(tmpdir(), "verdict-"));
    dirs.push(dir);
    // The deployed drills' figures (the stack report's `drills`, no per-write timeline) reach the failover line.
    const deployed = (mode: "cluster" | "replication", ms: number) => {
      const { timeline: _t, ...figures } = drill(mode, ms, 0);
      return { ...figures, loadPod: "vbench-drill-x", deletedPods: [] };
    };
    const c = loadSource(
      writeJson(dir, "cluster.json", { ...fixtureStackReport("cluster"), drills: [deployed("cluster", 3000)] }),
    );
    const r = loadSource(
      writeJson(dir, "replication.json", {
        ...fixtureStackReport("replication"),
        drills: [deployed("replication", 9000)],
      }),
    );
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

/** Rows of several runs: a SET row per mode with its median and min–max rps. */
function spreadSource(
  base: ReportSource,
  sides: Record<ResultMode, { rps: number; min: number; max: number; bound?: boolean }>,
): ReportSource {
  const set = (mode: ResultMode): ResultRow => {
    const template = base.rows.find((r) => r.mode === mode && r.test === "SET") as ResultRow;
    const x = sides[mode];
    return {
      ...template,
      rps: x.rps,
      notes: mode === "replication" ? REPLICATION_PATH_NOTES.direct : "",
      runs: 3,
      rps_min: x.min,
      rps_max: x.max,
      ...(x.bound === undefined ? {} : { client_cpu_pct: x.bound ? 96.5 : 40, client_cores: 2, client_bound: x.bound }),
    };
  };
  return { ...base, rows: [set("replication"), set("cluster")] };
}

describe("verdict: medians with their ranges, run-to-run noise, client-bound rows", () => {
  const base = loadSource(LOCAL_RUN_DIR);

  it("ranges that overlap: no difference beyond run-to-run noise, both ranges said, no winner (the choice neither)", () => {
    const s = spreadSource(base, {
      replication: { rps: 50_000, min: 42_000, max: 61_000 },
      cluster: { rps: 58_000, min: 55_000, max: 66_000 },
    });
    const lines = verdict({ replication: s, cluster: s });
    const writes = line(lines, "writes").text;
    expect(writes).toMatch(
      /^Write ceiling \(SET\): no difference beyond run-to-run noise: one primary 50,000 \(42,000–61,000\) ops\/s/,
    );
    expect(writes).toContain("the cluster 58,000 (55,000–66,000) ops/s");
    expect(writes).toContain("(median and min–max of 3 runs each); the ranges overlap.");
    expect(writes).not.toMatch(/× one primary/);
    const choice = line(lines, "choice").text;
    expect(choice).toContain(
      "one primary and the cluster wrote alike here (no difference beyond run-to-run noise: 50,000 (42,000–61,000) against 58,000 (55,000–66,000) ops/s)",
    );
    expect(choice).not.toMatch(/only cluster mode went further|did not write faster/);
  });

  it("ranges apart: the ratio with the range its runs allow, and the choice may name the faster one", () => {
    const s = spreadSource(base, {
      replication: { rps: 50_000, min: 45_000, max: 52_000 },
      cluster: { rps: 120_000, min: 100_000, max: 130_000 },
    });
    const lines = verdict({ replication: s, cluster: s });
    // 120,000 ÷ 50,000 = 2.40; from 100,000 ÷ 52,000 to 130,000 ÷ 45,000.
    expect(line(lines, "writes").text).toContain(
      ", 2.40× (1.92–2.89×) one primary (median and min–max of 3 runs each).",
    );
    expect(line(lines, "writes").text).not.toContain("noise");
    expect(line(lines, "choice").text).toContain("only cluster mode went further here (120,000 ops/s)");
  });

  it("a client-bound row is no server ceiling: skipped, named with its client's CPU; none left: not measured, saying why", () => {
    const s = spreadSource(base, {
      replication: { rps: 50_000, min: 45_000, max: 52_000, bound: false },
      cluster: { rps: 120_000, min: 100_000, max: 130_000, bound: true },
    });
    const writes = line(verdict({ replication: s, cluster: s }), "writes");
    expect(writes.measured).toBe(false);
    expect(writes.text).toMatch(/^Write ceiling: not measured for cluster /);
    expect(writes.text).toContain("Skipped as no server ceiling, client-bound");
    expect(writes.text).toContain("cluster SET (CLIENT-BOUND: 96.5 % of 2 cores)");
    expect(line(verdict({ replication: s, cluster: s }), "choice").text).not.toContain("120,000");
    // The direct row bound, the endpoint row not: the endpoint row is the ceiling, the direct one named as skipped.
    const direct = s.rows.find((r) => r.mode === "replication") as ResultRow;
    const withEndpoint = {
      ...s,
      rows: [
        ...s.rows.map((r) =>
          r === direct ? { ...r, client_bound: true, client_cpu_pct: 99 } : { ...r, client_bound: false },
        ),
        {
          ...direct,
          rps: 30_000,
          rps_min: 29_000,
          rps_max: 31_000,
          notes: REPLICATION_PATH_NOTES.endpoint,
          client_bound: false,
        },
      ],
    };
    const w = line(verdict({ replication: withEndpoint, cluster: withEndpoint }), "writes");
    expect(w.text).toContain("one primary 30,000 (29,000–31,000) ops/s");
    expect(w.text).toContain(`replication SET (${REPLICATION_PATH_NOTES.direct}; CLIENT-BOUND: 99.0 % of 2 cores)`);
    expect(w.from[0]).toContain(REPLICATION_PATH_NOTES.endpoint);
  });

  it("one run each: the figures alone, and the line says noise was not measured", () => {
    const writes = line(verdict(verdictInputs([base])[0]!.input), "writes").text;
    expect(writes).toContain("One run: run-to-run noise not measured (`--repeat 3`).");
  });
});

describe("verdict on real runs: two sets of runs of the SAME valkey-server", () => {
  it("compared as the two topologies, the verdict says no difference beyond run-to-run noise", async () => {
    const fleet = new LocalFleet();
    const server = await fleet.start({ name: "same", save: "", appendonly: false });
    const client = resolveBinaries().benchmark;
    // Six rounds, the order alternating (A B, B A, ...) so neither side always runs first. Two client
    // threads: the client may use both cores, so the single-threaded server, not the load generator,
    // is the limit (with one thread the client sat at 82–96 % of its core, i.e. on the edge of
    // client-bound, and the verdict rightly refused the rows as ceilings). Each run at least 1 s (the
    // runner's re-run rule): with two threads the tool's window is rounded to 250 ms ticks, and the
    // client's CPU share is counted in 10 ms ticks, so a 30 ms run would measure neither.
    const workload = {
      name: "same",
      requests: 100_000,
      clients: 50,
      pipeline: 16,
      dataSize: 256,
      threads: 2,
      keyspaceLength: 100_000,
      tests: ["set" as const],
      minDurationSeconds: 1,
      maxRequests: 5_000_000,
    };
    const run = (mode: ResultMode) =>
      runWorkload({
        workload,
        target: { host: server.host, port: server.port, cluster: false },
        mode,
        client,
        serverVersion: "9",
        timestamp: "20260101-000000",
      });
    const runs: Record<ResultMode, ResultRow[][]> = { replication: [], cluster: [] };
    try {
      for (let k = 0; k < 6; k++) {
        const order: ResultMode[] = k % 2 === 0 ? ["replication", "cluster"] : ["cluster", "replication"];
        for (const mode of order) runs[mode].push(await run(mode));
      }
    } finally {
      await fleet.stopAll();
    }
    const source = (mode: ResultMode): ReportSource => ({
      ...loadSource(LOCAL_RUN_DIR),
      label: `same server as ${mode}`,
      kind: "endpoint",
      topology: [],
      rows: aggregateRuns(runs[mode]),
    });
    const [r, c] = [source("replication"), source("cluster")];
    expect(r.rows[0]?.runs).toBe(6);
    expect(c.rows[0]?.runs).toBe(6);
    // The premise: server ceilings, not the client's (else the verdict must skip them, and does).
    for (const s of [r, c]) expect(s.rows[0]?.client_bound, clientCpuText(s.rows[0] as ResultRow)).toBe(false);
    const lines = verdict({ replication: r, cluster: c });
    const writes = line(lines, "writes").text;
    const set = (s: ReportSource) => s.rows[0] as ResultRow;
    const fmt = (x: number) => Math.round(x).toLocaleString("en-US");
    expect(writes, writes).toContain("no difference beyond run-to-run noise");
    expect(writes).toContain(`(${fmt(set(r).rps_min!)}–${fmt(set(r).rps_max!)})`);
    expect(writes).toContain(`(${fmt(set(c).rps_min!)}–${fmt(set(c).rps_max!)})`);
    expect(line(lines, "choice").text).toContain("wrote alike here (no difference beyond run-to-run noise");
  }, 120_000);
});
