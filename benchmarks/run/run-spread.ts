/**
 * Every figure with its spread (`--repeat N`, `benchmark.repeat`): the rows of N runs of the same
 * measurement become one row whose figures are the medians and whose spread columns say the
 * lowest and highest value over the runs; ratios between two such rows carry the range the runs
 * allow, and two figures whose ranges overlap are no difference beyond run-to-run noise. Pure.
 *
 * Which rows are the same measurement: the same mode, client (`client_version`), path (the
 * `path: …` clause the notes start with, without its server counts) and test. Per group:
 *
 * - rps, p50, p95, p99, avg (and p99.9 when every run has it): the median of the runs' values,
 *   each column on its own (the median rps and the median p99 may come from different runs);
 * - min and max latency: the lowest and the highest of the runs';
 * - rps_min/max, p50/p95/p99_min/max_ms: the lowest and highest of the runs' values; `runs`: N;
 * - the client's CPU: the busiest run's (client-bound when any run was);
 * - everything else (requests, duration, notes, timestamp): the run whose rps is the median
 *   (the lower one of the middle two for an even N), and the notes say which run that was.
 */
import { isClientBound } from "./client-cpu.js";
import type { ResultRow } from "./result-row.js";

/** A figure over its runs: the median and the lowest and highest value. */
export interface Range {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export type Figure = "rps" | "p50" | "p95" | "p99";

const round = (x: number, digits: number): number => Number(x.toFixed(digits));

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) throw new RangeError("median of no values");
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** The `path: …` clause a row's notes start with, server counts (`[3 replicas vs 1 primary]`) left out; "" for none. */
export function pathOf(notes: string): string {
  if (!notes.startsWith("path: ")) return "";
  return (notes.split("; ")[0] as string).replace(/ \[[^\]]*\]$/, "");
}

/** What makes two rows of different runs the same measurement. */
export function spreadKey(r: ResultRow): string {
  return [r.mode, r.client_version, pathOf(r.notes), r.test].join("\u0000");
}

const FIELDS: Record<Figure, { value: keyof ResultRow; min: keyof ResultRow; max: keyof ResultRow; digits: number }> = {
  rps: { value: "rps", min: "rps_min", max: "rps_max", digits: 2 },
  p50: { value: "p50_ms", min: "p50_min_ms", max: "p50_max_ms", digits: 3 },
  p95: { value: "p95_ms", min: "p95_min_ms", max: "p95_max_ms", digits: 3 },
  p99: { value: "p99_ms", min: "p99_min_ms", max: "p99_max_ms", digits: 3 },
};

/** The spread columns of a row, which only aggregateRows writes. */
export const SPREAD_FIELDS = [
  "runs",
  "rps_min",
  "rps_max",
  "p50_min_ms",
  "p50_max_ms",
  "p95_min_ms",
  "p95_max_ms",
  "p99_min_ms",
  "p99_max_ms",
] as const satisfies readonly (keyof ResultRow)[];

/**
 * The row without spread columns: a row whose figures were recomputed (several clients combined) is one run again until
 * aggregated.
 */
export function withoutSpread(r: ResultRow): ResultRow {
  const out = { ...r };
  for (const k of SPREAD_FIELDS) delete out[k];
  return out;
}

/** A row's figure with its range; a row without spread columns is one run, its range its value. */
export function rangeOf(r: ResultRow, figure: Figure): Range {
  const f = FIELDS[figure];
  const value = r[f.value] as number;
  return {
    median: value,
    min: (r[f.min] as number | undefined) ?? value,
    max: (r[f.max] as number | undefined) ?? value,
    runs: r.runs ?? 1,
  };
}

/** One row from the same measurement's runs, in run order (module comment). */
export function aggregateRows(rows: readonly ResultRow[]): ResultRow {
  const n = rows.length;
  if (n === 0) throw new RangeError("aggregateRows: no rows");
  const byRps = rows.map((r, i) => ({ r, i })).sort((a, b) => a.r.rps - b.r.rps);
  const mid = byRps[Math.floor((n - 1) / 2)] as { r: ResultRow; i: number };
  const base = mid.r;
  const spread: Partial<ResultRow> = { runs: n };
  for (const [figure, f] of Object.entries(FIELDS) as [Figure, (typeof FIELDS)[Figure]][]) {
    const values = rows.map((r) => r[f.value] as number);
    Object.assign(spread, {
      [f.value]: round(median(values), f.digits),
      [f.min]: Math.min(...rows.map((r) => rangeOf(r, figure).min)),
      [f.max]: Math.max(...rows.map((r) => rangeOf(r, figure).max)),
    });
  }
  const p999 = rows.every((r) => r.p999_ms !== undefined)
    ? { p999_ms: round(median(rows.map((r) => r.p999_ms as number)), 3) }
    : {};
  const measured = rows.filter((r) => r.client_cpu_pct !== undefined);
  const busiest = measured.reduce<ResultRow | undefined>(
    (a, r) => (a === undefined || (r.client_cpu_pct as number) > (a.client_cpu_pct as number) ? r : a),
    undefined,
  );
  const client =
    busiest === undefined
      ? {}
      : {
          client_cpu_pct: busiest.client_cpu_pct,
          client_cores: busiest.client_cores,
          client_bound: rows.some(isClientBound),
        };
  const which = n === 1 ? "" : `median of ${n} runs (these notes, requests and duration: run ${mid.i + 1})`;
  return {
    ...base,
    ...spread,
    avg_ms: round(median(rows.map((r) => r.avg_ms)), 3),
    min_ms: Math.min(...rows.map((r) => r.min_ms)),
    max_ms: Math.max(...rows.map((r) => r.max_ms)),
    ...p999,
    ...client,
    notes: [base.notes, which].filter((x) => x !== "").join("; "),
  };
}

/**
 * The rows of N runs (each run's rows in its order) as one row per measurement (spreadKey), in
 * the order the measurements first appear.
 */
export function aggregateRuns(runs: readonly (readonly ResultRow[])[]): ResultRow[] {
  const groups = new Map<string, ResultRow[]>();
  for (const run of runs) for (const r of run) groups.set(spreadKey(r), [...(groups.get(spreadKey(r)) ?? []), r]);
  return [...groups.values()].map(aggregateRows);
}

/** a ÷ b with the range the runs allow: from a.min ÷ b.max to a.max ÷ b.min (NaN where b is 0). */
export function ratioRange(a: Range, b: Range): Range {
  const div = (x: number, y: number): number => (y > 0 ? x / y : Number.NaN);
  return {
    median: div(a.median, b.median),
    min: div(a.min, b.max),
    max: div(a.max, b.min),
    runs: Math.min(a.runs, b.runs),
  };
}

/** a − b with the range the runs allow. */
export function differenceRange(a: Range, b: Range): Range {
  return { median: a.median - b.median, min: a.min - b.max, max: a.max - b.min, runs: Math.min(a.runs, b.runs) };
}

/** Whether two figures' ranges overlap: then they differ by no more than run-to-run noise. */
export function overlaps(a: Range, b: Range): boolean {
  return a.min <= b.max && b.min <= a.max;
}

/** "30,652 (28,100–33,004)" with `fmt` for each number; the median alone for one run. */
export function rangeText(r: Range, fmt: (x: number) => string): string {
  return r.runs <= 1 && r.min === r.max ? fmt(r.median) : `${fmt(r.median)} (${fmt(r.min)}–${fmt(r.max)})`;
}
