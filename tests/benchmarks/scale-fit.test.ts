/** The scale ladder's exponents and its --primaries flag (benchmarks/scale/scale-fit.ts). */
import { describe, expect, it } from "vitest";
import { fittedExponent, pairExponent, parsePrimaryLadder, spreadOf } from "../../benchmarks/scale/scale-fit.js";

describe("scale ladder arithmetic", () => {
  it.each([
    ["linear", 1],
    ["quadratic", 2],
    ["constant", 0],
    ["square root", 0.5],
  ] as const)("a %s step (t ∝ P^%d) gives that exponent, pairwise and fitted", (_name, k) => {
    const points = [3, 10, 30, 100].map((p) => ({ primaries: p, ms: 7 * p ** k }));
    expect(pairExponent(points[0]!, points[1]!)).toBeCloseTo(k, 9);
    expect(pairExponent(points[2]!, points[3]!)).toBeCloseTo(k, 9);
    expect(fittedExponent(points)).toBeCloseTo(k, 9);
  });

  it("fits noisy points between their pairwise exponents", () => {
    const points = [
      { primaries: 3, ms: 100 },
      { primaries: 10, ms: 300 },
      { primaries: 30, ms: 1200 },
    ];
    const k = fittedExponent(points);
    expect(k).toBeGreaterThan(pairExponent(points[0]!, points[1]!));
    expect(k).toBeLessThan(pairExponent(points[1]!, points[2]!));
  });

  it("refuses what has no exponent, naming why", () => {
    expect(() => fittedExponent([{ primaries: 3, ms: 1 }])).toThrow(/1 size\(s\): an exponent needs two/);
    expect(() => pairExponent({ primaries: 3, ms: 1 }, { primaries: 3, ms: 2 })).toThrow(/two points at 3/);
    expect(() =>
      fittedExponent([
        { primaries: 3, ms: 0 },
        { primaries: 10, ms: 5 },
      ]),
    ).toThrow(/≤ 0 ms at 3/);
  });

  it("reads --primaries as ascending distinct sizes ≥ 3, or says what is wrong", () => {
    expect(parsePrimaryLadder(undefined, [3, 10])).toEqual([3, 10]);
    expect(parsePrimaryLadder("30, 3,10", [])).toEqual([3, 10, 30]);
    expect(() => parsePrimaryLadder("3,2", [])).toThrow(/--primaries: each size must be a whole number ≥ 3 \(got "2"/);
    expect(() => parsePrimaryLadder("3,x", [])).toThrow(/got "x"/);
    expect(() => parsePrimaryLadder("3,,10", [])).toThrow(/got ""/);
    expect(() => parsePrimaryLadder("10,10", [])).toThrow(/10 is listed twice/);
  });

  it("takes the median (the mean of the two middle ones of an even count: never the best run) and the range", () => {
    expect(spreadOf([17.7, 7.4, 9.1])).toEqual({ median: 9.1, min: 7.4, max: 17.7 });
    expect(spreadOf([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4 });
    expect(spreadOf([12.8, 26.6]).median).toBeCloseTo(19.7, 9);
    expect(spreadOf([5])).toEqual({ median: 5, min: 5, max: 5 });
    expect(() => spreadOf([])).toThrow(/no samples/);
  });
});
