/**
 * Throughput at a latency target (`--slo p99:2ms`, config `benchmark.slo`): per topology, an
 * open-loop rate sweep gives the latency–throughput curve, and from it the highest rate that meets
 * the target (the rule: slo-figure.ts).
 *
 * One sweep: first the generator's closed-loop ceiling for the sweep's mix (runMix without a rate,
 * `sloStepSeconds` long), then open-loop steps at 1/n, 2/n, … 100 % of that ceiling (`sloSteps` n,
 * each `sloStepSeconds` long, each a runMix with `rate`), then SLO_REFINE_STEPS bisections between
 * the last step that met the target and the first that did not. `repeat` sweeps per topology give
 * the figure its median and range; with several topologies the sweeps interleave (A B A B …) so a
 * drift of the machine does not land on one side.
 *
 * The mix: the run's `mix`, else the run's tests in equal shares (sloMix). Reads go to the primary
 * (primaries); a soak's sampling and the run's own `rate` are not part of the sweep.
 */
import {
  DEFAULT_SLO_STEP_SECONDS,
  DEFAULT_SLO_STEPS,
  SLO_ACHIEVED_SHARE,
  SLO_REFINE_STEPS,
  sloLabel,
} from "../../vocabulary/slo.js";
import {
  BENCHMARK_TEST_COMMANDS,
  type BenchmarkTest,
  type MixEntry,
  type Workload,
} from "../../vocabulary/workload.js";
import { runMix, type MixResult, type RunMixOptions } from "./mix-runner.js";
import {
  judgeStep,
  nextRefineRate,
  summarizeFigures,
  sweepFigure,
  type SloStep,
  type SloSweepRecord,
  type SloSweepRun,
} from "./slo-figure.js";

/**
 * The mix a sweep runs: the run's mix when it has one; otherwise the run's tests in equal whole
 * shares (set,get,incr → set:34,get:33,incr:33), one test per server command (the first of tests
 * the server counts as one, e.g. two LRANGEs: the served check cannot tell them apart).
 */
export function sloMix(w: Pick<Workload, "mix" | "tests">): MixEntry[] {
  if (w.mix !== undefined && w.mix.length > 0) return w.mix.map((e) => ({ ...e }));
  const seen = new Set<string>();
  const tests = w.tests.filter((t: BenchmarkTest) => {
    const c = BENCHMARK_TEST_COMMANDS[t];
    if (seen.has(c)) return false;
    seen.add(c);
    return true;
  });
  if (tests.length === 0) throw new RangeError("the sweep needs a mix or at least one test");
  const base = Math.floor(100 / tests.length);
  const extra = 100 - base * tests.length;
  return tests.map((test, i) => ({ test, percent: base + (i < extra ? 1 : 0) }));
}

/**
 * The workload of a sweep's run: its mix, one step's length, reads on the primary, no soak; open loop at `rate` when
 * given.
 */
export function sweepWorkload(w: Workload, rate?: number): Workload {
  const { rate: _rate, soak: _soak, reads: _reads, ...rest } = w;
  return {
    ...rest,
    mix: sloMix(w),
    durationSeconds: w.sloStepSeconds ?? DEFAULT_SLO_STEP_SECONDS,
    ...(rate === undefined ? {} : { rate }),
  };
}

/** What a sweep of one topology needs: runMix's options (the workload with `slo` set) and a description of the path. */
export interface SloSweepSide {
  options: RunMixOptions;
  /** e.g. "the HAProxy write endpoint 127.0.0.1:7101". */
  via: string;
}

type Run = (o: RunMixOptions) => Promise<MixResult>;

const fmt = (n: number): string => new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 }).format(Math.round(n));

/**
 * One open-loop step at `rate`; a failed run (error replies, no reply, shares off) is a step that does not meet the
 * target, its message kept.
 */
async function step(side: SloSweepSide, run: Run, rate: number, fraction: number, refined: boolean): Promise<SloStep> {
  const o = side.options;
  const slo = o.workload.slo;
  if (slo === undefined) throw new RangeError("a sweep needs workload.slo");
  const base = { fraction: Number(fraction.toFixed(4)), offeredRps: rate, refined, generatorLagMaxMs: null };
  try {
    const r = await run({ ...o, workload: sweepWorkload(o.workload, rate), onProgress: undefined });
    const mix = r.rows.find((x) => x.test === "MIX");
    if (mix === undefined) throw new Error("the mix gave no MIX row");
    return judgeStep(slo, {
      ...base,
      achievedRps: mix.rps,
      requests: mix.requests,
      p50_ms: mix.p50_ms,
      p99_ms: mix.p99_ms,
      p999_ms: r.latency.p999_ms.MIX ?? mix.p999_ms ?? null,
      max_ms: mix.max_ms,
      generatorLagMaxMs: r.openLoop?.generatorLagMaxMs ?? null,
      generatorLagMeanMs: r.openLoop?.generatorLagMeanMs ?? null,
      error: null,
    });
  } catch (err) {
    const e = { p50_ms: null, p99_ms: null, p999_ms: null, max_ms: null };
    return judgeStep(slo, {
      ...base,
      achievedRps: 0,
      requests: 0,
      ...e,
      error: (err as Error).message.replace(/\s*\n\s*/g, " | "),
    });
  }
}

/** One sweep of one topology: the ceiling, the steps, the refinements, the figure. */
export async function runSloSweep(side: SloSweepSide, run: Run = runMix, label = ""): Promise<SloSweepRun> {
  const o = side.options;
  const w = o.workload;
  const say = (line: string): void => o.onProgress?.(`${label}${line}`);
  const closed = await run({ ...o, workload: sweepWorkload(w), onProgress: undefined });
  const mix = closed.rows.find((x) => x.test === "MIX");
  if (mix === undefined || !(mix.rps > 0))
    throw new Error(`the sweep's closed-loop ceiling run measured no rate (${o.mode})`);
  const ceiling = {
    rps: mix.rps,
    p50_ms: mix.p50_ms,
    p99_ms: mix.p99_ms,
    p999_ms: closed.latency.p999_ms.MIX ?? mix.p999_ms ?? mix.max_ms,
  };
  say(`closed-loop ceiling ${fmt(ceiling.rps)}/s`);
  const n = w.sloSteps ?? DEFAULT_SLO_STEPS;
  const steps: SloStep[] = [];
  const report = (s: SloStep): void =>
    say(
      `${s.refined ? "refine" : `step ${Math.round(100 * s.fraction)} %`} at ${fmt(s.offeredRps)}/s: achieved ${fmt(s.achievedRps)}/s, p99 ${s.p99_ms ?? "—"} ms ${s.meets ? "meets" : `misses (${s.why})`}`,
    );
  for (let i = 1; i <= n; i++) {
    const rate = Math.max(1, Math.round((ceiling.rps * i) / n));
    steps.push(await step(side, run, rate, i / n, false));
    report(steps.at(-1) as SloStep);
  }
  for (let i = 0; i < SLO_REFINE_STEPS; i++) {
    const rate = nextRefineRate(steps);
    if (rate === undefined) break;
    steps.push(await step(side, run, rate, rate / ceiling.rps, true));
    report(steps.at(-1) as SloStep);
  }
  return { ceiling, steps, figure: sweepFigure(steps) };
}

/** The record of a topology's sweeps (raw/slo-sweep-<mode>.json, the Job's `sloSweep`). */
export function sweepRecord(side: SloSweepSide, runs: SloSweepRun[]): SloSweepRecord {
  const w = side.options.workload;
  if (w.slo === undefined) throw new RangeError("a sweep needs workload.slo");
  return {
    mode: side.options.mode,
    target: w.slo,
    via: side.via,
    mix: sloMix(w),
    clients: w.clients,
    steps: w.sloSteps ?? DEFAULT_SLO_STEPS,
    stepSeconds: w.sloStepSeconds ?? DEFAULT_SLO_STEP_SECONDS,
    rule: { achievedShare: SLO_ACHIEVED_SHARE, refineSteps: SLO_REFINE_STEPS },
    runs,
    summary: summarizeFigures(runs.map((r) => r.figure)),
  };
}

/**
 * `repeat` sweeps of each side, interleaved (run 1 of every side, then run 2, …); one record per side, in the sides'
 * order.
 */
export async function runSloSweeps(
  sides: readonly SloSweepSide[],
  repeat: number,
  run: Run = runMix,
): Promise<SloSweepRecord[]> {
  if (!Number.isInteger(repeat) || repeat < 1)
    throw new RangeError(`repeat must be a whole number ≥ 1 (got ${repeat})`);
  const runs: SloSweepRun[][] = sides.map(() => []);
  for (let k = 1; k <= repeat; k++) {
    for (const [i, side] of sides.entries()) {
      const slo = side.options.workload.slo;
      const label = `${sides.length > 1 ? `${side.options.mode} ` : ""}${slo === undefined ? "" : sloLabel(slo)} sweep ${k}/${repeat}: `;
      (runs[i] as SloSweepRun[]).push(await runSloSweep(side, run, label));
    }
  }
  return sides.map((side, i) => sweepRecord(side, runs[i] as SloSweepRun[]));
}
