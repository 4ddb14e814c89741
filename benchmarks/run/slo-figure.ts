/**
 * Throughput at a latency target, the pure half: whether one open-loop step meets the target, the
 * next rate to try between the last step that met it and the first that did not, the figure of one
 * sweep, and the median and range over several sweeps. The driver that runs the steps is
 * slo-sweep.ts; the record's JSON schema (raw/slo-sweep-<mode>.json, the Job's `sloSweep`) is
 * slo-sweep-schema.ts. Bundled into the Job's pod: no zod here.
 *
 * The rule. A step meets the target when (1) it got no error reply and every request an answer,
 * (2) it achieved at least SLO_ACHIEVED_SHARE (95 %) of the rate it offered (below that the server,
 * or the generator, did not keep up and the backlog grows with the run's length), and (3) the
 * target's percentile, measured open loop from each request's intended send time, is within the
 * bound. The figure of a sweep is the achieved rate of the highest step such that it and every
 * step below it met the target ("sustained up to"): a pass above a failure is noise, not capacity.
 * No step met it: "below the lowest step"; every step met it: "at least the ceiling".
 */
import { percentileLabel, SLO_ACHIEVED_SHARE, type SloPercentile, type SloTarget } from "../../vocabulary/slo.js";
import type { MixEntry } from "../../vocabulary/workload.js";
import type { ResultMode } from "./result-row.js";

/** One open-loop step of a sweep. Latency figures are null when the step failed without them. */
export interface SloStep {
  /** The offered rate as a share of the sweep's closed-loop ceiling. */
  fraction: number;
  offeredRps: number;
  /** Replies ÷ the run's window (first intended send to last reply). */
  achievedRps: number;
  requests: number;
  p50_ms: number | null;
  p99_ms: number | null;
  p999_ms: number | null;
  max_ms: number | null;
  /** The open loop's largest lateness of the generator itself (its share of the latencies). */
  generatorLagMaxMs: number | null;
  /** Its mean lateness over the step's requests (absent in sweeps recorded before it was kept). */
  generatorLagMeanMs?: number | null;
  /** Error replies, requests without a reply, or a served mix off its shares: the runner's message; null when none. */
  error: string | null;
  /** A bisection between the last step that met the target and the first that did not. */
  refined: boolean;
  meets: boolean;
  /** Why it does not meet the target; "" when it does. */
  why: string;
}

/** A sweep's figure: a rate that met the target, or a bound when the steps did not bracket it. */
export interface SloFigure {
  rps: number;
  /**
   * exact: the highest step that met it; below: no step met it (rps is the lowest step's offered rate); atLeast: every
   * step met it (rps is the highest step's achieved rate).
   */
  bound: "exact" | "below" | "atLeast";
}

/** One sweep: the closed-loop ceiling that scaled its steps, the steps in the order run, the figure. */
export interface SloSweepRun {
  ceiling: { rps: number; p50_ms: number; p99_ms: number; p999_ms: number };
  steps: SloStep[];
  figure: SloFigure;
}

/**
 * The figure over every run: the median run's figure (with an even count, the lower middle one) and the lowest and
 * highest.
 */
export interface SloSummary {
  runs: number;
  median: SloFigure;
  min: SloFigure;
  max: SloFigure;
}

/** raw/slo-sweep-<mode>.json, and the Job's `sloSweep`. */
export interface SloSweepRecord {
  mode: ResultMode;
  target: SloTarget;
  /** The path swept, e.g. "the HAProxy write endpoint 127.0.0.1:7101". */
  via: string;
  mix: MixEntry[];
  clients: number;
  steps: number;
  stepSeconds: number;
  rule: { achievedShare: number; refineSteps: number };
  runs: SloSweepRun[];
  summary: SloSummary;
}

const FIELD: Readonly<Record<SloPercentile, "p50_ms" | "p99_ms" | "p999_ms">> = {
  p50: "p50_ms",
  p99: "p99_ms",
  p999: "p999_ms",
};

/** The step's value of the target's percentile (null when the step has none). */
export function stepPercentile(t: SloTarget, s: Pick<SloStep, "p50_ms" | "p99_ms" | "p999_ms">): number | null {
  return s[FIELD[t.percentile]];
}

type Measured = Omit<SloStep, "meets" | "why">;

/** Whether a measured step meets the target, and if not, every reason why. */
export function judgeStep(t: SloTarget, s: Measured): SloStep {
  const why: string[] = [];
  if (s.error !== null) why.push(`errors: ${s.error}`);
  const share = s.offeredRps > 0 ? s.achievedRps / s.offeredRps : 0;
  if (share < SLO_ACHIEVED_SHARE)
    why.push(`achieved ${(100 * share).toFixed(1)} % of the offered rate (< ${100 * SLO_ACHIEVED_SHARE} %)`);
  const v = stepPercentile(t, s);
  const name = percentileLabel(t.percentile);
  if (v === null) why.push(`no ${name} measured`);
  else if (v > t.boundMs) why.push(`${name} ${v} ms > ${t.boundMs} ms`);
  return { ...s, meets: why.length === 0, why: why.join("; ") };
}

const byRate = (steps: readonly SloStep[]): SloStep[] => [...steps].sort((a, b) => a.offeredRps - b.offeredRps);

/** The last step of the passing run from the bottom, and the first step that failed (either may be absent). */
function bracket(steps: readonly SloStep[]): { pass?: SloStep; fail?: SloStep } {
  const sorted = byRate(steps);
  const f = sorted.findIndex((s) => !s.meets);
  if (f < 0) return { pass: sorted.at(-1) };
  return { fail: sorted[f], ...(f > 0 ? { pass: sorted[f - 1] } : {}) };
}

/**
 * The next rate to refine at: halfway between the bracket's ends; undefined when the steps do not bracket the target or
 * the ends are 1/s apart.
 */
export function nextRefineRate(steps: readonly SloStep[]): number | undefined {
  const { pass, fail } = bracket(steps);
  if (pass === undefined || fail === undefined) return undefined;
  const mid = Math.round((pass.offeredRps + fail.offeredRps) / 2);
  return mid > pass.offeredRps && mid < fail.offeredRps ? mid : undefined;
}

/** The figure of one sweep's steps (see the rule above). Throws on no step: a sweep without steps has no figure. */
export function sweepFigure(steps: readonly SloStep[]): SloFigure {
  if (steps.length === 0) throw new RangeError("a sweep without steps has no figure");
  const { pass, fail } = bracket(steps);
  if (pass === undefined) return { rps: (fail as SloStep).offeredRps, bound: "below" };
  return { rps: pass.achievedRps, bound: fail === undefined ? "atLeast" : "exact" };
}

/** The median (lower middle with an even count), lowest and highest figure of the runs, by rate. */
export function summarizeFigures(figures: readonly SloFigure[]): SloSummary {
  if (figures.length === 0) throw new RangeError("no sweep to summarize");
  const sorted = [...figures].sort((a, b) => a.rps - b.rps);
  return {
    runs: sorted.length,
    median: sorted[Math.floor((sorted.length - 1) / 2)] as SloFigure,
    min: sorted[0] as SloFigure,
    max: sorted.at(-1) as SloFigure,
  };
}

/** The interval the runs' figures span, open where a figure is only a bound. */
function span(s: SloSummary): [number, number] {
  return [s.min.bound === "below" ? 0 : s.min.rps, s.max.bound === "atLeast" ? Infinity : s.max.rps];
}

/** Whether two summaries' ranges overlap: then the difference is within run-to-run noise. */
export function rangesOverlap(a: SloSummary, b: SloSummary): boolean {
  const [alo, ahi] = span(a);
  const [blo, bhi] = span(b);
  return alo <= bhi && blo <= ahi;
}

const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** "12,345", "below 5,000 (the lowest step)", "at least 61,000 (every step met it)"; `unit` follows the number. */
export function formatFigure(f: SloFigure, unit = ""): string {
  const n = `${grouped.format(Math.round(f.rps))}${unit}`;
  return f.bound === "exact"
    ? n
    : f.bound === "below"
      ? `below ${n} (the lowest step)`
      : `at least ${n} (every step met it)`;
}

/** "12,345", "< 2,000", "≥ 61,000". */
const bare = (f: SloFigure): string =>
  `${f.bound === "below" ? "< " : f.bound === "atLeast" ? "≥ " : ""}${grouped.format(Math.round(f.rps))}`;

/** For a narrow table cell: "12,345 (11,002 – 13,120)", "< 2,100 (< 2,000 – 3,100)", "12,345 (1 run)". */
export function formatSummaryShort(s: SloSummary): string {
  return `${bare(s.median)} (${s.runs === 1 ? "1 run" : `${bare(s.min)} – ${bare(s.max)}`})`;
}

/**
 * "12,345 ops/s (3 runs: 11,002 – 13,120)", "below 2,100 ops/s, the lowest step (3 runs: < 2,000 – 3,100)", "12,345
 * ops/s (one run: no spread measured)".
 */
export function formatSummary(s: SloSummary): string {
  const m = s.median;
  const median =
    m.bound === "exact" ? formatFigure(m, " ops/s") : formatFigure(m, " ops/s").replace(/ \((.+)\)$/, ", $1");
  const spread = s.runs === 1 ? "one run: no spread measured" : `${s.runs} runs: ${bare(s.min)} – ${bare(s.max)}`;
  return `${median} (${spread})`;
}
