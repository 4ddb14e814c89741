/** The drill's ledger and figures (pure): what counts as acknowledged, confirmed, lost, outage, latency windows. */
import { describe, expect, it } from "vitest";
import {
  DRILL_CSV_COLUMNS,
  renderDrillMarkdown,
  renderDrillsCsv,
  renderDrillTable,
  renderRollSteps,
} from "../../core/drill/drill-table.js";
import {
  combineStreams,
  drillFailures,
  drillOk,
  FAILURE_KINDS,
  failureKinds,
  latencyStats,
  loadFigures,
  longestGap,
  outageOfFault,
  percentile,
  streamFigures,
  type WriteRecord,
} from "../../core/drill/ledger.js";
import { labelSlots, parseStreamName, streamName } from "../../core/drill/writers.js";
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

  it("the fault's outage: the longest gap ending after the fault, counted from it; a stop before the fault is not the fault's", () => {
    // Acks every 100 ms to 5 s, none until 19.5 s (a hand-over not yet followed), then every 100 ms; the fault at 19.3
    // s.
    const acks = [
      ...Array.from({ length: 50 }, (_, i) => i * 100),
      ...Array.from({ length: 10 }, (_, i) => 19_500 + i * 100),
    ];
    const rs = acks.map((t, i) => rec("a", i, t - 1, 1));
    // longestGap would say 14.5 s; the fault's outage is its last 200 ms, and its start is kept.
    expect(longestGap(rs, 0, 20_500).ms).toBe(14_600);
    expect(outageOfFault(rs, 0, 20_500, 19_300)).toEqual({ ms: 200, from: 4900, to: 19_500 });
    const f = streamFigures("a", {
      records: rs,
      readBack: new Map(rs.map((r) => [r.key, r.value])),
      faultAt: 19_300,
      loadStart: 0,
      loadStop: 20_500,
    });
    expect([f.writeOutageMs, f.outageFromMs, f.outageToMs]).toEqual([200, -14_400, 200]);
    // A longer gap after the fault wins; a gap wholly before it never counts; no ack after it: to the load's stop.
    expect(outageOfFault(rs, 0, 20_500, 4_000).ms).toBe(14_600);
    expect(outageOfFault(rs.slice(0, 50), 0, 8_000, 6_000)).toEqual({ ms: 2_000, from: 4900, to: 8_000 });
    expect(outageOfFault([], 0, 1_000, 400)).toEqual({ ms: 600, from: 0, to: 1_000 });
  });

  it("latency windows by send time; failed writes counted apart", () => {
    const rs = [rec("a", 1, 0, 2), rec("a", 2, 10, 4), rec("a", 3, 20, null), rec("a", 4, 30, 8)];
    expect(latencyStats(rs, 0, 25)).toEqual({ count: 2, failed: 1, p50Ms: 2, p99Ms: 4, maxMs: 4 });
    expect(latencyStats(rs, 100, 200)).toEqual({ count: 0, failed: 0, p50Ms: null, p99Ms: null, maxMs: null });
  });

  it("why writes failed from the fault on: each distinct error once, counted, first and last time; at most FAILURE_KINDS", () => {
    const failed = (n: number, at: number, error?: string, unexpectedReply?: string): WriteRecord => ({
      ...rec("a", n, at - 5, null),
      doneAt: at,
      ...(error === undefined ? {} : { error }),
      ...(unexpectedReply === undefined ? {} : { unexpectedReply }),
    });
    const rs = [
      failed(1, 900, "READONLY before the fault"),
      rec("a", 2, 1000, 1),
      failed(3, 1300, "NOREPLICAS Not enough good replicas to write."),
      failed(4, 1100, "connect ECONNREFUSED 10.0.0.1:6379"),
      failed(5, 2500, "NOREPLICAS   Not enough\ngood replicas to write."),
      failed(6, 2600, undefined, "SET → 1"),
    ];
    expect(failureKinds(rs, 1000)).toEqual([
      { error: "connect ECONNREFUSED 10.0.0.1:6379", count: 1, firstMs: 100, lastMs: 100 },
      { error: "NOREPLICAS Not enough good replicas to write.", count: 2, firstMs: 300, lastMs: 1500 },
      { error: "unexpected reply SET → 1", count: 1, firstMs: 1600, lastMs: 1600 },
    ]);
    const many = Array.from({ length: FAILURE_KINDS + 3 }, (_, i) => failed(i, 2000 + i, `error ${i}`));
    expect(failureKinds(many, 0).map((k) => k.error)).toEqual(
      Array.from({ length: FAILURE_KINDS }, (_, i) => `error ${i}`),
    );
    expect(failureKinds([failed(1, 10, "x".repeat(500))], 0)[0]!.error).toHaveLength(160);
    expect(
      streamFigures("a", { records: rs, readBack: new Map(), faultAt: 1000, loadStart: 0, loadStop: 3000 })
        .failureKinds,
    ).toHaveLength(3);
  });

  it("lost = acknowledged but missing or different when read back; waited kept apart", () => {
    const rs = [rec("a", 1, 0, 1, true), rec("a", 2, 10, 1, true), rec("a", 3, 20, 1, false), rec("a", 4, 30, null)];
    const readBack = new Map<string, string | undefined>([
      ["k:a:1", "v1"],
      ["k:a:2", undefined],
      ["k:a:3", "other"],
    ]);
    const f = streamFigures("a", { records: rs, readBack, faultAt: 15, loadStart: 0, loadStop: 100 });
    expect(f).toMatchObject({
      writes: 4,
      ackedWrites: 3,
      waitedWrites: 2,
      lostAckedWrites: 2,
      lostWaitedWrites: 1,
      lostKeys: ["k:a:2", "k:a:3"],
    });
    expect(f.lostAckedAtMs).toHaveLength(2);
    // Failed writes are never "lost": they were never acknowledged.
    expect(f.lostKeys).not.toContain("k:a:4");
  });

  it("combines streams: sums of ledgers, worst outage and latency", () => {
    const rs = [rec("a", 1, 0, 1, true), rec("a", 2, 500, 3, true), rec("b", 1, 0, 2), rec("b", 2, 50, 9)];
    const rb = new Map(rs.map((r) => [r.key, r.value]));
    const input = { records: rs, readBack: rb, faultAt: 40, loadStart: 0, loadStop: 600 };
    const c = combineStreams([streamFigures("a", input), streamFigures("b", input)]);
    expect(c).toMatchObject({
      writes: 4,
      ackedWrites: 4,
      waitedWrites: 2,
      lostAckedWrites: 0,
      p99MsBefore: 2,
      p99MsDuring: 9,
    });
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
      unexpectedReplies: 0,
      waitWriter: { writes: 10, ackedWrites: 9, lostAckedWrites: 0, lostAckedOutsideBound: 0, boundWrites: 8 },
      writeOutageOpen: false,
      aggregateOutageMs: 400,
      shards: [
        {
          shard: "0-8191",
          slots: 8192,
          share: 0.5,
          outageMs: 1234,
          outageFromMs: 0,
          outageToMs: 1234,
          outageOpen: false,
          failedWrites: 2,
          affected: true,
        },
        {
          shard: "8192-16383",
          slots: 8192,
          share: 0.5,
          outageMs: 300,
          outageFromMs: 10,
          outageToMs: 310,
          outageOpen: false,
          failedWrites: 0,
          affected: false,
        },
      ],
      keyspaceStopped: { slots: 0, share: 0, forMs: 0 },
      failures: [],
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
      'cluster,all,true,true,1234,false,5000,,10,2,8,0,8,0,0,0,0,9,0,0,400,0,0,0,*0-8191=1234 8192-16383=300,7,-4000,3,1,2,3,4,5,6,100,2000,cluster-client,"SIGKILL, every member",async replication window,,',
    );
    // Watched by live metrics: each alert's pending/firing/resolved seconds; watched and quiet: none.
    const watched = {
      ...row,
      alerts: [
        { alert: "ValkeyNoPrimary", severity: "critical", pendingMs: 2039, firingMs: null, resolvedMs: 4053 },
        {
          alert: "ValkeyPrimaryChanged",
          pod: "member-1",
          severity: "info",
          pendingMs: 4053,
          firingMs: 4053,
          resolvedMs: null,
        },
      ],
    };
    expect(renderDrillsCsv([watched]).trim().split("\n")[1]).toMatch(
      /,ValkeyNoPrimary 2\.0\/-\/4\.1; ValkeyPrimaryChanged\(member-1\) 4\.1\/4\.1\/-$/,
    );
    expect(
      renderDrillsCsv([{ ...row, alerts: [] }])
        .trim()
        .split("\n")[1],
    ).toMatch(/,none$/);
    expect(renderDrillMarkdown([watched]).join("\n")).toContain(
      "; alerts: ValkeyNoPrimary critical: pending +2.0 s, never fired, resolved +4.1 s; ValkeyPrimaryChanged (member-1) info",
    );
    expect(renderDrillTable([row])).toMatch(
      /cluster\s+all\s+yes\s+yes\s+1234\s+none\s+400\s+5000\s+—\s+2\s+8\s+0\s+0 \/ 9\s+8\s+0\s+0\s+0\s+≤7 \(−4\.0…\+0\.0 s\)/,
    );
    expect(renderDrillMarkdown([row]).join("\n")).toContain(
      "per shard (* affected): *0-8191: 1.2 s; 8192-16383: 0.3 s",
    );
    expect(renderDrillMarkdown([row]).join("\n")).not.toContain("why writes failed");
    // Why the writes failed, in the no-WAIT writers' own errors (the WAIT writer's are not repeated).
    const refused = {
      ...row,
      streams: [
        {
          stream: "cluster-client@0-8191",
          failureKinds: [
            { error: "CLUSTERDOWN The cluster is down", count: 12, firstMs: 120, lastMs: 1180 },
            { error: "a|b", count: 1, firstMs: -40, lastMs: -40 },
          ],
        },
        { stream: "cluster-client+wait@0-8191", failureKinds: [{ error: "WAIT", count: 3, firstMs: 1, lastMs: 2 }] },
        { stream: "cluster-client@8192-16383", failureKinds: [] },
      ],
    };
    expect(renderDrillMarkdown([refused]).join("\n")).toContain(
      "; why writes failed: cluster-client@0-8191: CLUSTERDOWN The cluster is down ×12 (+0.1…+1.2 s), a\\|b ×1 (−0.0…−0.0 s)\n",
    );
    // An outage still running when the load stopped is shown as a lower bound, in the table and the CSV.
    const open = { ...row, writeOutageOpen: true };
    expect(renderDrillTable([open])).toMatch(/cluster\s+all\s+yes\s+yes\s+≥ 1234\s+none/);
    expect(renderDrillsCsv([open]).split("\n")[1]).toMatch(/^cluster,all,true,true,1234,true,5000,/);
    const failed = {
      ...row,
      ok: false,
      unexpectedReplies: 3,
      failures: ["3 unexpected replies (not OK, never counted as acknowledged): cluster-client@0-8191: SET → 1"],
    };
    expect(renderDrillTable([failed])).toMatch(/\s3 FAIL\s/);
    expect(renderDrillMarkdown([failed]).join("\n")).toContain("NOT ok: 3 unexpected replies");
    expect(renderRollSteps([row])).toEqual([]);
    const upgrade = {
      ...row,
      fault: "upgrade" as const,
      rollSteps: [
        { step: "restart replica a:1 (shard 0)", kind: "replica" as const, address: "a:1", startMs: 12, ms: 1250 },
        {
          step: "CLUSTER FAILOVER shard 0: b:2 → a:1",
          kind: "failover" as const,
          address: "a:1",
          startMs: 1262,
          ms: 280,
        },
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

describe("two writers, per-shard outage, exact acknowledgements", () => {
  const shardA = streamName({ client: "cluster-client", writer: "no-wait", shard: "0-8191" });
  const shardB = streamName({ client: "cluster-client", writer: "no-wait", shard: "8192-16383" });
  const waitA = streamName({ client: "cluster-client", writer: "wait", shard: "0-8191" });

  it("stream names carry the writer and the shard, and read back", () => {
    expect(shardA).toBe("cluster-client@0-8191");
    expect(waitA).toBe("cluster-client+wait@0-8191");
    expect(parseStreamName(waitA)).toEqual({ client: "cluster-client", writer: "wait", shard: "0-8191" });
    expect(parseStreamName("write-endpoint")).toEqual({ client: "write-endpoint", writer: "no-wait" });
    expect(labelSlots("0-99,200-299,5")).toBe(201);
    expect(() => labelSlots("0-99-1")).toThrow(/not a shard label/);
  });

  it("the headline ledger is the no-WAIT writer's; the WAIT writer has its own; the outage is the affected shard's, the aggregate apart", () => {
    // Shard A stops from 1 s to 4 s (t=1000); shard B writes on; the WAIT writer loses one write, the no-WAIT writer
    // two.
    const rs: WriteRecord[] = [];
    for (let t = 0; t < 6000; t += 100) {
      rs.push(rec(shardB, t, t, 1));
      if (t < 1000 || t >= 4000) rs.push(rec(shardA, t, t, 1));
      else rs.push(rec(shardA, t, t, null));
      if (t % 500 === 0) rs.push(rec(waitA, t, t, 1, t !== 500));
    }
    const lost = new Set([`k:${shardA}:800`, `k:${shardA}:900`, `k:${waitA}:500`]);
    const readBack = new Map(rs.filter((r) => r.ok).map((r) => [r.key, lost.has(r.key) ? undefined : r.value]));
    const f = loadFigures([shardA, waitA, shardB], {
      records: rs,
      readBack,
      faultAt: 1000,
      loadStart: 0,
      loadStop: 6000,
      bound: { fromMs: -1000, toMs: 0, reason: "test" },
      affectedShards: ["0-8191"],
    });
    expect(f.lostAckedWrites).toBe(2);
    expect(f.ackedWrites).toBe(60 + 30);
    expect(f.waitWriter).toEqual({
      writes: 12,
      ackedWrites: 12,
      lostAckedWrites: 1,
      lostAckedOutsideBound: 0,
      boundWrites: 2,
    });
    expect(f.waitedWrites).toBe(11);
    expect(f.lostWaitedWrites).toBe(0);
    // Last ack before the stop at 901 ms, first after it at 4001 ms: the outage counts from the fault (1000 ms).
    expect(f.writeOutageMs).toBe(3001);
    expect(f.aggregateOutageMs).toBe(100);
    expect(f.shards.map((s) => [s.shard, s.outageMs, s.affected, s.failedWrites])).toEqual([
      ["0-8191", 3001, true, 30],
      ["8192-16383", 100, false, 0],
    ]);
    expect(f.keyspaceStopped).toEqual({ slots: 8192, share: 0.5, forMs: 3001 });
    expect(drillFailures(true, f)).toEqual([]);
    expect(f.writeOutageOpen).toBe(false);
  });

  it("an outage still running when the load stops is flagged open (a lower bound), per stream and in the headline", () => {
    // Shard A stops at 1 s and never writes again before the load stops at 6 s; shard B stops 0.5 s and resumes.
    const rs: WriteRecord[] = [];
    for (let t = 0; t < 6000; t += 100) {
      rs.push(rec(shardA, t, t, t < 1000 ? 1 : null));
      rs.push(rec(shardB, t, t, t >= 2000 && t < 2500 ? null : 1));
    }
    const readBack = new Map(rs.filter((r) => r.ok).map((r) => [r.key, r.value]));
    const input = { records: rs, readBack, faultAt: 1000, loadStart: 0, loadStop: 6000 };
    const f = loadFigures([shardA, shardB], { ...input, affectedShards: ["0-8191"] });
    expect(f.streams.map((x) => [x.stream, Math.round(x.writeOutageMs), x.outageOpen])).toEqual([
      [shardA, 5000, true],
      [shardB, 600, false],
    ]);
    expect([f.writeOutageMs, f.writeOutageOpen]).toEqual([5000, true]);
    // The headline is the affected shard's: when that is the one that resumed, the open stream does not make it a bound.
    const other = loadFigures([shardA, shardB], { ...input, affectedShards: ["8192-16383"] });
    expect([other.writeOutageMs, other.writeOutageOpen]).toEqual([600, false]);
  });

  it("a load that ended before the fault is not a measurement: the drill fails naming it", () => {
    // The fault at 7 s; the load wrote from 0 to 5 s (a fault injected after its load ended: every outage reads 0).
    const rs: WriteRecord[] = [];
    for (let t = 0; t < 5000; t += 100) {
      rs.push(rec(shardA, t, t, 1));
      rs.push(rec(shardB, t, t, t < 3000 ? 1 : null));
    }
    const readBack = new Map(rs.filter((r) => r.ok).map((r) => [r.key, r.value]));
    const late = loadFigures([shardA, shardB], {
      records: rs,
      readBack,
      faultAt: 7000,
      loadStart: 0,
      loadStop: 5000,
      bound: { fromMs: -1000, toMs: 0, reason: "test" },
    });
    expect([late.writeOutageMs, late.streams.map((x) => [x.sentFromFault, x.lastSentMs])]).toEqual([
      0,
      [
        [0, -2100],
        [0, -2100],
      ],
    ]);
    expect(drillFailures(true, late)).toEqual([
      "not measured: the load sent nothing from the fault on (its last write −2.10 s from the fault): the load ended before the fault",
    ]);
  });

  it("a lost write outside the bound fails the drill naming when it was acknowledged and by which node, per writer", () => {
    const node = (r: WriteRecord, n: string): WriteRecord => ({ ...r, node: n });
    const rs: WriteRecord[] = [
      node(rec("cluster-client@0-8191", 1, 900, 50), "a:6379"), // +0.95 s: inside −1.0…+1.0 s
      node(rec("cluster-client@0-8191", 2, 1000, 2390.4), "a:6379"), // +2.39 s: outside
      node(rec("cluster-client@0-8191", 3, 1000, 3000), "b:6379"), // +3.00 s: outside
      rec("cluster-client@0-8191", 4, 1000, 3100), // +3.10 s: outside, no node
      node(rec("cluster-client+wait@0-8191", 1, 1000, 1500), "10.0.0.9:6379"), // +1.50 s: outside (its WAIT did not confirm it)
    ];
    const f = loadFigures(["cluster-client@0-8191", "cluster-client+wait@0-8191"], {
      records: rs,
      readBack: new Map(rs.map((r) => [r.key, undefined])),
      faultAt: 1000,
      loadStart: 0,
      loadStop: 5000,
      bound: { fromMs: -1000, toMs: 1000, reason: "test" },
    });
    expect(f.streams[0]?.lostOutside).toEqual({ fromMs: 2390, toMs: 3100, nodes: ["a:6379", "b:6379", "unknown"] });
    expect(drillFailures(true, f)).toEqual([
      "3 lost acknowledged writes (no-WAIT writer) outside the bound (acknowledged +2.39…+3.10 s after the fault, by a:6379, b:6379, unknown)",
      "4 acknowledged writes lost (no-WAIT writer), more than the bound's 1",
      "1 lost acknowledged writes (WAIT writer) outside the bound (acknowledged +1.50…+1.50 s after the fault, by 10.0.0.9:6379)",
    ]);
  });

  it("an unexpected reply is neither acknowledged nor failed-with-error, and fails the drill naming it", () => {
    const rs: WriteRecord[] = [
      rec("write-endpoint", 1, 0, 1),
      { ...rec("write-endpoint", 2, 10, 1), ok: false, unexpectedReply: "SET → 1" },
    ];
    const f = loadFigures(["write-endpoint"], {
      records: rs,
      readBack: new Map([["k:write-endpoint:1", "v1"]]),
      faultAt: 5,
      loadStart: 0,
      loadStop: 20,
      bound: { fromMs: -1000, toMs: 0, reason: "test" },
    });
    expect(f).toMatchObject({
      ackedWrites: 1,
      failedWrites: 1,
      unexpectedReplies: 1,
      unexpectedReplySamples: ["write-endpoint: SET → 1"],
      waitWriter: null,
    });
    expect(drillOk(true, f)).toBe(false);
    expect(drillFailures(true, f)).toEqual([
      "1 unexpected replies (not OK, never counted as acknowledged): write-endpoint: SET → 1",
    ]);
  });
});
