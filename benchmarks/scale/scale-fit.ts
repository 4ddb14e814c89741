/**
 * The scale ladder's arithmetic (apps/perf/scale-ladder.ts; the report's chart, benchmarks/report/scale-section.ts):
 * how a step's time grows with the number of primaries, as the exponent k of time ∝ P^k, between neighbouring sizes
 * and fitted over all of them.
 */

/** One measured size: primaries and the step's time there. */
export interface LadderPoint {
  primaries: number;
  ms: number;
}

/** k between two sizes: ln(t2 / t1) / ln(P2 / P1). */
export function pairExponent(a: LadderPoint, b: LadderPoint): number {
  if (a.primaries === b.primaries) throw new Error(`two points at ${a.primaries} primaries: no exponent between them`);
  if (a.ms <= 0 || b.ms <= 0) throw new Error(`a step time ≤ 0 ms (${a.ms}, ${b.ms}): no exponent`);
  return Math.log(b.ms / a.ms) / Math.log(b.primaries / a.primaries);
}

/** k between each pair of neighbouring sizes, as "3→10: 0.48" (points in ascending size). */
export function neighbourExponents(points: readonly LadderPoint[]): string[] {
  return points.slice(1).map((p, i) => {
    const a = points[i] as LadderPoint;
    return `${a.primaries}→${p.primaries}: ${pairExponent(a, p).toFixed(2)}`;
  });
}

/** The least-squares slope of ln t over ln P: one k for the whole ladder (at least two sizes). */
export function fittedExponent(points: readonly LadderPoint[]): number {
  if (points.length < 2) throw new Error(`${points.length} size(s): an exponent needs two`);
  for (const p of points) if (p.ms <= 0) throw new Error(`a step time ≤ 0 ms at ${p.primaries} primaries`);
  const xs = points.map((p) => Math.log(p.primaries));
  const ys = points.map((p) => Math.log(p.ms));
  const mx = xs.reduce((s, x) => s + x, 0) / xs.length;
  const my = ys.reduce((s, y) => s + y, 0) / ys.length;
  const sxx = xs.reduce((s, x) => s + (x - mx) ** 2, 0);
  if (sxx === 0) throw new Error("every point at the same size: no exponent");
  return xs.reduce((s, x, i) => s + (x - mx) * ((ys[i] as number) - my), 0) / sxx;
}

/** `--primaries 3,10,30`: distinct whole numbers ≥ 3 (a cluster's minimum), ascending; else an error naming it. */
export function parsePrimaryLadder(text: string | undefined, fallback: readonly number[]): number[] {
  if (text === undefined) return [...fallback];
  const sizes = text.split(",").map((s) => s.trim());
  const out: number[] = [];
  for (const s of sizes) {
    const n = Number(s);
    if (s === "" || !Number.isInteger(n) || n < 3)
      throw new Error(`--primaries: each size must be a whole number ≥ 3 (got ${JSON.stringify(s)} in ${text})`);
    if (out.includes(n)) throw new Error(`--primaries: ${n} is listed twice (${text})`);
    out.push(n);
  }
  return out.sort((a, b) => a - b);
}

/** The median of repeated samples (the mean of the two middle ones of an even count) and their range. */
export function spreadOf(samples: readonly number[]): { median: number; min: number; max: number } {
  if (samples.length === 0) throw new Error("no samples: nothing to take the median of");
  const s = [...samples].sort((a, b) => a - b);
  const mid = (s.length - 1) / 2;
  const median = ((s[Math.floor(mid)] as number) + (s[Math.ceil(mid)] as number)) / 2;
  return { median, min: s[0] as number, max: s[s.length - 1] as number };
}
