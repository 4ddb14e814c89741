/** Number formatting shared by the report's tables and text. */
import { clusterSpeedup } from "../run/comparison.js";
import { ratioText } from "../run/figure-text.js";
import type { ResultRow } from "../run/result-row.js";

export { fmtMs, fmtRps } from "../run/figure-text.js";

const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

const upTo3 = new Intl.NumberFormat("en-US", { maximumFractionDigits: 3 });

export function fmtInt(n: number | null): string {
  return n === null ? "not recorded" : grouped.format(n);
}

/** A count or a setting: grouped, fractions kept up to 3 digits (0.3 s stays 0.3). */
export function fmtNumber(n: number | null): string {
  return n === null ? "not recorded" : upTo3.format(n);
}

/**
 * "1.34× rps", "2.02× lower p50" / "1.17× higher p50", each with its range over several runs, and
 * "within run-to-run noise" when the two rps ranges overlap; undefined when not computable.
 */
export function speedupParts(
  cluster: ResultRow,
  replication: ResultRow,
): { rps: string; p50: string; withinNoise: boolean } | undefined {
  const s = clusterSpeedup(cluster, replication);
  if (s === undefined) return undefined;
  const withinNoise = s.rpsWithinNoise && s.rpsRange.runs > 1;
  return {
    rps: `${ratioText(s.rpsRange)} rps${withinNoise ? ", within run-to-run noise" : ""}`,
    p50: s.p50 >= 1 ? `${ratioText(s.p50Range)} lower p50` : `${ratioText(s.p50Range, true)} higher p50`,
    withinNoise,
  };
}
