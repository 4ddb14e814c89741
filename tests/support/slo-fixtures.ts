/**
 * Latency-target sweep records for report and verdict tests, built by the sweep's own pure rule
 * (judgeStep, sweepFigure, summarizeFigures) from given ceilings and a latency curve, so a record
 * has exactly the shape and the figures a real sweep writes to raw/slo-sweep-<mode>.json. The real
 * sweep is tests/benchmarks/slo-sweep.test.ts's.
 */
import {
  judgeStep,
  summarizeFigures,
  sweepFigure,
  type SloSweepRecord,
  type SloSweepRun,
} from "../../benchmarks/run/slo-figure.js";
import type { ResultMode } from "../../benchmarks/run/result-row.js";
import { SLO_ACHIEVED_SHARE, SLO_REFINE_STEPS, type SloTarget } from "../../vocabulary/slo.js";

export const P99_2MS: SloTarget = { percentile: "p99", boundMs: 2 };

/**
 * One record of `mode`: a sweep per ceiling, five steps at 20 … 100 % of it, each step's p99 from
 * `p99At(fraction)` (p50 a quarter of it, p99.9 twice), 99 % of the offered rate achieved.
 */
export function fixtureSloSweep(
  mode: ResultMode,
  ceilings: readonly number[],
  p99At: (fraction: number) => number,
  target = P99_2MS,
): SloSweepRecord {
  const runs: SloSweepRun[] = ceilings.map((c) => {
    const steps = [0.2, 0.4, 0.6, 0.8, 1].map((fraction) => {
      const p99 = p99At(fraction);
      return judgeStep(target, {
        fraction,
        offeredRps: Math.round(c * fraction),
        achievedRps: Math.round(c * fraction * 0.99),
        requests: Math.round(c * fraction * 2),
        p50_ms: p99 / 4,
        p99_ms: p99,
        p999_ms: p99 * 2,
        max_ms: p99 * 3,
        generatorLagMaxMs: 1.5,
        error: null,
        refined: false,
      });
    });
    return { ceiling: { rps: c, p50_ms: 1, p99_ms: 5, p999_ms: 9 }, steps, figure: sweepFigure(steps) };
  });
  return {
    mode,
    target,
    via:
      mode === "cluster"
        ? "the cluster, seed 127.0.0.1:7001 (slot map followed)"
        : "the HAProxy write endpoint 127.0.0.1:7101",
    mix: [
      { test: "set", percent: 34 },
      { test: "get", percent: 33 },
      { test: "incr", percent: 33 },
    ],
    clients: 50,
    steps: 5,
    stepSeconds: 2,
    rule: { achievedShare: SLO_ACHIEVED_SHARE, refineSteps: SLO_REFINE_STEPS },
    runs,
    summary: summarizeFigures(runs.map((r) => r.figure)),
  };
}
