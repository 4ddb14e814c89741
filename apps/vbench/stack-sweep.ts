/**
 * The shard-scaling sweep against a deployed stack, through the Automation API: for each shard
 * count, in increasing order, set `valkey.cluster.primaries` and a new `benchmark.runId`, `up`
 * (the ClusterBootstrap step adds the new shards and moves slots to them; the benchmark Job runs
 * again), read the stack's `report` output, check the shape it reports, and keep its benchmark
 * rows. At the end: `sweep.csv` (scale and exponent by benchmarks/sweep/sweep-math.ts),
 * `run.json` and `report.html` (benchmarks/report/) under `<outputDir>/<timestamp>/`, each
 * step's report under `raw/`; then `destroy` and the two config keys put back, unless `keep`.
 *
 * The stack is any Automation API stack (apps/vbench/stack-sweep-command.ts selects the project's own with the
 * real program inline; the e2e test passes one on its local control plane). Pure parts:
 * apps/vbench/stack-sweep-plan.ts.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ConfigValue, DestroyResult, OutputMap, UpResult } from "@pulumi/pulumi/automation/index.js";
import { runTimestamp } from "./local-comparison.js";
import { loadSources } from "../../benchmarks/report/load.js";
import { REPORT_FILE, renderReport } from "../../benchmarks/report/render.js";
import { RUN_META_FILE, RUN_META_VERSION, type RunMeta } from "../../benchmarks/report/run-meta.js";
import { stackReportReadSchema, type StackReportInput } from "../../benchmarks/report/stack-report-schema.js";
import { SWEEP_CSV_FILE } from "./local-sweep.js";
import { renderSweepCsv, type SweepRow } from "../../benchmarks/sweep/sweep-csv.js";
import { scaling } from "../../benchmarks/sweep/sweep-math.js";
import {
  planStackSweep,
  restoreEdits,
  stepEdits,
  stepShapeProblems,
  sweepRowsOf,
  type ConfigEdit,
  engineErrors,
  type DeployedShape,
  type RawConfig,
  type SweepPlan,
} from "./stack-sweep-plan.js";

/** What the sweep needs of an Automation API stack (`Stack` fits). */
export interface SweepStack {
  readonly name: string;
  getAllConfig(): Promise<Record<string, ConfigValue>>;
  setConfig(key: string, value: ConfigValue, path?: boolean): Promise<void>;
  removeConfig(key: string, path?: boolean): Promise<void>;
  outputs(): Promise<OutputMap>;
  up(opts?: { onOutput?: (out: string) => void }): Promise<UpResult>;
  destroy(opts?: { onOutput?: (out: string) => void }): Promise<DestroyResult>;
}

export interface StackSweepOptions {
  stack: SweepStack;
  /** Strictly increasing shard counts (parseStackShards). */
  shards: number[];
  /** Leave the stack up at the last step (its config then says so); default: destroy. */
  keep: boolean;
  /** Results root; the run writes `<outputDir>/<timestamp>/`. */
  outputDir: string;
  /** `YYYYMMDD-HHMMSS` (UTC). @default now */
  timestamp?: string;
  /** One line per step event (config, up, rows, destroy). */
  onProgress?: (line: string) => void;
  /** The engine's output of every up and destroy. */
  onEngineOutput?: (text: string) => void;
}

export interface StackSweepResult {
  runDir: string;
  rows: SweepRow[];
  reportPath: string;
  /** `raw/stack-report-<n>-shards.json`, one per step. */
  stepReports: string[];
  destroyed: boolean;
}

/** A step whose `up` succeeded but whose report does not show the shape the step asked for. */
export class StepShapeError extends Error {
  constructor(
    readonly shards: number,
    readonly problems: string[],
  ) {
    super(`at ${shards} shards the stack report does not show the asked-for shape: ${problems.join("; ")}`);
    this.name = "StepShapeError";
  }
}

/** The shape a deployed stack runs, from its outputs; undefined when nothing is deployed. */
export function deployedShape(outputs: OutputMap): DeployedShape | undefined {
  const report = outputs.report?.value as
    { mode?: unknown; pods?: unknown; topology?: { primaries?: unknown[] } | null } | undefined;
  if (report === undefined || typeof report.mode !== "string")
    return Object.keys(outputs).length > 0 ? { mode: "unknown", primaries: 0 } : undefined;
  const primaries = Array.isArray(report.topology?.primaries) ? report.topology.primaries.length : 0;
  return { mode: report.mode, primaries };
}

async function apply(stack: SweepStack, e: ConfigEdit): Promise<void> {
  if (e.value === undefined) await stack.removeConfig(e.key, e.path);
  else await stack.setConfig(e.key, { value: e.value }, e.path);
}

function parseReport(value: unknown, shards: number): StackReportInput {
  const parsed = stackReportReadSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new StepShapeError(shards, [
      `the stack's report output is not a schemaVersion 1 report (${issue?.path.join(".") ?? "?"}: ${issue?.message ?? "invalid"})`,
    ]);
  }
  return parsed.data;
}

function runMeta(plan: SweepPlan, stackName: string, last: StackReportInput | undefined): RunMeta {
  const m = plan.replicasPerPrimary;
  return {
    schemaVersion: RUN_META_VERSION,
    kind: "local-run",
    workload: { ...plan.workload, tests: [...plan.workload.tests] },
    versions: {
      server: last?.versions.server ?? last?.versions.valkeyImage ?? "unknown",
      client: last?.versions.client ?? "unknown",
      cli: "not used (the stack's checks ran in the program)",
    },
    topologies: [
      `shard sweep: ${plan.shards.join(", ")} primaries × (1 + ${m}), one deployment scaled up step by step`,
    ],
    stack: { name: stackName, platform: plan.config.platform, zones: [...plan.config.aws.zones] },
  };
}

/** A step's failed `up`: what the engine said went wrong first (one line), then its whole text. */
function upFailed(shards: number, message: string, cause: unknown): Error {
  const errors = engineErrors(message);
  const why = errors.length > 0 ? errors.join(" | ") : (message.split("\n")[0] ?? "no message");
  return new Error(`at ${shards} shards, pulumi up failed: ${why}\n${message}`, { cause });
}

/** sweep.csv, run.json and report.html (the sweep plus each step's stack report, labelled by its shard count). */
async function writeResults(
  runDir: string,
  rows: SweepRow[],
  meta: RunMeta,
  stepReports: { shards: number; path: string }[],
  stackName: string,
): Promise<string> {
  writeFileSync(join(runDir, SWEEP_CSV_FILE), renderSweepCsv(rows));
  writeFileSync(join(runDir, RUN_META_FILE), `${JSON.stringify(meta, null, 2)}\n`);
  const sources = loadSources([runDir, ...stepReports.map((s) => s.path)]);
  sources.forEach((s, i) => {
    s.label = i === 0 ? `sweep of stack ${stackName}` : `${stackName} at ${stepReports[i - 1]?.shards ?? "?"} shards`;
  });
  const path = join(runDir, REPORT_FILE);
  writeFileSync(path, await renderReport(sources));
  return path;
}

export async function runStackSweep(o: StackSweepOptions): Promise<StackSweepResult> {
  const say = o.onProgress ?? (() => undefined);
  const onOutput = o.onEngineOutput ?? (() => undefined);
  const timestamp = o.timestamp ?? runTimestamp();
  const entries = (await o.stack.getAllConfig()) as RawConfig;
  const plan = planStackSweep(entries, o.shards, {
    timestamp,
    deployed: deployedShape(await o.stack.outputs()),
    keep: o.keep,
  });
  const m = plan.replicasPerPrimary;
  const runDir = resolve(o.outputDir, timestamp);
  const rawDir = join(runDir, "raw");
  mkdirSync(rawDir, { recursive: true });

  const measured: Omit<SweepRow, "scale" | "exponent">[] = [];
  const stepReports: { shards: number; path: string }[] = [];
  let last: StackReportInput | undefined;
  let failure: unknown;
  try {
    for (const [i, n] of plan.shards.entries()) {
      const runId = plan.runIds[i] as string;
      say(`${n} shards: valkey.cluster.primaries = ${n}, benchmark.runId = ${runId}; pulumi up`);
      for (const e of stepEdits(entries, n, runId)) await apply(o.stack, e);
      const res = await o.stack.up({ onOutput }).catch((err: unknown) => {
        throw upFailed(n, (err as Error).message, err);
      });
      if (res.summary.result !== "succeeded") throw new Error(`at ${n} shards, pulumi up ended ${res.summary.result}`);
      const report = parseReport(res.outputs.report?.value, n);
      const path = join(rawDir, `stack-report-${n}-shards.json`);
      writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
      const problems = stepShapeProblems(report, n, m);
      if (problems.length > 0) throw new StepShapeError(n, problems);
      stepReports.push({ shards: n, path });
      last = report;
      const rows = sweepRowsOf(report, n, m);
      measured.push(...rows);
      say(
        `${n} shards: verified ${n} × (1 + ${m}); ${rows.map((r) => `${r.test} ${Math.round(r.rps)} rps`).join(", ")}`,
      );
    }
  } catch (err) {
    failure = err;
  }

  let destroyed = false;
  let destroyError: unknown;
  if (!o.keep) {
    say(`pulumi destroy (the stack's resources; --keep leaves them up)`);
    try {
      await o.stack.destroy({ onOutput });
      for (const e of restoreEdits(entries)) await apply(o.stack, e);
      destroyed = true;
    } catch (err) {
      destroyError = err;
    }
  }
  const s = scaling(measured);
  const rows: SweepRow[] = measured.map((r, i) => ({
    ...r,
    scale: s[i]?.scale ?? null,
    exponent: s[i]?.exponent ?? null,
  }));
  const reportPath =
    rows.length > 0
      ? await writeResults(runDir, rows, runMeta(plan, o.stack.name, last), stepReports, o.stack.name)
      : join(runDir, REPORT_FILE);
  if (failure !== undefined || destroyError !== undefined) {
    const parts = [
      failure === undefined ? "" : (failure as Error).message,
      destroyError === undefined
        ? ""
        : `pulumi destroy failed (run \`pulumi destroy --stack ${o.stack.name}\`): ${(destroyError as Error).message}`,
      rows.length > 0 ? `the steps that ran are in ${runDir}` : "",
    ];
    throw new Error(parts.filter((p) => p !== "").join("\n"), { cause: failure ?? destroyError });
  }
  return { runDir, rows, reportPath, stepReports: stepReports.map((s) => s.path), destroyed };
}
