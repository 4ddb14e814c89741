/** report.html's drill section: the table and the Vega-Lite timeline from a run's raw/drill-*.json. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { liveOpsData, timelineData } from "../../benchmarks/report/drill-section.js";
import { loadSources } from "../../benchmarks/report/load.js";
import { renderReport } from "../../benchmarks/report/render.js";
import { renderResultsCsv } from "../../benchmarks/run/results-csv.js";

const scratch = mkdtempSync(join(tmpdir(), "drill-report-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const row = {
  workload: "t",
  mode: "cluster" as const,
  test: "SET",
  rps: 1000,
  p50_ms: 1,
  clients: 1,
  pipeline: 1,
  datasize: 3,
  timestamp: "20260101-000000",
  p95_ms: 1,
  p99_ms: 1,
  duration_s: 1,
  requests: 1000,
  server_version: "9.0.0",
  client_version: "x",
  avg_ms: 1,
  min_ms: 1,
  max_ms: 1,
  notes: "",
};

function drill(mode: string, fault: string, lostWaited: number): object {
  const timeline = [
    { stream: "s1", t: -500, latencyMs: 1.5 },
    { stream: "s1", t: 100, latencyMs: null },
    { stream: "s1", t: 150, latencyMs: null },
    { stream: "s1", t: 2500, latencyMs: 40 },
  ];
  return {
    mode,
    fault,
    ok: lostWaited === 0,
    healed: true,
    faultDescription: `SIGKILL ${fault} <b>`,
    writeOutageMs: 2400,
    recoveryMs: 7000,
    detectionMs: fault === "all" ? null : 2100,
    writes: 4,
    failedWrites: 2,
    ackedWrites: 2,
    lostAckedWrites: lostWaited,
    waitedWrites: 2,
    lostWaitedWrites: lostWaited,
    p99MsBefore: 1.5,
    p99MsDuring: 40,
    maxMsDuring: 40,
    timeline,
  };
}

describe("report.html drill section", () => {
  it("renders the drill table (escaped, lost confirmed writes flagged) and the timeline chart when a run has drills", async () => {
    const dir = join(scratch, "run");
    mkdirSync(join(dir, "raw"), { recursive: true });
    writeFileSync(join(dir, "results.csv"), renderResultsCsv([row]));
    writeFileSync(join(dir, "raw", "drill-cluster-all.json"), JSON.stringify(drill("cluster", "all", 0)));
    writeFileSync(
      join(dir, "raw", "drill-replication-switchover.json"),
      JSON.stringify(drill("replication", "switchover", 3)),
    );
    const sources = loadSources([dir]);
    expect(sources[0]?.drills?.map((d) => `${d.mode}/${d.fault}`)).toEqual(["cluster/all", "replication/switchover"]);
    const data = timelineData({ title: "", generatedAt: "", sources });
    // Two failed writes in the same 0.2 s bucket become one failure tick; acknowledged keep their latency.
    expect(data.filter((d) => d.drill === "cluster · all")).toEqual([
      { drill: "cluster · all", stream: "s1", t: -0.6, latencyMs: 1.5, outcome: "acknowledged" },
      { drill: "cluster · all", stream: "s1", t: 2.4, latencyMs: 40, outcome: "acknowledged" },
      { drill: "cluster · all", stream: "s1", t: 0, latencyMs: 2000, outcome: "failed" },
    ]);
    const page = await renderReport(sources);
    expect(page).toContain('data-chart="drill-timeline"');
    expect(page).toContain("Failure drills");
    expect(page).toContain("SIGKILL all &lt;b&gt;");
    expect(page).toMatch(/<td>replication<\/td><td>switchover<\/td>.*<td class="num fail">3<\/td>/);
  }, 60_000);

  it("draws the live-metrics chart only for drills run with --metrics, from their range query's points", async () => {
    const dir = join(scratch, "live");
    mkdirSync(join(dir, "raw"), { recursive: true });
    writeFileSync(join(dir, "results.csv"), renderResultsCsv([row]));
    writeFileSync(join(dir, "raw", "drill-cluster-all.json"), JSON.stringify(drill("cluster", "all", 0)));
    const plain = loadSources([dir]);
    expect(liveOpsData({ title: "", generatedAt: "", sources: plain })).toEqual([]);
    expect(await renderReport(plain)).not.toContain('data-chart="drill-live-metrics"');
    const liveMetrics = {
      query: "q",
      series: [
        {
          pod: "member-0",
          points: [
            [-1, 900],
            [0, 950],
            [3, 0],
          ],
        },
        { pod: "member-1", points: [[3, 1200]] },
      ],
    };
    writeFileSync(
      join(dir, "raw", "drill-replication-primary.json"),
      JSON.stringify({ ...drill("replication", "primary", 0), liveMetrics }),
    );
    const sources = loadSources([dir]);
    expect(liveOpsData({ title: "", generatedAt: "", sources })).toEqual([
      { drill: "replication · primary", pod: "member-0", t: -1, ops: 900 },
      { drill: "replication · primary", pod: "member-0", t: 0, ops: 950 },
      { drill: "replication · primary", pod: "member-0", t: 3, ops: 0 },
      { drill: "replication · primary", pod: "member-1", t: 3, ops: 1200 },
    ]);
    const page = await renderReport(sources);
    expect(page).toContain('data-chart="drill-live-metrics"');
    expect(page).toContain("Live metrics during the drill");
    // A malformed point names its file and field.
    writeFileSync(
      join(dir, "raw", "drill-replication-primary.json"),
      JSON.stringify({
        ...drill("replication", "primary", 0),
        liveMetrics: { query: "q", series: [{ pod: "x", points: [[1]] }] },
      }),
    );
    expect(() => loadSources([dir])).toThrow(
      /drill-replication-primary\.json: not a drill result \(liveMetrics\.series\.0\.points\.0/,
    );
  }, 60_000);

  it("new faults (hyphenated names) are read, and the bound is shown with the lost writes outside it flagged", async () => {
    const dir = join(scratch, "bounds");
    mkdirSync(join(dir, "raw"), { recursive: true });
    writeFileSync(join(dir, "results.csv"), renderResultsCsv([row]));
    const bound = { fromMs: -2000, toMs: 4, writes: 202, reason: "AOF write window 2.0 s (appendfsync everysec)" };
    writeFileSync(
      join(dir, "raw", "drill-replication-crash-restart.json"),
      JSON.stringify({
        ...drill("replication", "crash-restart", 0),
        lostAckedWrites: 9,
        lostAckedOutsideBound: 7,
        unknownWrites: 0,
        ackedLossBound: bound,
      }),
    );
    const sources = loadSources([dir]);
    expect(sources[0]?.drills?.map((d) => d.fault)).toEqual(["crash-restart"]);
    const page = await renderReport(sources);
    expect(page).toContain(
      '<td class="num fail" title="AOF write window 2.0 s (appendfsync everysec)">≤202 (7 outside)</td>',
    );
  }, 60_000);

  it("cluster rows show each shard's outage (affected marked), the keyspace that stopped and the merged gap; the WAIT writer and unexpected replies have their columns", async () => {
    const dir = join(scratch, "shards");
    mkdirSync(join(dir, "raw"), { recursive: true });
    writeFileSync(join(dir, "results.csv"), renderResultsCsv([row]));
    writeFileSync(
      join(dir, "raw", "drill-cluster-primary.json"),
      JSON.stringify({
        ...drill("cluster", "primary", 0),
        writeOutageMs: 5400,
        aggregateOutageMs: 1200,
        shards: [
          { shard: "0-5460", slots: 5461, share: 5461 / 16384, outageMs: 5400, failedWrites: 380, affected: true },
          {
            shard: "5461-16383",
            slots: 10923,
            share: 10923 / 16384,
            outageMs: 1300,
            failedWrites: 30,
            affected: false,
          },
        ],
        keyspaceStopped: { slots: 5461, share: 5461 / 16384, forMs: 5400 },
        waitWriter: { writes: 100, ackedWrites: 90, lostAckedWrites: 2, lostAckedOutsideBound: 0 },
        unexpectedReplies: 4,
        failures: ["4 unexpected replies (not OK, never counted as acknowledged): cluster-client@0-5460: SET → 1"],
      }),
    );
    const page = await renderReport(loadSources([dir]));
    expect(page).toContain(
      "*0-5460: 5400 ms, 5461-16383: 1300 ms (33% of the slots stopped, up to 5.4 s; all shards merged: 1200 ms)",
    );
    expect(page).toContain('<td class="num">2 / 90</td>');
    expect(page).toContain(
      '<td class="num fail" title="4 unexpected replies (not OK, never counted as acknowledged): cluster-client@0-5460: SET → 1">4</td>',
    );
  }, 60_000);

  it("a run without drills has no drill section; a malformed drill file names itself", async () => {
    const dir = join(scratch, "plain");
    mkdirSync(join(dir, "raw"), { recursive: true });
    writeFileSync(join(dir, "results.csv"), renderResultsCsv([row]));
    expect(await renderReport(loadSources([dir]))).not.toContain('data-chart="drill-timeline"');
    writeFileSync(join(dir, "raw", "drill-cluster-zone.json"), JSON.stringify({ mode: "cluster" }));
    expect(() => loadSources([dir])).toThrow(/drill-cluster-zone\.json: not a drill result/);
  }, 60_000);
});
