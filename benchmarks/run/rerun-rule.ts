/**
 * The re-run rule, shared by the local runner (benchmark-runner.ts), the benchmark Job's script
 * (components/benchmark/job-script.ts writes it again in awk) and the Job's log parser
 * (components/benchmark/job-log.ts replays it). Pure: no process, no I/O.
 *
 * The tool reports rps = requests / elapsed whole milliseconds of its own test window, so a
 * short run is quantised and a run inside 1 ms reports `inf`. The window a run's rps was
 * measured over is at most min(wall time, requests / rps) ({@link measuredWindow}): set-up
 * overhead in the wall time can never hide a test window that was too short for a precise rps.
 *
 * A test whose window is shorter than `workload.minDurationSeconds` is run again with
 * requests = ceil(measured rps × minDurationSeconds × 1.1), capped at `workload.maxRequests`,
 * up to MAX_RERUNS times while the window stays short (each time scaling from the latest,
 * longer, more precise measurement); the last run's figures are the row, and its notes say what
 * happened.
 */
import type { Workload } from "../../vocabulary/workload.js";

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

/** min(wall time, requests / rps): the window the tool's rps figure was measured over, at most (0 for `inf` rps). */
export function measuredWindow(requests: number, rps: number, wallSeconds: number): number {
  const toolWindow = Number.isFinite(rps) && rps > 0 ? requests / rps : 0;
  return Math.min(wallSeconds, toolWindow);
}

const secs = (x: number): string => `${x.toFixed(2)} s`;

/**
 * The re-run rule (module comment), one step: given the latest run and the number `attempt`
 * (≥ 2) the next run would have, the requests of that next run (undefined: stop) and the notes
 * to add.
 */
export function rerunStep(
  w: Workload,
  last: RunMeasurement,
  attempt: number,
): { next: number | undefined; notes: string[] } {
  const min = w.minDurationSeconds;
  if (!(last.windowSeconds < min) || attempt > MAX_RERUNS + 1) return { next: undefined, notes: [] };
  // `inf` rps (finished within 1 ms): fall back to the wall-clock rate for scaling.
  const rate = Number.isFinite(last.rps) ? last.rps : last.requests / last.wallSeconds;
  const wanted = Math.ceil(rate * min * 1.1);
  const capped = wanted > w.maxRequests;
  const next = capped ? w.maxRequests : wanted;
  const which = attempt === 2 ? "first run" : `re-run ${attempt - 2}`;
  if (next <= last.requests) {
    const notes =
      attempt === 2
        ? [
            `not re-run: first run ${secs(last.windowSeconds)} < ${min} s but maxRequests ${w.maxRequests} ≤ requests ${last.requests}`,
          ]
        : [];
    return { next: undefined, notes };
  }
  const notes = [`rerun: ${which} ${secs(last.windowSeconds)} < ${min} s; requests scaled ${last.requests}→${next}`];
  if (capped) notes.push(`capped at maxRequests ${w.maxRequests} (wanted ${wanted})`);
  return { next, notes };
}

/** The closing note when the last run is still shorter than the minimum after re-runs. */
export function stillShortNote(w: Workload, final: RunMeasurement, notes: readonly string[]): string[] {
  const min = w.minDurationSeconds;
  return final.windowSeconds < min && notes.length > 0 && !notes[0]?.startsWith("not re-run")
    ? [`re-run still ${secs(final.windowSeconds)} < ${min} s`]
    : [];
}
