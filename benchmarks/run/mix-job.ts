/**
 * The deployed benchmark Job running a mix (config `benchmark.mix`, open loop with
 * `benchmark.rate`): its contract, declared once for the three sides that rely on it.
 *
 * - The manifest (components/benchmark/job-manifest.ts): a Node container runs
 *   `node MIX_JOB_MOUNT/MIX_JOB_FILE`, the bundle of mix-job-main.ts from a ConfigMap volume; the
 *   settings arrive as one JSON env var (MIX_JOB_SETTINGS_ENV), the password only as
 *   VALKEY_PASSWORD (a secretKeyRef), never in the settings or argv.
 * - The pod (mix-job-main.ts): runs the same runMix as `vbench local` / `vbench bench`, prints the
 *   framing of log-frames.ts and the whole result as ONE `### vbench-result <json>` line.
 * - The log parser (components/benchmark/job-log.ts, through mix-job-result.ts): validates that
 *   line field by field; garbage is an error naming the field, never a silent row.
 *
 * This module is bundled into the pod, so it validates with zod/mini (the full zod would add
 * ~450 KB to a ConfigMap that also lands in the Pulumi state).
 */
import * as z from "zod/mini";
import { BENCHMARK_TESTS, READ_TARGETS, type Workload } from "../../vocabulary/workload.js";
import { SLO_PERCENTILES } from "../../vocabulary/slo.js";
import type { MixResult } from "./mix-runner.js";
import { RESULT_MODES, type ResultMode } from "./result-row.js";
import { servedJson } from "./mix-served.js";
import type { MixJobExtras, MixJobResult } from "./mix-job-result.js";
import type { SloSweepRecord } from "./slo-figure.js";

/** Where the ConfigMap holding the bundle is mounted, and the bundle's key (its file name). */
export const MIX_JOB_MOUNT = "/vbench";
export const MIX_JOB_FILE = "mix.mjs";
/**
 * The load generator in the pod: an init container of the loadgen image runs
 * `LOADGEN_IMAGE_BINARY install LOADGEN_MOUNT`, copying the binary into an emptyDir that the Node
 * container mounts at LOADGEN_MOUNT; LOADGEN_ENV names it there.
 */
export const LOADGEN_MOUNT = "/loadgen";
/** Where a loadgen image holds the binary (images.sh and `npm run loadgen:image` build it so). */
export const LOADGEN_IMAGE_BINARY = "/vload";

/** The env var carrying MixJobSettings as JSON. */
export const MIX_JOB_SETTINGS_ENV = "VBENCH_MIX";
export { MIX_CLIENT } from "./loadgen.js";

/** What the pod needs besides the password. */
export interface MixJobSettings {
  mode: ResultMode;
  /** Cluster: the client Service (the client follows the slot map); replication: the write Service. */
  target: { host: string; port: number };
  /** The stack's workload, `mix` set. */
  workload: Workload;
  /** Give up when the target has not answered for this long. @default MIX_JOB_WAIT_S */
  waitSeconds?: number;
}

/** How long the pod waits for the target to answer by default. */
export const MIX_JOB_WAIT_S = 300;

const count = z.int().check(z.minimum(1));
const workloadSchema = z.strictObject({
  name: z.string().check(z.minLength(1)),
  requests: count,
  clients: count,
  pipeline: count,
  dataSize: count,
  threads: count,
  keyspaceLength: count,
  tests: z.array(z.enum(BENCHMARK_TESTS)),
  minDurationSeconds: z.number().check(z.minimum(0)),
  maxRequests: count,
  mix: z
    .array(z.strictObject({ test: z.enum(BENCHMARK_TESTS), percent: z.int().check(z.minimum(1), z.maximum(100)) }))
    .check(z.minLength(1)),
  durationSeconds: z.optional(count),
  rate: z.optional(count),
  soak: z.optional(z.strictObject({ sampleSeconds: count })),
  reads: z.optional(z.enum(READ_TARGETS)),
  slo: z.optional(z.strictObject({ percentile: z.enum(SLO_PERCENTILES), boundMs: z.number().check(z.positive()) })),
  sloSteps: z.optional(count),
  sloStepSeconds: z.optional(count),
  repeat: z.optional(count),
}) satisfies z.ZodMiniType<Workload>;

const settingsSchema = z.strictObject({
  mode: z.enum(RESULT_MODES),
  target: z.strictObject({
    host: z.string().check(z.minLength(1)),
    port: z.int().check(z.minimum(1), z.maximum(65535)),
  }),
  workload: workloadSchema,
  waitSeconds: z.optional(count),
});

function issues(e: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  return e.issues
    .slice(0, 5)
    .map((i) => `${i.path.length > 0 ? i.path.join(".") : "(top level)"}: ${i.message}`)
    .join("; ");
}

/** The settings as the manifest puts them in the env (one JSON text). */
export function mixJobSettingsEnv(s: MixJobSettings): string {
  if (s.workload.mix === undefined)
    throw new RangeError("the benchmark Job runs a mix only when the workload has one (benchmark.mix)");
  return JSON.stringify(s);
}

/** The pod's settings from its env; an error names the variable and the field. */
export function mixJobSettingsFromEnv(env: Record<string, string | undefined>): MixJobSettings {
  const text = env[MIX_JOB_SETTINGS_ENV];
  if (text === undefined || text === "") throw new Error(`${MIX_JOB_SETTINGS_ENV} is not set`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${MIX_JOB_SETTINGS_ENV} is not JSON: ${(err as Error).message}`, { cause: err });
  }
  const r = z.safeParse(settingsSchema, json);
  if (!r.success) throw new Error(`${MIX_JOB_SETTINGS_ENV}: ${issues(r.error)}`);
  return r.data;
}

/**
 * The result line's payload. A soak's samples are not in it: they go one per `### vbench-sample`
 * line before it (soakSampleLines), so no log line grows with the soak's length; the result
 * carries the soak without them and their count. With `workload.slo`, the sweep's record.
 */
export function mixJobResult(
  r: MixResult,
  o: { runs?: MixJobResult["runs"]; sloSweep?: SloSweepRecord } = {},
): MixJobResult {
  const soak = r.soak?.record;
  return {
    rows: r.rows,
    ...(o.runs === undefined ? {} : { runs: o.runs }),
    served: servedJson(r.served) as MixJobExtras["served"],
    latency: r.latency,
    generator: r.generator,
    ...(r.openLoop === undefined ? {} : { openLoop: r.openLoop }),
    ...(r.loops === undefined ? {} : { loops: r.loops }),
    ...(o.sloSweep === undefined ? {} : { sloSweep: o.sloSweep }),
    ...(soak === undefined ? {} : { soak: { ...soak, samples: [], sampleCount: soak.samples.length } }),
  };
}

/** A soak's samples, one JSON text each (the `### vbench-sample` lines). */
export function soakSampleLines(r: MixResult): string[] {
  return (r.soak?.record.samples ?? []).map((x) => JSON.stringify(x));
}
