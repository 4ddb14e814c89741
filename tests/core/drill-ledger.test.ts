/** The drill's ledger and figures (pure): what counts as acknowledged, confirmed, lost, outage, latency windows. */
import { describe, expect, it } from "vitest";
import { DRILL_CSV_COLUMNS, renderDrillMarkdown, renderDrillsCsv, renderDrillTable, renderRollSteps } from "../../benchmarks/drill/drill-table.js";
import { combineStreams, latencyStats, longestGap, percentile, streamFigures, type WriteRecord } from "../../benchmarks/drill/ledger.js";
import { parseFaults } from "../../vocabulary/faults.js";

function rec(stream: string, n: number, sentAt: number, latency: number | null, waited = false): WriteRecord {
  return {
    stream,
    key: `k:${stream}:${n}`,
    value: `v${n}`,
    sentAt,
    doneAt: sentAt + (latency ?? 1000),
    ok: latency !== null,
    waited: latency !== null && waited,
  };
}

describe("drill ledger", () => {
  it("nearest-rank percentiles", () => {
    expect(percentile([], 99)).toBeNull();
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4], 99)).toBe(4);
    expect(
      percentile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        99,
      ),
    ).toBe(99);
  });

  it("the longest gap between acknowledgements: from the first ack (set-up is no outage) to the load's stop", () => {
    const rs = [rec("a", 1, 100, 1), rec("a", 2, 200, 1), rec("a", 3, 300, null), rec("a", 4, 900, 1)];
    expect(longestGap(rs, 0, 1000)).toEqual({ ms: 700, from: 201, to: 901 });
    // 500 ms to the first ack (connecting) is not counted; writes that never come back are.
    expect(longestGap([rec("a", 1, 500, 1), rec("a", 2, 600, 1)], 0, 2000)).toEqual({ ms: 1399, from: 601, to: 2000 });
    expect(longestGap([], 0, 1000).ms).toBe(1000);
  });

  it("latency windows by send time; failed writes counted apart", () => {
    const rs = [rec("a", 1, 0, 2), rec("a", 2, 10, 4), rec("a", 3, 20, null), rec("a", 4, 30, 8)];
    expect(latencyStats(rs, 0, 25)).toEqual({ count: 2, failed: 1, p50Ms: 2, p99Ms: 4, maxMs: 4 });
    expect(latencyStats(rs, 100, 200)).toEqual({ count: 0, failed: 0, p50Ms: null, p99Ms: null, maxMs: null });
  });

  it("lost = acknowledged but missing or different when read back; waited kept apart", () => {
    const rs = [rec("a", 1, 0, 1, true), rec("a", 2, 10, 1, true), rec("a", 3, 20, 1, false), rec("a", 4, 30, null)];
    const readBack = new Map<string, string | undefined>([
      ["k:a:1", "v1"],
      ["k:a:2", undefined],
      ["k:a:3", "other"],
    ]);
    const f = streamFigures("a", { records: rs, readBack, faultAt: 15, loadStart: 0, loadStop: 100 });
    expect(f).toMatchObject({ writes: 4, ackedWrites: 3, waitedWrites: 2, lostAckedWrites: 2, lostWaitedWrites: 1, lostKeys: ["k:a:2", "k:a:3"] });
    expect(f.lostAckedAtMs).toHaveLength(2);
    // Failed writes are never "lost": they were never acknowledged.
    expect(f.lostKeys).not.toContain("k:a:4");
  });

  it("combines streams: sums of ledgers, worst outage and latency", () => {
    const rs = [rec("a", 1, 0, 1, true), rec("a", 2, 500, 3, true), rec("b", 1, 0, 2), rec("b", 2, 50, 9)];
    const rb = new Map(rs.map((r) => [r.key, r.value]));
    const input = { records: rs, readBack: rb, faultAt: 40, loadStart: 0, loadStop: 600 };
    const c = combineStreams([streamFigures("a", input), streamFigures("b", input)]);
    expect(c).toMatchObject({ writes: 4, ackedWrites: 4, waitedWrites: 2, lostAckedWrites: 0, p99MsBefore: 2, p99MsDuring: 9 });
    expect(c.writeOutageMs).toBe(541);
  });

  it("parses fault lists and names unknown faults", () => {
    expect(parseFaults("primary, zone,primary")).toEqual(["primary", "zone"]);
    expect(() => parseFaults("primary,meteor")).toThrow(/unknown fault\(s\) meteor/);
    expect(() => parseFaults(" , ")).toThrow(/no fault/);
  });

  it("drills.csv: one row per drill, the figures as columns, empty for not observable", () => {
    const row = {
      mode: "cluster" as const,
      fault: "all" as const,
      ok: true,
      healed: true,
      writes: 10,
      failedWrites: 2,
      writeOutageMs: 1234,
      recoveryMs: 5000,
      detectionMs: null,
      ackedWrites: 8,
      lostAckedWrites: 0,
      waitedWrites: 8,
      lostWaitedWrites: 0,
      unknownWrites: 0,
      lostAckedOutsideBound: 0,
      ackedLossBound: { fromMs: -4000, toMs: 3, writes: 7, reason: "async replication window" },
      p50MsBefore: 1,
      p99MsBefore: 2,
      maxMsBefore: 3,
      p50MsDuring: 4,
      p99MsDuring: 5,
      maxMsDuring: 6,
      rate: 100,
      faultDescription: "SIGKILL, every member",
      timings: { failureDetectionMs: 2000, failoverTimeoutMs: 6000, restartDelayMs: 3000, zoneDownMs: 8000 },
      streams: [{ stream: "cluster-client" }],
    };
    const csv = renderDrillsCsv([row]).trim().split("\n");
    expect(csv[0]).toBe(DRILL_CSV_COLUMNS.join(","));
    expect(csv[1]).toBe(
      'cluster,all,true,true,1234,5000,,10,2,8,0,8,0,0,0,7,-4000,3,1,2,3,4,5,6,100,2000,cluster-client,"SIGKILL, every member",async replication window',
    );
    expect(renderDrillTable([row])).toMatch(/cluster\s+all\s+yes\s+yes\s+1234\s+5000\s+—\s+2\s+8\s+0\s+8\s+0\s+0\s+≤7 \(−4\.0…\+0\.0 s\)/);
    expect(renderRollSteps([row])).toEqual([]);
    const upgrade = {
      ...row,
      fault: "upgrade" as const,
      rollSteps: [
        { step: "restart replica a:1 (shard 0)", kind: "replica" as const, address: "a:1", startMs: 12, ms: 1250 },
        { step: "CLUSTER FAILOVER shard 0: b:2 → a:1", kind: "failover" as const, address: "a:1", startMs: 1262, ms: 280 },
      ],
    };
    expect(renderRollSteps([row, upgrade])).toEqual([
      "| mode | # | step | started (s into the roll) | until the verifier passed (s) |",
      "|---|---|---|---|---|",
      "| cluster | 1 | restart replica a:1 (shard 0) | 0.0 | 1.3 |",
      "| cluster | 2 | CLUSTER FAILOVER shard 0: b:2 → a:1 | 1.3 | 0.3 |",
    ]);
    expect(renderDrillMarkdown([upgrade]).join("\n")).toContain("### Rolling upgrade, step by step");
  });
});
