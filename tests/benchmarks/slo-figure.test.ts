/**
 * The latency target's pure parts as table tests: parsing `p99:2ms` (and refusing garbage with the
 * reason), judging a step, the figure of a sweep at the bound's edges (no step meets it, every step
 * meets it, a pass above a failure), the bisection's next rate, the median and range over sweeps,
 * whether two ranges overlap, the sweep's mix without `--mix`, and the Job's time bound.
 */
import { describe, expect, it } from "vitest";
import { parseSlo, sloLabel, sloSweepSeconds, type SloTarget } from "../../vocabulary/slo.js";
import {
  formatFigure,
  formatSummary,
  judgeStep,
  nextRefineRate,
  rangesOverlap,
  summarizeFigures,
  sweepFigure,
  type SloFigure,
  type SloStep,
} from "../../benchmarks/run/slo-figure.js";
import { sloMix, sweepWorkload } from "../../benchmarks/run/slo-sweep.js";
import { sloSideRows, sloSpeedupText } from "../../benchmarks/run/slo-table.js";
import { SEED_WORKLOAD } from "../../vocabulary/workload.js";

const P99_2MS: SloTarget = { percentile: "p99", boundMs: 2 };

describe("parseSlo", () => {
  it.each([
    ["p99:2ms", { percentile: "p99", boundMs: 2 }],
    ["P99:2MS", { percentile: "p99", boundMs: 2 }],
    [" p50 : 500us ", { percentile: "p50", boundMs: 0.5 }],
    ["p50:500µs", { percentile: "p50", boundMs: 0.5 }],
    ["p999:10ms", { percentile: "p999", boundMs: 10 }],
    ["p99.9:0.25s", { percentile: "p999", boundMs: 250 }],
    ["p99:1.5ms", { percentile: "p99", boundMs: 1.5 }],
  ])("%s → %o", (text, target) => {
    expect(parseSlo(text)).toEqual({ target });
  });

  it.each([
    ["p99", /is not <percentile>:<bound><unit>/],
    ["2ms", /is not <percentile>:<bound><unit>/],
    ["p99:", /is not <percentile>:<bound><unit>/],
    ["p98:2ms", /'p98' is not a percentile it measures \(p50, p99, p999 or p99.9\)/],
    ["p99:2", /has no unit: give us, ms or s/],
    ["p99:2min", /'min' is not a unit \(us, ms or s\)/],
    ["p99:0ms", /the bound must be a number above 0/],
    ["p99:1.2.3ms", /the bound must be a number above 0/],
    ["p99:2h", /'h' is not a unit/],
    ["p99:90s", /over 60 s: that is no latency target/],
    ["fast", /is not <percentile>:<bound><unit>/],
  ])("refuses %s naming why", (text, why) => {
    const r = parseSlo(text);
    expect("problem" in r ? r.problem : "parsed").toMatch(why);
  });

  it("labels: p99 ≤ 2 ms, p99.9 for p999", () => {
    expect(sloLabel(P99_2MS)).toBe("p99 ≤ 2 ms");
    expect(sloLabel({ percentile: "p999", boundMs: 0.5 })).toBe("p99.9 ≤ 0.5 ms");
  });
});

type Measured = Omit<SloStep, "meets" | "why">;
const measured = (offered: number, p99: number, over: Partial<Measured> = {}): Measured => ({
  fraction: 0.2,
  offeredRps: offered,
  achievedRps: offered * 0.99,
  requests: offered,
  p50_ms: p99 / 4,
  p99_ms: p99,
  p999_ms: p99 * 2,
  max_ms: p99 * 3,
  generatorLagMaxMs: 1,
  error: null,
  refined: false,
  ...over,
});
const judged = (offered: number, p99: number, over: Partial<Measured> = {}): SloStep =>
  judgeStep(P99_2MS, measured(offered, p99, over));

describe("judgeStep: the rule", () => {
  it.each([
    ["within the bound, 99 % achieved, no error", measured(1000, 1.9), true, ""],
    ["exactly at the bound", measured(1000, 2), true, ""],
    ["over the bound", measured(1000, 2.1), false, "p99 2.1 ms > 2 ms"],
    [
      "achieved 94 % of offered",
      measured(1000, 1, { achievedRps: 940 }),
      false,
      "achieved 94.0 % of the offered rate (< 95 %)",
    ],
    ["achieved exactly 95 %", measured(1000, 1, { achievedRps: 950 }), true, ""],
    [
      "an error reply",
      measured(1000, 1, { error: "the mix got error replies: SET 3" }),
      false,
      "errors: the mix got error replies: SET 3",
    ],
    [
      "failed without figures",
      measured(1000, 1, { achievedRps: 0, p50_ms: null, p99_ms: null, p999_ms: null, error: "no reply" }),
      false,
      "errors: no reply; achieved 0.0 % of the offered rate (< 95 %); no p99 measured",
    ],
  ])("%s", (_what, step, meets, why) => {
    expect(judgeStep(P99_2MS, step)).toMatchObject({ meets, why });
  });

  it("judges the percentile the target names", () => {
    const s = measured(1000, 3); // p50 0.75, p99 3, p99.9 6
    expect(judgeStep({ percentile: "p50", boundMs: 1 }, s).meets).toBe(true);
    expect(judgeStep({ percentile: "p99", boundMs: 1 }, s).why).toBe("p99 3 ms > 1 ms");
    expect(judgeStep({ percentile: "p999", boundMs: 5 }, s).why).toBe("p99.9 6 ms > 5 ms");
  });
});

describe("sweepFigure at the bound's edges", () => {
  it.each<[string, SloStep[], SloFigure]>([
    [
      "no step meets it: below the lowest step, its offered rate (never 0)",
      [judged(1000, 5), judged(2000, 9)],
      { rps: 1000, bound: "below" },
    ],
    [
      "every step meets it: at least the highest step's achieved rate",
      [judged(1000, 1), judged(2000, 1.5)],
      { rps: 1980, bound: "atLeast" },
    ],
    [
      "a bracket: the last step before the first failure",
      [judged(1000, 1), judged(2000, 1.5), judged(3000, 4)],
      { rps: 1980, bound: "exact" },
    ],
    [
      "a pass above a failure is noise: the figure stays below the failure",
      [judged(1000, 1), judged(2000, 4), judged(3000, 1)],
      { rps: 990, bound: "exact" },
    ],
    [
      "steps in any order (refinements last)",
      [judged(3000, 4), judged(1000, 1), judged(2500, 3), judged(2000, 1.5)],
      { rps: 1980, bound: "exact" },
    ],
    [
      "the lowest fails, a higher passes: still below",
      [judged(1000, 3), judged(2000, 1)],
      { rps: 1000, bound: "below" },
    ],
  ])("%s", (_what, steps, figure) => {
    expect(sweepFigure(steps)).toEqual(figure);
  });

  it("refuses a sweep without steps", () => {
    expect(() => sweepFigure([])).toThrow(/without steps has no figure/);
  });

  it.each<[string, SloStep[], number | undefined]>([
    ["halfway between the last pass and the first failure", [judged(1000, 1), judged(2000, 1), judged(3000, 4)], 2500],
    ["after a refinement that passed", [judged(2000, 1), judged(3000, 4), judged(2500, 1)], 2750],
    ["after a refinement that failed", [judged(2000, 1), judged(3000, 4), judged(2500, 4)], 2250],
    ["nothing to refine when every step met it", [judged(1000, 1), judged(2000, 1)], undefined],
    ["nothing to refine below the lowest step", [judged(1000, 5), judged(2000, 5)], undefined],
    ["the ends 1/s apart", [judged(1000, 1), judged(1001, 5)], undefined],
  ])("nextRefineRate: %s", (_what, steps, rate) => {
    expect(nextRefineRate(steps)).toBe(rate);
  });
});

const exact = (rps: number): SloFigure => ({ rps, bound: "exact" });

describe("median and range over sweeps", () => {
  it.each<[string, SloFigure[], { median: SloFigure; min: SloFigure; max: SloFigure }]>([
    [
      "odd count: the middle one",
      [exact(300), exact(100), exact(200)],
      { median: exact(200), min: exact(100), max: exact(300) },
    ],
    [
      "even count: the lower middle one (conservative)",
      [exact(400), exact(100), exact(300), exact(200)],
      { median: exact(200), min: exact(100), max: exact(400) },
    ],
    ["one run", [exact(100)], { median: exact(100), min: exact(100), max: exact(100) }],
    [
      "bounds keep their kind",
      [{ rps: 50, bound: "below" }, exact(200), { rps: 900, bound: "atLeast" }],
      { median: exact(200), min: { rps: 50, bound: "below" }, max: { rps: 900, bound: "atLeast" } },
    ],
  ])("%s", (_what, figures, want) => {
    expect(summarizeFigures(figures)).toEqual({ runs: figures.length, ...want });
  });

  it("refuses no run", () => {
    expect(() => summarizeFigures([])).toThrow(/no sweep/);
  });

  const s = (...f: SloFigure[]) => summarizeFigures(f);
  it.each([
    ["apart", s(exact(100), exact(120)), s(exact(130), exact(150)), false],
    ["touching", s(exact(100), exact(130)), s(exact(130), exact(150)), true],
    ["nested", s(exact(100), exact(200)), s(exact(130), exact(150)), true],
    ["a 'below' reaches down to 0", s({ rps: 500, bound: "below" }, exact(600)), s(exact(100), exact(120)), true],
    [
      "an 'at least' reaches up without end",
      s(exact(100), { rps: 120, bound: "atLeast" }),
      s(exact(5000), exact(6000)),
      true,
    ],
  ])("rangesOverlap: %s", (_what, a, b, overlap) => {
    expect(rangesOverlap(a, b)).toBe(overlap);
    expect(rangesOverlap(b, a)).toBe(overlap);
  });

  it("formats the figure and the summary", () => {
    expect(formatFigure(exact(12345.6))).toBe("12,346");
    expect(formatFigure({ rps: 1000, bound: "below" })).toBe("below 1,000 (the lowest step)");
    expect(formatFigure({ rps: 61000, bound: "atLeast" })).toBe("at least 61,000 (every step met it)");
    expect(formatSummary(s(exact(11002), exact(12345), exact(13120)))).toBe("12,345 ops/s (3 runs: 11,002 – 13,120)");
    expect(formatSummary(s(exact(12345)))).toBe("12,345 ops/s (one run: no spread measured)");
    expect(formatSummary(s({ rps: 2000, bound: "below" }, { rps: 2100, bound: "below" }, exact(3100)))).toBe(
      "below 2,100 ops/s, the lowest step (3 runs: < 2,000 – 3,100)",
    );
    expect(formatSummary(s({ rps: 29700, bound: "atLeast" }))).toBe(
      "at least 29,700 ops/s, every step met it (one run: no spread measured)",
    );
  });

  it.each([
    [
      "one run each: no winner",
      s(exact(100)),
      s(exact(200)),
      "one run: spread not measured, no winner (run with --repeat 3)",
    ],
    [
      "overlap: no difference beyond run-to-run noise",
      s(exact(100), exact(150)),
      s(exact(140), exact(200)),
      "ranges overlap: no difference beyond run-to-run noise",
    ],
    [
      "apart: the ratio of the medians",
      s(exact(300), exact(310)),
      s(exact(100), exact(110)),
      "3.00× (cluster ÷ replication; the ranges do not overlap)",
    ],
    [
      "apart with a bound: about",
      s({ rps: 900, bound: "atLeast" }, { rps: 900, bound: "atLeast" }),
      s(exact(100), exact(110)),
      "about 9.00× (cluster ÷ replication; the ranges do not overlap)",
    ],
  ])("sloSpeedupText: %s", (_what, cluster, replication, text) => {
    expect(sloSpeedupText(cluster, replication)).toBe(text);
  });
});

describe("the sweep's workload", () => {
  it.each([
    [
      "the run's mix when it has one",
      {
        mix: [
          { test: "get" as const, percent: 90 },
          { test: "set" as const, percent: 10 },
        ],
        tests: SEED_WORKLOAD.tests,
      },
      "get:90,set:10",
    ],
    ["the seed's tests in equal shares", { tests: ["set", "get", "incr"] as const }, "set:34,get:33,incr:33"],
    ["one test", { tests: ["get"] as const }, "get:100"],
    [
      "one per server command (two LRANGEs send one)",
      { tests: ["lrange_100", "lrange_300", "set"] as const },
      "lrange_100:50,set:50",
    ],
  ])("sloMix: %s", (_what, w, mix) => {
    expect(
      sloMix({ ...w, tests: [...w.tests] })
        .map((e) => `${e.test}:${e.percent}`)
        .join(","),
    ).toBe(mix);
  });

  it("a step's workload: the sweep's mix and step length, reads on the primary, no soak, the step's rate or none (closed loop)", () => {
    const w = {
      ...SEED_WORKLOAD,
      rate: 5000,
      soak: { sampleSeconds: 5 },
      reads: "replicas" as const,
      slo: P99_2MS,
      sloStepSeconds: 3,
    };
    const open = sweepWorkload(w, 1234);
    expect(open).toMatchObject({ rate: 1234, durationSeconds: 3, mix: sloMix(w) });
    expect(open).not.toHaveProperty("soak");
    expect(open).not.toHaveProperty("reads");
    expect(sweepWorkload(w)).not.toHaveProperty("rate");
    expect(sweepWorkload({ ...SEED_WORKLOAD, slo: P99_2MS }).durationSeconds).toBe(2);
  });

  it("the Job's time bound: none without a target, grows with steps, step length and sweeps", () => {
    expect(sloSweepSeconds({}, 3)).toBe(0);
    expect(sloSweepSeconds({ slo: P99_2MS }, 3)).toBe(3 * (1 + 5 + 2) * (2 + 15));
    expect(sloSweepSeconds({ slo: P99_2MS, sloSteps: 10, sloStepSeconds: 30 }, 1)).toBe((1 + 10 + 2) * (30 + 15));
  });

  it("the side-by-side row: each topology's figure with its spread, '—' for a topology not swept", () => {
    const rec = (mode: "cluster" | "replication", ...f: SloFigure[]) => ({
      mode,
      target: P99_2MS,
      via: "x",
      mix: [],
      clients: 1,
      steps: 5,
      stepSeconds: 2,
      rule: { achievedShare: 0.95, refineSteps: 2 },
      runs: [],
      summary: summarizeFigures(f),
    });
    expect(
      sloSideRows([
        rec("replication", exact(100), exact(120), exact(110)),
        rec("cluster", exact(300), exact(290), exact(310)),
      ]),
    ).toEqual([
      {
        test: "throughput at p99 ≤ 2 ms",
        cluster: "300 ops/s (3 runs: 290 – 310)",
        replication: "110 ops/s (3 runs: 100 – 120)",
        speedup: "2.73× (cluster ÷ replication; the ranges do not overlap)",
      },
    ]);
    expect(
      sloSideRows(
        [rec("replication", exact(100), exact(120), exact(110)), rec("cluster", { rps: 50, bound: "below" })],
        true,
      ),
    ).toEqual([
      {
        test: "throughput at p99 ≤ 2 ms",
        cluster: "< 50 (1 run)",
        replication: "110 (100 – 120)",
        speedup: "one run: spread not measured, no winner (run with --repeat 3)",
      },
    ]);
    expect(sloSideRows([rec("cluster", exact(300))])).toEqual([
      {
        test: "throughput at p99 ≤ 2 ms",
        cluster: "300 ops/s (one run: no spread measured)",
        replication: "—",
        speedup: "—",
      },
    ]);
  });
});
