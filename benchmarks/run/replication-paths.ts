/**
 * Replication mode is benchmarked on two paths (local-comparison.ts): through the HAProxy write
 * endpoint (the path a client without Sentinel support takes) and direct to the primary (the
 * seed's path). The side-by-side table compares cluster with the endpoint rows (the last
 * replication row per test); this table shows what the proxy hop costs, per test, with the range its
 * runs allow (run-spread.ts).
 */
import type { ResultRow } from "./result-row.js";
import { differenceRange, rangeOf, rangeText, ratioRange, type Range } from "./run-spread.js";
import { figureCells, ratioText } from "./figure-text.js";
import { alignedLines, markdownLines } from "./text-table.js";

/** The `notes` prefix of a replication row: which path the benchmark client took. */
export const REPLICATION_PATH_NOTES = {
  endpoint: "path: HAProxy write endpoint (role:master check) -> primary",
  direct: "path: direct to the primary",
} as const;

/** The replication rows whose notes start with `prefix`, by test. */
function byPath(rows: readonly ResultRow[], prefix: string): Map<string, ResultRow> {
  return new Map(rows.filter((r) => r.mode === "replication" && r.notes.startsWith(prefix)).map((r) => [r.test, r]));
}

export interface PathPair {
  test: string;
  endpoint: ResultRow;
  direct: ResultRow;
  /** endpoint rps / direct rps (the medians'). */
  rpsRatio: number;
  /** endpoint p50 - direct p50, ms (the medians'). */
  p50AddedMs: number;
  /** The same with the range the runs allow. */
  rpsRange: Range;
  p50AddedRange: Range;
}

export function replicationPathPairs(
  rows: readonly ResultRow[],
  notes: { endpoint: string; direct: string },
): PathPair[] {
  const endpoint = byPath(rows, notes.endpoint);
  const direct = byPath(rows, notes.direct);
  const out: PathPair[] = [];
  for (const [test, e] of endpoint) {
    const d = direct.get(test);
    if (d === undefined) continue;
    const rpsRange = ratioRange(rangeOf(e, "rps"), rangeOf(d, "rps"));
    const p50AddedRange = differenceRange(rangeOf(e, "p50"), rangeOf(d, "p50"));
    out.push({
      test,
      endpoint: e,
      direct: d,
      rpsRatio: rpsRange.median,
      p50AddedMs: p50AddedRange.median,
      rpsRange,
      p50AddedRange,
    });
  }
  return out;
}

const fmt = (n: number, digits: number): string => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

const signed = (x: number): string => `${x >= 0 ? "+" : ""}${fmt(x, 3)}`;

/**
 * Plain rows: test, endpoint rps/p50/p99, direct rps/p50/p99, endpoint÷direct rps, added p50 (each with its min–max
 * over several runs).
 */
export function replicationPathCells(pairs: readonly PathPair[]): string[][] {
  return pairs.map((p) => [
    p.test,
    ...figureCells(p.endpoint),
    ...figureCells(p.direct),
    ratioText(p.rpsRange),
    rangeText(p.p50AddedRange, signed),
  ]);
}

export const REPLICATION_PATH_HEADER = [
  "test",
  "endpoint rps",
  "p50 ms",
  "p99 ms",
  "direct rps",
  "p50 ms",
  "p99 ms",
  "endpoint ÷ direct rps",
  "p50 added ms",
];

/** Terminal text: a title line and aligned columns. */
export function renderReplicationPathTable(pairs: readonly PathPair[]): string {
  if (pairs.length === 0) return "";
  return [
    "replication: HAProxy write endpoint vs direct to the primary (the side-by-side table above uses the endpoint rows)",
    ...alignedLines(REPLICATION_PATH_HEADER, replicationPathCells(pairs), 1),
  ].join("\n");
}

/** summary.md section. */
export function renderReplicationPathMarkdown(pairs: readonly PathPair[]): string[] {
  if (pairs.length === 0) return [];
  return [
    "## Replication: write endpoint vs direct to the primary",
    "",
    "The Cluster-vs-Replication table above compares with the rows measured through the HAProxy write endpoint (the path an",
    "in-cluster client without Sentinel support takes). The seed benchmarked the primary directly; those rows are here, so the",
    "comparison with the seed's numbers stays fair.",
    "",
    ...markdownLines(REPLICATION_PATH_HEADER, replicationPathCells(pairs)),
    "",
  ];
}
