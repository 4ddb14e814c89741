/**
 * The read scale-out rows (pure): notes written and read back, each replica row paired with its
 * baseline (same mode, test and client; the matching primary path), the ratios, the side-by-side
 * table and the report leaving the read-path rows out, and the report's "Read scale-out" section.
 */
import { describe, expect, it } from "vitest";
import { renderComparisonTable } from "../../benchmarks/run/comparison.js";
import {
  parseReadPath,
  readPathNote,
  readScaleOutPairs,
  renderReadScaleOutMarkdown,
  renderReadScaleOutTable,
} from "../../benchmarks/run/read-scale-out.js";
import { REPLICATION_PATH_NOTES } from "../../benchmarks/run/replication-paths.js";
import { buildReportHtml } from "../../benchmarks/report/page.js";
import type { ReportSource } from "../../benchmarks/report/model.js";
import { resultRow } from "../support/result-rows.js";

const bench = "redis-benchmark 7.0.15";
const gen = "vbench mix (vload)";
const rows = [
  resultRow({
    mode: "replication",
    test: "GET",
    rps: 100_000,
    client_version: bench,
    notes: REPLICATION_PATH_NOTES.direct,
  }),
  resultRow({
    mode: "replication",
    test: "GET",
    rps: 80_000,
    client_version: bench,
    notes: REPLICATION_PATH_NOTES.endpoint,
  }),
  resultRow({
    mode: "replication",
    test: "GET",
    rps: 240_000,
    p50_ms: 0.3,
    client_version: bench,
    notes: `${readPathNote("replicasDirect", { replicas: 3, primaries: 1 })}; served ...`,
  }),
  resultRow({
    mode: "replication",
    test: "GET",
    rps: 120_000,
    client_version: bench,
    notes: readPathNote("readEndpoint", { replicas: 3, primaries: 1 }),
  }),
  resultRow({ mode: "cluster", test: "GET", rps: 300_000, client_version: bench }),
  resultRow({
    mode: "cluster",
    test: "GET",
    rps: 30_000,
    client_version: gen,
    notes: readPathNote("clusterPrimaries", { primaries: 3 }),
  }),
  resultRow({
    mode: "cluster",
    test: "GET",
    rps: 60_000,
    client_version: gen,
    notes: readPathNote("clusterReplicas", { replicas: 6, primaries: 3 }),
  }),
];

describe("read scale-out rows", () => {
  it("notes name the path and the servers, and read back", () => {
    expect(readPathNote("replicasDirect", { replicas: 1, primaries: 1 })).toMatch(
      /^path: reads direct to the replicas .* \[1 replica vs 1 primary\]$/,
    );
    expect(parseReadPath(`${readPathNote("clusterReplicas", { replicas: 6, primaries: 3 })}; x`)).toMatchObject({
      key: "clusterReplicas",
      replicas: 6,
      primaries: 3,
    });
    expect(parseReadPath(readPathNote("clusterPrimaries", { primaries: 3 }))).toMatchObject({
      key: "clusterPrimaries",
      replicas: undefined,
      primaries: 3,
    });
    expect(parseReadPath(REPLICATION_PATH_NOTES.direct)).toBeUndefined();
    expect(parseReadPath("path: reads from the replicas (READONLY) without servers")).toBeUndefined();
  });

  it("pairs each replica row with the same client's matching primary path, and computes the ratios", () => {
    const pairs = readScaleOutPairs(rows);
    expect(pairs.map((p) => [p.mode, p.path.label, p.primary.rps, p.replica.rps])).toEqual([
      ["replication", "direct to the replicas", 100_000, 240_000],
      ["replication", "HAProxy read endpoint", 80_000, 120_000],
      // Not the redis-benchmark row: the generator's own primaries baseline.
      ["cluster", "replicas (READONLY)", 30_000, 60_000],
    ]);
    expect(pairs[0]?.rpsRatio).toBeCloseTo(2.4);
    expect(pairs[0]?.perServerRatio).toBeCloseTo(0.8);
    expect(pairs[2]?.perServerRatio).toBeCloseTo(60_000 / 6 / (30_000 / 3));
    const text = renderReadScaleOutTable(pairs);
    expect(text).toMatch(/replication\s+GET\s+direct to the replicas\s+100,000 .* 240,000 .* 3 vs 1\s+2\.40×\s+0\.80×/);
    expect(text).toContain("the ratios prove the path, not the scale-out");
    expect(renderReadScaleOutMarkdown(pairs)[0]).toBe("## Read scale-out");
  });

  it("a mix: its read rows and MIX (no per-server ratio: its writes went to the primary), never its write rows", () => {
    const mixRows = ["GET", "SET", "MIX"].flatMap((test, i) => [
      resultRow({
        mode: "replication",
        test,
        rps: 100 * (i + 1),
        client_version: gen,
        notes: REPLICATION_PATH_NOTES.direct,
      }),
      resultRow({
        mode: "replication",
        test,
        rps: 150 * (i + 1),
        client_version: gen,
        notes: readPathNote("replicasDirect", { replicas: 3, primaries: 1 }),
      }),
    ]);
    const pairs = readScaleOutPairs(mixRows);
    expect(pairs.map((p) => p.test)).toEqual(["GET", "MIX"]);
    expect(pairs[0]?.perServerRatio).toBeCloseTo(0.5);
    expect(pairs[1]?.rpsRatio).toBeCloseTo(1.5);
    expect(pairs[1]?.perServerRatio).toBeNaN();
  });

  it("a replica row without a same-client baseline is left out", () => {
    expect(
      readScaleOutPairs(rows.filter((r) => r.client_version === gen && !r.notes.includes("primaries ["))).filter(
        (p) => p.mode === "cluster",
      ),
    ).toEqual([]);
  });

  it("the side-by-side table and the report's side-by-side compare the primary paths only", () => {
    const table = renderComparisonTable(rows);
    // Cluster GET: the redis-benchmark row (300,000), replication GET: the write endpoint row (80,000).
    expect(table).toMatch(/^GET\s+cluster\s+1\s+300,000 .*\n\s*GET\s+replication\s+1\s+80,000 /m);
    const source: ReportSource = {
      label: "local",
      kind: "local-run",
      path: "x",
      rows,
      topology: [],
      workload: {
        name: "w",
        tests: ["get"],
        clients: null,
        pipeline: null,
        dataSize: null,
        threads: null,
        keyspaceLength: null,
        requests: null,
        minDurationSeconds: null,
      },
      versions: [],
      machine: null,
      environment: "",
      describe: [],
    };
    const page = buildReportHtml({ title: "t", generatedAt: "2026-11-25T00:00:00Z", sources: [source] }, new Map());
    expect(page).toContain('data-section="read-scale-out"');
    expect(page).toMatch(
      /<section id="read-scale-out">[\s\S]*direct to the replicas[\s\S]*2\.40×[\s\S]*HAProxy read endpoint/,
    );
    const sideBySide = /<table class="side-by-side"[\s\S]*?<\/table>/.exec(page)?.[0] ?? "";
    expect(sideBySide).toContain("300,000");
    expect(sideBySide).not.toContain("240,000");
    const without = buildReportHtml(
      { title: "t", generatedAt: "2026-11-25T00:00:00Z", sources: [{ ...source, rows: rows.slice(0, 2) }] },
      new Map(),
    );
    expect(without).not.toContain('data-section="read-scale-out"');
  });
});
