/**
 * The JSON of a topology's latency-target sweep (slo-figure.ts SloSweepRecord), validated where it
 * is read back: raw/slo-sweep-<mode>.json (the report's loader) and the Job's result line
 * (`sloSweep`, mix-job-result.ts), hence the stack report's `benchmark.mix.sloSweep`. Not bundled
 * into the pod (full zod).
 */
import { z } from "zod";
import { SLO_PERCENTILES } from "../../vocabulary/slo.js";
import { BENCHMARK_TESTS } from "../../vocabulary/workload.js";
import type { SloSweepRecord } from "./slo-figure.js";

const ms = z.number().nonnegative();
const rate = z.number().nonnegative();
const figureSchema = z.strictObject({ rps: rate, bound: z.enum(["exact", "below", "atLeast"]) });

const stepSchema = z.strictObject({
  fraction: z.number().positive(),
  offeredRps: z.number().positive(),
  achievedRps: rate,
  requests: z.int().min(0),
  p50_ms: ms.nullable(),
  p99_ms: ms.nullable(),
  p999_ms: ms.nullable(),
  max_ms: ms.nullable(),
  generatorLagMaxMs: ms.nullable(),
  generatorLagMeanMs: ms.nullable().optional(),
  error: z.string().nullable(),
  refined: z.boolean(),
  meets: z.boolean(),
  why: z.string(),
});

export const sloSweepSchema = z.strictObject({
  mode: z.enum(["cluster", "replication"]),
  target: z.strictObject({ percentile: z.enum(SLO_PERCENTILES), boundMs: z.number().positive() }),
  via: z.string(),
  mix: z.array(z.strictObject({ test: z.enum(BENCHMARK_TESTS), percent: z.int().min(1).max(100) })).min(1),
  clients: z.int().min(1),
  steps: z.int().min(1),
  stepSeconds: z.int().min(1),
  rule: z.strictObject({ achievedShare: z.number().positive().max(1), refineSteps: z.int().min(0) }),
  runs: z
    .array(
      z.strictObject({
        ceiling: z.strictObject({ rps: z.number().positive(), p50_ms: ms, p99_ms: ms, p999_ms: ms }),
        steps: z.array(stepSchema).min(1),
        figure: figureSchema,
      }),
    )
    .min(1),
  summary: z.strictObject({ runs: z.int().min(1), median: figureSchema, min: figureSchema, max: figureSchema }),
}) satisfies z.ZodType<SloSweepRecord>;
