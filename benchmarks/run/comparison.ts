/**
 * The side-by-side view of a comparison: a plain-text table for the terminal and summary.md.
 * Every ratio is computed from the rows. rps figures are printed as measured: the tool has no
 * 1,000,000 rps cap, it divides requests by whole elapsed milliseconds, which is why the runner
 * keeps each test running for at least `minDurationSeconds`. Rows of several runs show their
 * median and min–max, a ratio the range its runs allow, and a ratio whose two sides' ranges
 * overlap says it is within run-to-run noise (run-spread.ts); a client-bound row says so
 * (client-cpu.ts).
 */
import type { ResultMode, ResultRow } from "./result-row.js";
import { isReadPathRow } from "./read-scale-out.js";
import { overlaps, rangeOf, ratioRange, type Range } from "./run-spread.js";
import { figureCells, fmtMs, ratioText } from "./figure-text.js";
import { clientCpuText } from "./client-cpu.js";
import { alignedLines } from "./text-table.js";

interface Pair {
  test: string;
  cluster?: ResultRow;
  replication?: ResultRow;
}

/**
 * Per test (in first-seen order), the last cluster row and the last replication row (read-path rows aside:
 * read-scale-out.ts).
 */
function pairByTest(rows: readonly ResultRow[]): Pair[] {
  const byTest = new Map<string, Pair>();
  for (const r of rows.filter((x) => !isReadPathRow(x))) {
    const p = byTest.get(r.test) ?? { test: r.test };
    p[r.mode] = r;
    byTest.set(r.test, p);
  }
  return [...byTest.values()];
}

export interface Speedup {
  /** cluster rps / replication rps (the medians'). */
  rps: number;
  /** replication p50 / cluster p50: above 1 means cluster mode has the lower p50. */
  p50: number;
  /** The same ratios with the range the runs allow (ratioRange). */
  rpsRange: Range;
  p50Range: Range;
  /** Whether the two sides' rps ranges overlap: a difference within run-to-run noise. */
  rpsWithinNoise: boolean;
}

export function clusterSpeedup(cluster: ResultRow, replication: ResultRow): Speedup | undefined {
  if (!(replication.rps > 0) || !(cluster.p50_ms > 0)) return undefined;
  const rpsRange = ratioRange(rangeOf(cluster, "rps"), rangeOf(replication, "rps"));
  const p50Range = ratioRange(rangeOf(replication, "p50"), rangeOf(cluster, "p50"));
  return {
    rps: rpsRange.median,
    p50: p50Range.median,
    rpsRange,
    p50Range,
    rpsWithinNoise: overlaps(rangeOf(cluster, "rps"), rangeOf(replication, "rps")),
  };
}

/**
 * The speedup cell: "2.50× rps · 3.14× lower p50", each with its range over several runs, and "within run-to-run noise"
 * when the rps ranges overlap over several runs.
 */
export function speedupCell(cluster: ResultRow, replication: ResultRow): string {
  const s = clusterSpeedup(cluster, replication);
  if (s === undefined) return "n/a";
  const p50 = s.p50 >= 1 ? `${ratioText(s.p50Range)} lower p50` : `${ratioText(s.p50Range, true)} higher p50`;
  const noise = s.rpsWithinNoise && s.rpsRange.runs > 1 ? ", within run-to-run noise" : "";
  return `${ratioText(s.rpsRange)} rps${noise} · ${p50}`;
}

function speedupText(p: Pair): string {
  if (p.cluster === undefined || p.replication === undefined) return "—";
  return speedupCell(p.cluster, p.replication);
}

const MODES: readonly ResultMode[] = ["cluster", "replication"];

/**
 * A row of the side-by-side table that is not a test's (e.g. throughput at a latency target, slo-table.ts), as text per
 * side.
 */
export interface SideRow {
  test: string;
  cluster: string;
  replication: string;
  speedup: string;
}

/**
 * Terminal tables: per test and mode, runs, rps, p50 and p99 (median and min–max over the runs)
 * and the client's CPU; then per test the cluster speedup (rps ratio, p50 ratio, with ranges).
 * Latencies in ms.
 */
export function renderComparisonTable(rows: readonly ResultRow[], extra: readonly SideRow[] = []): string {
  if (rows.length === 0 && extra.length === 0) return "(no results)";
  const pairs = pairByTest(rows);
  const body = pairs.flatMap((p) =>
    MODES.map((m) => {
      const r = p[m];
      return r === undefined
        ? [p.test, m, "—", "—", "—", "—", "—"]
        : [p.test, m, String(r.runs ?? 1), ...figureCells(r), clientCpuText(r)];
    }),
  );
  // A row that is not a test's (throughput at a latency target): its text in the rps column.
  body.push(...extra.flatMap((x) => MODES.map((m) => [x.test, m, "", x[m], "", "", ""])));
  const figures = alignedLines(
    ["test", "mode", "runs", "rps (min–max)", "p50 ms (min–max)", "p99 ms (min–max)", "client CPU"],
    body,
    2,
  );
  const speedups = alignedLines(
    ["test", "cluster speedup (rps ratio, p50 ratio)"],
    [...pairs.map((p) => [p.test, speedupText(p)]), ...extra.map((x) => [x.test, x.speedup])],
    2,
  );
  return [...figures, "", ...speedups].map((l) => l.trimEnd()).join("\n");
}

function mdCell(s: string | number): string {
  return String(s).replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function mdTable(header: string[], body: (string | number)[][]): string[] {
  return [
    `| ${header.map(mdCell).join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...body.map((r) => `| ${r.map(mdCell).join(" | ")} |`),
  ];
}

function distinct<T>(values: T[]): T[] {
  return [...new Set(values)];
}

export interface SummaryOptions {
  rows: readonly ResultRow[];
  title?: string;
  /** Markdown lines describing the topologies, inserted verbatim. */
  topology?: string[];
  versions: { server: string; client: string };
  /** Rows after the tests' in the side-by-side table (SideRow). */
  extraSideRows?: readonly SideRow[];
}

/** summary.md's closing section: how to read each figure. */
const READING_THE_NUMBERS: readonly string[] = [
  "## Reading the numbers",
  "",
  "- rps is what the benchmark client reports: requests divided by the test's elapsed time in whole",
  "  milliseconds. There is no 1,000,000 rps cap; a sub-second run simply gives a coarse, quantised",
  "  figure, so any test shorter than the workload's minimum duration was re-run with more requests",
  "  (see Notes).",
  "- Duration is the wall time of the benchmark process, connection set-up included.",
  "- Cluster speedup: cluster rps ÷ replication rps, and replication p50 ÷ cluster p50.",
  "- Runs: each measurement ran this many times, interleaved with the others (`--repeat`); a figure is the",
  "  median of its runs, (min–max) their lowest and highest, and a ratio's range goes from the lowest to the",
  "  highest the runs allow. Two figures whose ranges overlap differ by no more than run-to-run noise.",
  "- Client CPU: the load generator's CPU time over its wall time, as a share of the cores it may use",
  "  (min(its threads, its CPUs)). CLIENT-BOUND (≥ 90 %): the client was the limit, not the server; such a",
  "  row is no server ceiling.",
  "",
];

/** summary.md: workload, versions, topology, the side-by-side table and every row in full. */
export function renderSummaryMarkdown(o: SummaryOptions): string {
  const { rows } = o;
  const lines: string[] = [`# ${o.title ?? "Valkey benchmark: cluster mode vs replication mode"}`, ""];
  if (rows[0] !== undefined) lines.push(runLine(rows), "");
  lines.push(`- Server: ${o.versions.server}`, `- Benchmark client: ${o.versions.client}`, "");
  if (o.topology !== undefined && o.topology.length > 0) lines.push("## Topology", "", ...o.topology, "");
  lines.push("## Side by side", "");
  if (rows.length === 0) {
    lines.push("No results.", "");
    return lines.join("\n");
  }
  lines.push(...sideBySideMarkdown(rows, o.extraSideRows ?? []), "");
  for (const mode of MODES) {
    const mine = rows.filter((r) => r.mode === mode);
    if (mine.length === 0) continue;
    lines.push(`## ${mode === "cluster" ? "Cluster mode" : "Replication mode"}`, "");
    lines.push(...modeRowsMarkdown(mine), "");
  }
  lines.push(...READING_THE_NUMBERS);
  return lines.join("\n");
}

/** The run's timestamps, workloads, clients × pipeline and value sizes, in one line. */
function runLine(rows: readonly ResultRow[]): string {
  return (
    `Run ${distinct(rows.map((r) => r.timestamp)).join(", ")} · workload ${distinct(rows.map((r) => r.workload)).join(", ")} · ` +
    `${distinct(rows.map((r) => r.clients)).join("/")} clients × pipeline ${distinct(rows.map((r) => r.pipeline)).join("/")} · ` +
    `${distinct(rows.map((r) => r.datasize)).join("/")}-byte values`
  );
}

/** One side of a test in the side-by-side table: rps, p50, p99 (and the client CPU of a client-bound row). */
function fmtSide(r: ResultRow | undefined): string {
  if (r === undefined) return "—";
  const [rps, p50, p99] = figureCells(r);
  return `${rps} rps · p50 ${p50} ms · p99 ${p99} ms${r.client_bound === true ? ` · ${clientCpuText(r)}` : ""}`;
}

/** The side-by-side table: a row per test (cluster, replication, speedup), then the extra rows. */
function sideBySideMarkdown(rows: readonly ResultRow[], extra: readonly SideRow[]): string[] {
  return mdTable(
    ["Test", "Cluster", "Replication", "Cluster speedup (rps ratio, p50 ratio)"],
    [
      ...pairByTest(rows).map((p) => [p.test, fmtSide(p.cluster), fmtSide(p.replication), speedupText(p)]),
      ...extra.map((x) => [x.test, x.cluster, x.replication, x.speedup]),
    ],
  );
}

/** Every row of one mode in full. */
function modeRowsMarkdown(mine: readonly ResultRow[]): string[] {
  return mdTable(
    [
      "Test",
      "Runs",
      "Requests",
      "Duration (s)",
      "rps (min–max)",
      "avg ms",
      "min ms",
      "p50 ms (min–max)",
      "p95 ms",
      "p99 ms (min–max)",
      "max ms",
      "Client CPU",
      "Notes",
    ],
    mine.map((r) => {
      const [rps, p50, p99] = figureCells(r);
      return [
        r.test,
        r.runs ?? 1,
        r.requests,
        r.duration_s.toFixed(2),
        rps,
        fmtMs(r.avg_ms),
        fmtMs(r.min_ms),
        p50,
        fmtMs(r.p95_ms),
        p99,
        fmtMs(r.max_ms),
        clientCpuText(r),
        r.notes,
      ];
    }),
  );
}
