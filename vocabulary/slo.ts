/**
 * A latency target (`--slo p99:2ms`, config `benchmark.slo`) and the rate sweep that finds the
 * highest throughput meeting it (benchmarks/run/slo-sweep.ts): the words the CLI, the stack config,
 * the sweep, the Job and the report share, parsed and validated here once. Plain values and small
 * pure helpers; imports nothing.
 */
/** The percentiles a target may name; `p999` is p99.9. */
export const SLO_PERCENTILES = ["p50", "p99", "p999"] as const;
export type SloPercentile = (typeof SLO_PERCENTILES)[number];

/** "The `percentile` of the latency is at most `boundMs`." */
export interface SloTarget {
  percentile: SloPercentile;
  /** The bound in milliseconds (> 0). */
  boundMs: number;
}

/** Rate steps of one sweep: 1/steps, 2/steps, … 100 % of the measured closed-loop ceiling. */
export const DEFAULT_SLO_STEPS = 5;
/** Seconds of each step (and of the ceiling's closed-loop run). */
export const DEFAULT_SLO_STEP_SECONDS = 2;
/** Bisections between the last step that met the target and the first that did not. */
export const SLO_REFINE_STEPS = 2;
/** A step meets the target only when it achieved at least this share of its offered rate. */
export const SLO_ACHIEVED_SHARE = 0.95;
/** Upper bounds of the settings, so a typo cannot ask for a day-long sweep. */
export const MAX_SLO_STEPS = 50;
export const MAX_SLO_STEP_SECONDS = 600;
const MAX_BOUND_MS = 60_000;

const UNIT_MS: Readonly<Record<string, number>> = { us: 0.001, µs: 0.001, ms: 1, s: 1000 };
const PERCENTILE_NAMES: Readonly<Record<string, SloPercentile>> = {
  "p50": "p50",
  "p99": "p99",
  "p999": "p999",
  "p99.9": "p999",
};

/**
 * Parses `p99:2ms` (also `p50`, `p999` or `p99.9`; the bound in `us`, `ms` or `s`, e.g.
 * `p99.9:500us`, `p50:0.8ms`). Returns the target, or the problem (without the flag or key, which
 * the caller prefixes).
 */
export function parseSlo(text: string): { target: SloTarget } | { problem: string } {
  const example = "e.g. p99:2ms, p50:500us, p99.9:10ms";
  const m = /^\s*(p[\d.]+)\s*:\s*([\d.]+(?:e-?\d+)?)\s*([a-zµ]*)\s*$/i.exec(text);
  if (m === null) return { problem: `'${text}' is not <percentile>:<bound><unit> (${example})` };
  const percentile = PERCENTILE_NAMES[(m[1] as string).toLowerCase()];
  if (percentile === undefined)
    return { problem: `'${m[1]}' is not a percentile it measures (p50, p99, p999 or p99.9)` };
  const unit = (m[3] as string).toLowerCase();
  if (unit === "") return { problem: `'${text}' has no unit: give us, ms or s (${example})` };
  const scale = UNIT_MS[unit];
  if (scale === undefined) return { problem: `'${m[3]}' is not a unit (us, ms or s)` };
  const value = Number(m[2]);
  if (!Number.isFinite(value) || value <= 0) return { problem: `the bound must be a number above 0 (got '${m[2]}')` };
  const boundMs = Number((value * scale).toPrecision(12));
  if (boundMs > MAX_BOUND_MS)
    return { problem: `the bound ${boundMs} ms is over ${MAX_BOUND_MS / 1000} s: that is no latency target` };
  return { target: { percentile, boundMs } };
}

/** "p99.9" for p999. */
export function percentileLabel(p: SloPercentile): string {
  return p === "p999" ? "p99.9" : p;
}

/** "p99 ≤ 2 ms", "p99.9 ≤ 0.5 ms". */
export function sloLabel(t: SloTarget): string {
  return `${percentileLabel(t.percentile)} ≤ ${Number(t.boundMs.toPrecision(6))} ms`;
}

/**
 * Upper bound, in seconds, of a workload's latency-target sweeps (0 without `slo`): per sweep the
 * ceiling's closed loop, the steps and the refinements, each with `overheadS` for connecting, the
 * served check and the drain of an overloaded step, `repeat` sweeps (the workload's runs). The Job's
 * deadline and the results' wait grow by it.
 */
export function sloSweepSeconds(
  w: { slo?: SloTarget; sloSteps?: number; sloStepSeconds?: number },
  repeat: number,
  overheadS = 15,
): number {
  if (w.slo === undefined) return 0;
  return (
    repeat *
    (1 + (w.sloSteps ?? DEFAULT_SLO_STEPS) + SLO_REFINE_STEPS) *
    ((w.sloStepSeconds ?? DEFAULT_SLO_STEP_SECONDS) + overheadS)
  );
}
