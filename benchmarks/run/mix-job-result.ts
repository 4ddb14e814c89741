/**
 * The benchmark Job's mix result line (`### vbench-result <json>`, mix-job.ts) as the log parser
 * reads it (components/benchmark/job-log.ts): every field validated, garbage an error naming it.
 * Also the stack report's `benchmark.mix` (benchmarks/report/stack-report-schema.ts). Not bundled
 * into the pod (full zod).
 */
import { z } from "zod";
import type { ResultRow } from "./result-row.js";
import type { LoopComparison } from "./loop-figures.js";
import type { NetCounters } from "./net-bytes.js";
import { resultRowSchema } from "./result-row.js";
import { soakRecordSchema, soakSampleSchema, type SoakRecord } from "./soak-sample.js";
import { sloSweepSchema } from "./slo-sweep-schema.js";

function issues(e: z.ZodError): string {
  return e.issues
    .slice(0, 5)
    .map((i) => `${i.path.length > 0 ? i.path.join(".") : "(top level)"}: ${i.message}`)
    .join("; ");
}

const ms = z.number().nonnegative();
const loopFiguresSchema = z.strictObject({
  rps: ms,
  requests: z.int().min(0),
  p50_ms: ms,
  p99_ms: ms,
  p999_ms: ms,
  max_ms: ms,
});
/** loop-figures.ts LoopComparison (raw/loop-comparison-<mode>.json; the Job's `loops`). */
export const loopComparisonSchema = z.strictObject({
  rate: z.number().positive(),
  durationSeconds: z.number().positive(),
  closed: loopFiguresSchema,
  open: loopFiguresSchema,
}) satisfies z.ZodType<LoopComparison>;
/**
 * The open loop's rate and latency over time (raw/latency-series-<mode>.json; the Job's `openLoop`):
 * one point per `bucketS` of intended send time (1 s up to 600 s of load, coarser beyond; absent in
 * files written before it existed: 1 s), and how late the generator sent (mean: absent in older files).
 */
export const openLoopSchema = z.strictObject({
  rate: z.number().positive(),
  series: z.array(
    z.strictObject({ second: z.number().min(0), requests: z.int().min(0), p50_ms: ms, p99_ms: ms, max_ms: ms }),
  ),
  bucketS: z.number().positive().optional(),
  generatorLagMaxMs: ms,
  generatorLagMeanMs: ms.optional(),
});
const bytes = z.int();
/**
 * A member's byte counters over the mix (net-bytes.ts NetCounters deltas; negative after a restart); the bus is null
 * outside cluster mode.
 */
const netSchema = z.strictObject({
  input: bytes,
  output: bytes,
  replInput: bytes,
  replOutput: bytes,
  busSent: bytes.nullable(),
  busReceived: bytes.nullable(),
}) satisfies z.ZodType<NetCounters>;
/**
 * Each member as the served view records it (mix-served.ts MemberDelta; `delta`, the commandstats, left loose): what
 * data transfer reads.
 */
const memberSchema = z.looseObject({
  member: z.string(),
  primary: z.boolean(),
  replicaOf: z.string().optional(),
  net: netSchema.optional(),
  netMissing: z.string().optional(),
  seconds: z.number().nonnegative().optional(),
  lagged: z.literal(true).optional(),
});
export type OpenLoopSeries = z.infer<typeof openLoopSchema>;
/** The load generator of a run (loadgen.ts): its version, its own CPU use, bytes, redirects followed. */
export const generatorSchema = z.strictObject({
  version: z.string().min(1),
  cpu: z.strictObject({ cpuSeconds: ms, wallSeconds: ms, cores: z.number().positive() }),
  bytes: z.strictObject({ written: z.int().min(0), read: z.int().min(0) }),
  redirects: z.strictObject({ moved: z.int().min(0), ask: z.int().min(0) }),
});
export type GeneratorFigures = z.infer<typeof generatorSchema>;

/** What a mix measured beside its rows, as JSON (also the stack report's `benchmark.mix`). */
export const mixExtrasSchema = z.strictObject({
  /** Absent in results written before the generator reported itself. */
  generator: generatorSchema.optional(),
  served: z.looseObject({
    total: z.int().min(0),
    commands: z.array(z.looseObject({ test: z.string(), servedPercent: z.number() })),
    /** Every member's deltas; absent in results of versions that did not record them. */
    members: z.array(memberSchema).optional(),
  }),
  latency: z.strictObject({ p999_ms: z.record(z.string(), ms), histograms: z.record(z.string(), z.string()) }),
  openLoop: openLoopSchema.optional(),
  /** With a rate: the closed loop paced to it beside the open loop (loop-comparison.ts). */
  loops: loopComparisonSchema.optional(),
  /** With `slo`: the open-loop rate sweep and the throughput at the latency target (slo-sweep.ts). */
  sloSweep: sloSweepSchema.optional(),
  /**
   * `workload.repeat` above 1: every run's own rows (the result's rows are their medians with min–max; the other fields
   * are the last run's).
   */
  runs: z.array(z.array(resultRowSchema)).optional(),
  /** A soak: its samples arrive on their own lines (`### vbench-sample`); `sampleCount` says how many to expect. */
  soak: soakRecordSchema
    .extend({
      sampleCount: z.int().min(0),
      /** Set by the BenchmarkResults step when it merged windows for the outputs (soak-downsample.ts). */
      downsampled: z.strictObject({ factor: z.int().min(2), samples: z.int().min(1) }).optional(),
    })
    .optional(),
});
const resultSchema = mixExtrasSchema.extend({ rows: z.array(resultRowSchema).min(1) });

/** What a mix measured beside its rows (the BenchmarkResults step's `mix` output). */
export type MixJobExtras = z.infer<typeof mixExtrasSchema>;
/** The result line's payload: the rows and what the pod measured beside them, JSON-safe. */
export type MixJobResult = MixJobExtras & { rows: ResultRow[] };

/** Parses and validates the `### vbench-result` payload; throws naming the first bad fields. */
export function parseMixJobResult(text: string): MixJobResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`the result line is not JSON (${(err as Error).message}; truncated?)`, { cause: err });
  }
  const r = resultSchema.safeParse(json);
  if (!r.success) throw new Error(`the result line is not a mix result: ${issues(r.error)}`);
  const rowTests = new Set(r.data.rows.map((x) => x.test));
  const missing = Object.keys(r.data.latency.p999_ms).filter((t) => !rowTests.has(t));
  if (missing.length > 0) throw new Error(`the result line has p99.9 for ${missing.join(", ")} but no row of it`);
  return r.data;
}

/** One `### vbench-sample` line's sample; throws naming the line and field. */
export function parseSoakSample(text: string, n: number): SoakRecord["samples"][number] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`soak sample line ${n} is not JSON (${(err as Error).message}; truncated?)`, { cause: err });
  }
  const r = soakSampleSchema.safeParse(json);
  if (!r.success) throw new Error(`soak sample line ${n} is not a sample: ${issues(r.error)}`);
  return r.data;
}
