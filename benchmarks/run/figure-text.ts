/**
 * How a figure is printed in the terminal, summary.md and the report: rps, ms, ratios, each with its range over several
 * runs. Pure.
 */
import type { ResultRow } from "./result-row.js";
import { rangeOf, rangeText, type Range } from "./run-spread.js";

const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** 1,250,001 */
export function fmtRps(rps: number): string {
  return grouped.format(Math.round(rps));
}

/** 0.567 */
export function fmtMs(ms: number): string {
  return ms.toFixed(3);
}

/** "2.50×", or with several runs "2.50× (2.10–2.93×)"; `invert` shows 1 ÷ the ratio (its range turned round). */
export function ratioText(r: Range, invert = false): string {
  const x = invert ? { ...r, median: 1 / r.median, min: 1 / r.max, max: 1 / r.min } : r;
  return rangeText(x, (v) => (Number.isFinite(v) ? v.toFixed(2) : "n/a"))
    .replace(/^(\S+)/, "$1×")
    .replace(/\)$/, "×)");
}

/** rps, p50 and p99 of a row, each "median (min–max)" over its runs. */
export function figureCells(r: ResultRow): [string, string, string] {
  return [
    rangeText(rangeOf(r, "rps"), fmtRps),
    rangeText(rangeOf(r, "p50"), fmtMs),
    rangeText(rangeOf(r, "p99"), fmtMs),
  ];
}
