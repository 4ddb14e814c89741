/**
 * The side-by-side view of a comparison: a plain-text table for the terminal and summary.md.
 * Every ratio is computed from the rows. rps figures are printed as measured: the tool has no
 * 1,000,000 rps cap, it divides requests by whole elapsed milliseconds, which is why the runner
 * keeps each test running for at least `minDurationSeconds`.
 */
import type { ResultMode, ResultRow } from "./result-row.js";
import { isReadPathRow } from "./read-scale-out.js";

interface Pair {
  test: string;
  cluster?: ResultRow;
  replication?: ResultRow;
}

/** Per test (in first-seen order), the last cluster row and the last replication row (read-path rows aside: read-scale-out.ts). */
function pairByTest(rows: readonly ResultRow[]): Pair[] {
  const byTest = new Map<string, Pair>();
  for (const r of rows.filter((x) => !isReadPathRow(x))) {
    const p = byTest.get(r.test) ?? { test: r.test };
    p[r.mode] = r;
    byTest.set(r.test, p);
  }
  return [...byTest.values()];
}

const groups = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

function fmtRps(rps: number): string {
  return groups.format(Math.round(rps));
}

function fmtMs(ms: number): string {
  return ms.toFixed(3);
}

function ratio(x: number): string {
  return `${x.toFixed(2)}×`;
}

export interface Speedup {
  /** cluster rps / replication rps. */
  rps: number;
  /** replication p50 / cluster p50: above 1 means cluster mode has the lower p50. */
  p50: number;
}

export function clusterSpeedup(cluster: ResultRow, replication: ResultRow): Speedup | undefined {
  if (!(replication.rps > 0) || !(cluster.p50_ms > 0)) return undefined;
  return { rps: cluster.rps / replication.rps, p50: replication.p50_ms / cluster.p50_ms };
}

function speedupText(p: Pair): string {
  if (p.cluster === undefined || p.replication === undefined) return "—";
  const s = clusterSpeedup(p.cluster, p.replication);
  if (s === undefined) return "n/a";
  const p50 = s.p50 >= 1 ? `${ratio(s.p50)} lower p50` : `${ratio(1 / s.p50)} higher p50`;
  return `${ratio(s.rps)} rps · ${p50}`;
}

function side(r: ResultRow | undefined): [string, string, string] {
  return r === undefined ? ["—", "—", "—"] : [fmtRps(r.rps), fmtMs(r.p50_ms), fmtMs(r.p99_ms)];
}

const MODES: readonly ResultMode[] = ["cluster", "replication"];

/** A row of the side-by-side table that is not a test's (e.g. throughput at a latency target, slo-table.ts), as text per side. */
export interface SideRow {
  test: string;
  cluster: string;
  replication: string;
  speedup: string;
}

/** Columns padded to width; numbers right-aligned, the first and last column left-aligned. */
function alignTable(header: string[][], body: string[][]): string {
  const all = [...header, ...body];
  const widths = all[0]?.map((_, c) => Math.max(...all.map((row) => [...(row[c] ?? "")].length))) ?? [];
  const last = widths.length - 1;
  const line = (row: string[]): string =>
    row
      .map((cell, c) => {
        const pad = " ".repeat((widths[c] ?? 0) - [...cell].length);
        return c === 0 || c === last ? cell + pad : pad + cell;
      })
      .join("  ")
      .trimEnd();
  const rule = widths.map((wd) => "-".repeat(wd)).join("  ");
  return [...header.map(line), rule, ...body.map(line)].join("\n");
}

/**
 * Terminal table: per test, cluster rps · p50 · p99 | replication rps · p50 · p99 | cluster
 * speedup (rps ratio, p50 ratio). Latencies in ms.
 */
export function renderComparisonTable(rows: readonly ResultRow[], extra: readonly SideRow[] = []): string {
  if (rows.length === 0 && extra.length === 0) return "(no results)";
  const pairs = pairByTest(rows);
  const header = [
    ["", "cluster", "", "", "|", "replication", "", "", "|", "cluster speedup"],
    ["test", "rps", "p50 ms", "p99 ms", "|", "rps", "p50 ms", "p99 ms", "|", "(rps ratio, p50 ratio)"],
  ];
  const body = pairs.map((p) => [p.test, ...side(p.cluster), "|", ...side(p.replication), "|", speedupText(p)]);
  body.push(...extra.map((x) => [x.test, x.cluster, "", "", "|", x.replication, "", "", "|", x.speedup]));
  return alignTable(header, body);
}

function mdCell(s: string | number): string {
  return String(s).replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function mdTable(header: string[], body: (string | number)[][]): string[] {
  return [`| ${header.map(mdCell).join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...body.map((r) => `| ${r.map(mdCell).join(" | ")} |`)];
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

/** summary.md: workload, versions, topology, the side-by-side table and every row in full. */
export function renderSummaryMarkdown(o: SummaryOptions): string {
  const { rows } = o;
  const lines: string[] = [`# ${o.title ?? "Valkey benchmark: cluster mode vs replication mode"}`, ""];
  const first = rows[0];
  if (first !== undefined) {
    lines.push(
      `Run ${distinct(rows.map((r) => r.timestamp)).join(", ")} · workload ${distinct(rows.map((r) => r.workload)).join(", ")} · ` +
        `${distinct(rows.map((r) => r.clients)).join("/")} clients × pipeline ${distinct(rows.map((r) => r.pipeline)).join("/")} · ` +
        `${distinct(rows.map((r) => r.datasize)).join("/")}-byte values`,
      "",
    );
  }
  lines.push(`- Server: ${o.versions.server}`, `- Benchmark client: ${o.versions.client}`, "");
  if (o.topology !== undefined && o.topology.length > 0) lines.push("## Topology", "", ...o.topology, "");
  lines.push("## Side by side", "");
  if (rows.length === 0) {
    lines.push("No results.", "");
    return lines.join("\n");
  }
  const fmtSide = (r: ResultRow | undefined): string =>
    r === undefined ? "—" : `${fmtRps(r.rps)} rps · p50 ${fmtMs(r.p50_ms)} ms · p99 ${fmtMs(r.p99_ms)} ms`;
  lines.push(
    ...mdTable(
      ["Test", "Cluster", "Replication", "Cluster speedup (rps ratio, p50 ratio)"],
      [
        ...pairByTest(rows).map((p) => [p.test, fmtSide(p.cluster), fmtSide(p.replication), speedupText(p)]),
        ...(o.extraSideRows ?? []).map((x) => [x.test, x.cluster, x.replication, x.speedup]),
      ],
    ),
    "",
  );
  for (const mode of MODES) {
    const mine = rows.filter((r) => r.mode === mode);
    if (mine.length === 0) continue;
    lines.push(`## ${mode === "cluster" ? "Cluster mode" : "Replication mode"}`, "");
    lines.push(
      ...mdTable(
        ["Test", "Requests", "Duration (s)", "rps", "avg ms", "min ms", "p50 ms", "p95 ms", "p99 ms", "max ms", "Notes"],
        mine.map((r) => [
          r.test,
          r.requests,
          r.duration_s.toFixed(2),
          fmtRps(r.rps),
          fmtMs(r.avg_ms),
          fmtMs(r.min_ms),
          fmtMs(r.p50_ms),
          fmtMs(r.p95_ms),
          fmtMs(r.p99_ms),
          fmtMs(r.max_ms),
          r.notes,
        ]),
      ),
      "",
    );
  }
  lines.push(
    "## Reading the numbers",
    "",
    "- rps is what the benchmark client reports: requests divided by the test's elapsed time in whole",
    "  milliseconds. There is no 1,000,000 rps cap; a sub-second run simply gives a coarse, quantised",
    "  figure, so any test shorter than the workload's minimum duration was re-run with more requests",
    "  (see Notes).",
    "- Duration is the wall time of the benchmark process, connection set-up included.",
    "- Cluster speedup: cluster rps ÷ replication rps, and replication p50 ÷ cluster p50.",
    "",
  );
  return lines.join("\n");
}
