/**
 * The drill matrix's reduction (core/drill/drill-matrix.ts): median and max per (mode, fault), each client path, the
 * targets.
 */
import { describe, expect, it } from "vitest";
import { matrixRows, medianMax, outageTargetMs, renderMatrix, type MatrixRun } from "../../core/drill/drill-matrix.js";

const run = (over: Partial<MatrixRun> & Pick<MatrixRun, "mode" | "fault">): MatrixRun => ({
  ok: true,
  healed: true,
  failures: [],
  recoveryMs: 9000,
  writeOutageMs: 6000,
  lostAckedWrites: 0,
  lostWaitedWrites: 0,
  unexpectedReplies: 0,
  streams: [],
  ...over,
});

describe("drill matrix", () => {
  it.each([
    [[], [0, 0]],
    [[7], [7, 7]],
    [
      [5, 1, 3],
      [3, 5],
    ],
    [
      [4, 1, 3, 2],
      [2, 4],
    ], // the lower median of an even count
  ] as const)("medianMax(%j) = %j", (values, expected) => {
    expect(medianMax(values)).toEqual(expected);
  });

  it.each([
    ["replication", "primary", 6500],
    ["replication", "crash-restart", 6500],
    ["replication", "lost-volume", 6500],
    ["replication", "freeze", 7500],
    ["replication", "partition", 7500],
    ["replication", "switchover", 1000],
    ["replication", "upgrade", 1000],
    ["replication", "replica", null],
    ["cluster", "primary", null],
  ] as const)("the %s %s outage target at down-after 5 s is %s ms", (mode, fault, target) => {
    expect(outageTargetMs(mode, fault, 5000)).toBe(target);
  });

  it("one row per (mode, fault): each no-WAIT client path's worst stream, the WAIT writer and shard streams left out of the paths", () => {
    const streams = (sentinel: number, endpoint: number) => [
      { stream: "sentinel-client", writeOutageMs: sentinel },
      { stream: "sentinel-client+wait", writeOutageMs: 99_000 },
      { stream: "write-endpoint", writeOutageMs: endpoint },
      { stream: "cluster-client@0-5460", writeOutageMs: 88_000 },
    ];
    const rows = matrixRows(
      [
        run({ mode: "replication", fault: "primary", streams: streams(6000, 7000), lostAckedWrites: 10 }),
        run({
          mode: "replication",
          fault: "primary",
          streams: streams(6200, 7900),
          lostAckedWrites: 30,
          recoveryMs: 12_000,
        }),
        run({
          mode: "replication",
          fault: "primary",
          streams: streams(6100, 7600),
          lostAckedWrites: 20,
          ok: false,
          failures: ["1 WAIT-confirmed writes lost"],
          lostWaitedWrites: 1,
        }),
        run({
          mode: "cluster",
          fault: "freeze",
          recoveryMs: null,
          healed: false,
          ok: false,
          failures: ["not healed"],
          writeOutageOpen: true,
        }),
      ],
      5000,
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      mode: "replication",
      fault: "primary",
      runs: 3,
      okRuns: 2,
      lostNoWait: [20, 30],
      lostWaitedMax: 1,
      paths: { "sentinel-client": [6100, 6200], "write-endpoint": [7600, 7900] },
      recoveryMs: [9000, 12_000],
      targetMs: 6500,
      failures: ["1 WAIT-confirmed writes lost"],
      openRuns: 0,
    });
    expect(rows[1]).toMatchObject({
      mode: "cluster",
      fault: "freeze",
      recoveryMs: null,
      targetMs: null,
      paths: {},
      openRuns: 1,
    });
    const table = renderMatrix(rows);
    expect(table).toContain(
      "| replication | primary | 2 / 3 | 20 / 30 | 1 | 0 | 6.00 / 6.00 | sentinel-client 6.10 / 6.20; write-endpoint 7.60 / 7.90 | 9.00 / 12.00 | 6.50 | 1.22× |",
    );
    expect(table).toContain("| cluster | freeze | 0 / 1 |");
    expect(table).toMatch(/\| cluster \| freeze \|.*\(≥: 1 ran to the load's end\) \|/);
    expect(table).toContain("not healed |");
    expect(table).toContain("- replication primary: 1 WAIT-confirmed writes lost");
  });
});
