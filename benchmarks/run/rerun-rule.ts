/**
 * The re-run rule, pure (moved out of benchmark-runner.ts, which re-exports it): a run whose
 * measured window is shorter than `minDurationSeconds` is re-run with a request count scaled
 * from its rate. Shared with the in-cluster Job's script and log parser.
 */
import type { Workload } from "../workload.js";

const secs = (x: number): string => `${x.toFixed(2)} s`;

/** min(wall time, requests / rps): the window the tool's rps figure was measured over, at most (0 for `inf` rps). */
export function measuredWindow(requests: number, rps: number, wallSeconds: number): number {
  const toolWindow = Number.isFinite(rps) && rps > 0 ? requests / rps : 0;
  return Math.min(wallSeconds, toolWindow);
}

/**
 * At most this many re-runs of one test. One is usually enough; a second is needed when the
 * first measurement under-estimated the rate (with --threads ≥ 2 the tool rounds its window up
 * to 250 ms ticks, so a short run's rps is only a lower bound).
 */
export const MAX_RERUNS = 3;

/** One finished run as the re-run rule sees it. */
export interface RunMeasurement {
  requests: number;
  /** As the tool reported it; Infinity for `inf`. */
  rps: number;
  wallSeconds: number;
  /** {@link measuredWindow} of the run. */
  windowSeconds: number;
}

/**
 * The re-run rule (module comment), one step: given the latest run and the number `attempt`
 * (≥ 2) the next run would have, the requests of that next run (undefined: stop) and the notes
 * to add. Shared with the in-cluster benchmark Job, whose script applies the same rule.
 */
export function rerunStep(w: Workload, last: RunMeasurement, attempt: number): { next: number | undefined; notes: string[] } {
  const min = w.minDurationSeconds;
  if (!(last.windowSeconds < min) || attempt > MAX_RERUNS + 1) return { next: undefined, notes: [] };
  // `inf` rps (finished within 1 ms): fall back to the wall-clock rate for scaling.
  const rate = Number.isFinite(last.rps) ? last.rps : last.requests / last.wallSeconds;
  const wanted = Math.ceil(rate * min * 1.1);
  const capped = wanted > w.maxRequests;
  const next = capped ? w.maxRequests : wanted;
  const which = attempt === 2 ? "first run" : `re-run ${attempt - 2}`;
  if (next <= last.requests) {
    const notes = attempt === 2 ? [`not re-run: first run ${secs(last.windowSeconds)} < ${min} s but maxRequests ${w.maxRequests} ≤ requests ${last.requests}`] : [];
    return { next: undefined, notes };
  }
  const notes = [`rerun: ${which} ${secs(last.windowSeconds)} < ${min} s; requests scaled ${last.requests}→${next}`];
  if (capped) notes.push(`capped at maxRequests ${w.maxRequests} (wanted ${wanted})`);
  return { next, notes };
}

/** The closing note when the last run is still shorter than the minimum after re-runs. */
export function stillShortNote(w: Workload, final: RunMeasurement, notes: readonly string[]): string[] {
  const min = w.minDurationSeconds;
  return final.windowSeconds < min && notes.length > 0 && !notes[0]?.startsWith("not re-run") ? [`re-run still ${secs(final.windowSeconds)} < ${min} s`] : [];
}

