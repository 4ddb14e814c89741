/**
 * A long soak's series made short enough for the stack's outputs (and so the Pulumi state): at
 * most `maxPoints` samples, each the merge of k consecutive windows. Pure.
 *
 * A merged point: its time and members' INFO are the last window's (counters only grow, so the
 * events found on the full series still line up); requests and errors are summed, rps is their
 * total over the merged span; p50/p99/p99.9/max are the HIGHEST of the k windows' (the windows'
 * histograms are not kept, so an exact merged percentile cannot be formed; the highest is an
 * upper bound and keeps every spike visible). The events are computed on the full series before
 * this and kept as they are. `downsampled` records k and the full count, so a reader knows.
 */
import type { SoakRecord, SoakSample } from "./soak-sample.js";

/** Samples kept in the stack's outputs at most: 12 h of 1-minute points, or 1 h of 5-second ones. */
export const MAX_SOAK_OUTPUT_POINTS = 720;

export interface Downsampled {
  /** Windows merged into each point. */
  factor: number;
  /** Samples before merging. */
  samples: number;
}

function merge(group: readonly SoakSample[]): SoakSample {
  const last = group[group.length - 1] as SoakSample;
  const requests = group.reduce((n, s) => n + s.requests, 0);
  const windowS = group.reduce((n, s) => n + s.window_s, 0);
  const highest = (k: "p50_ms" | "p99_ms" | "p999_ms" | "max_ms"): number => Math.max(...group.map((s) => s[k]));
  return {
    ...last,
    window_s: Number(windowS.toFixed(3)),
    requests,
    errors: group.reduce((n, s) => n + s.errors, 0),
    rps: windowS > 0 ? Number((requests / windowS).toFixed(2)) : 0,
    p50_ms: highest("p50_ms"),
    p99_ms: highest("p99_ms"),
    p999_ms: highest("p999_ms"),
    max_ms: highest("max_ms"),
  };
}

/** The record unchanged when it has at most `maxPoints` samples; else merged k at a time (k the smallest that fits). */
export function downsampleSoak<R extends SoakRecord>(
  r: R,
  maxPoints = MAX_SOAK_OUTPUT_POINTS,
): R & { downsampled?: Downsampled } {
  if (!Number.isSafeInteger(maxPoints) || maxPoints < 1)
    throw new RangeError(`maxPoints must be a whole number ≥ 1, got ${maxPoints}`);
  if (r.samples.length <= maxPoints) return r;
  const factor = Math.ceil(r.samples.length / maxPoints);
  const samples: SoakSample[] = [];
  for (let i = 0; i < r.samples.length; i += factor) samples.push(merge(r.samples.slice(i, i + factor)));
  return { ...r, samples, downsampled: { factor, samples: r.samples.length } };
}
