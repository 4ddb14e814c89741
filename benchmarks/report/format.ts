/** Number formatting shared by the report's tables and text. */
import { clusterSpeedup } from "../run/comparison.js";
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

export function fmtRatio(x: number): string {
  return `${x.toFixed(2)}×`;
}

/** "1.34× rps", "2.02× lower p50" / "1.17× higher p50", or undefined when not computable. */
export function speedupParts(cluster: ResultRow, replication: ResultRow): { rps: string; p50: string } | undefined {
  const s = clusterSpeedup(cluster, replication);
  if (s === undefined) return undefined;
  return { rps: `${fmtRatio(s.rps)} rps`, p50: s.p50 >= 1 ? `${fmtRatio(s.p50)} lower p50` : `${fmtRatio(1 / s.p50)} higher p50` };
}
