/**
 * The latency-target flags of `vbench local` and `vbench bench`: `--slo p99:2ms` (parsed once, by
 * vocabulary/slo.ts parseSlo), `--slo-steps N`, `--slo-step-s S`. The sweeps per topology are the
 * workload's runs (`--repeat`, vocabulary/workload.ts runsOf), like every other figure. Bad values
 * exit 2 naming the flag.
 */
import {
  DEFAULT_SLO_STEP_SECONDS,
  DEFAULT_SLO_STEPS,
  MAX_SLO_STEP_SECONDS,
  MAX_SLO_STEPS,
  parseSlo,
  type SloTarget,
} from "../../vocabulary/slo.js";
import type { Workload } from "../../vocabulary/workload.js";
import { intInRange, UsageError } from "./errors.js";

export interface SloFlags {
  slo?: SloTarget;
  sloSteps?: number;
  sloStepS?: number;
}

/** Parses `--slo p99:2ms`, naming the flag. */
export function sloFlag(text: string): SloTarget {
  const r = parseSlo(text);
  if ("problem" in r) throw new UsageError(`--slo: ${r.problem}`);
  return r.target;
}

/** The flags as commander options, for `.option(...SLO_OPTIONS.slo)` and the rest. */
export const SLO_OPTIONS = {
  slo: [
    "--slo <target>",
    "throughput at a latency target, e.g. p99:2ms (p50, p99, p999 or p99.9; us, ms or s): per topology an open-loop rate sweep up to the generator's closed-loop ceiling finds the highest rate that meets it (raw/slo-sweep-<mode>.json, the side-by-side table, the report's chart, the verdict)",
    sloFlag,
  ],
  steps: [
    "--slo-steps <n>",
    `with --slo: rate steps, 1/n … 100 % of the ceiling (default ${DEFAULT_SLO_STEPS})`,
    intInRange("--slo-steps", 1, MAX_SLO_STEPS),
  ],
  stepS: [
    "--slo-step-s <seconds>",
    `with --slo: seconds per step (default ${DEFAULT_SLO_STEP_SECONDS})`,
    intInRange("--slo-step-s", 1, MAX_SLO_STEP_SECONDS),
  ],
} as const;

/** The workload with the sweep's settings; the sweep settings without --slo are refused. */
export function withSlo(workload: Workload, f: SloFlags): Workload {
  if (f.slo === undefined) {
    if (f.sloSteps !== undefined)
      throw new UsageError("--slo-steps applies to a latency-target sweep: give --slo too, e.g. --slo p99:2ms");
    if (f.sloStepS !== undefined)
      throw new UsageError("--slo-step-s applies to a latency-target sweep: give --slo too, e.g. --slo p99:2ms");
    return workload;
  }
  return {
    ...workload,
    slo: f.slo,
    ...(f.sloSteps === undefined ? {} : { sloSteps: f.sloSteps }),
    ...(f.sloStepS === undefined ? {} : { sloStepSeconds: f.sloStepS }),
  };
}
