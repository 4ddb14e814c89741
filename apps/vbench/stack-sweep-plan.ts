/**
 * The shard-scaling sweep of a deployed stack, pure parts (apps/vbench/stack-sweep.ts drives them
 * through the Automation API): which shard counts, whether this stack can be swept at all, the
 * config edits of each step and how to undo them, whether a step's stack report shows the shape
 * the step asked for, and the sweep rows a step's benchmark rows become.
 *
 * Only up: a running cluster takes more primaries (the ClusterBootstrap step moves slots to the
 * new shards) but refuses fewer (the cluster-shape step), so the shard counts must increase, and
 * must start at or above what a stack that is already deployed runs.
 */
import type { SweepRow } from "../../benchmarks/sweep/sweep-csv.js";
import { parseShardList, SweepInputError } from "../../benchmarks/sweep/sweep-math.js";
import type { StackReportInput } from "../../benchmarks/report/stack-report-schema.js";
import { ConfigError, workloadFromConfig } from "../../config/schema.js";
import { PROJECT } from "../../config/sections.js";
import type { StackConfig } from "../../config/types.js";
import type { Workload } from "../../vocabulary/workload.js";
import { decodeConfigValue, parseConfigValues } from "../../stacks/config-values.js";

/** A sweep this stack or these flags cannot run: the CLI exits 2 with the message. */
export class SweepRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SweepRefused";
  }
}

/** One config value as `pulumi config --json` (the Automation API's getAllConfig) gives it. */
export interface RawConfigEntry {
  value: string;
  secret?: boolean;
  /** Present when the stack file holds the value as a YAML object (not as a JSON string). */
  objectValue?: unknown;
}

export type RawConfig = Record<string, RawConfigEntry>;

export const VALKEY_KEY = `${PROJECT}:valkey`;
export const BENCHMARK_KEY = `${PROJECT}:benchmark`;

/** `--shards 3,6,9`: positive, at least two, strictly increasing (a deployed sweep only scales up). */
export function parseStackShards(text: string): number[] {
  try {
    return parseShardList(text);
  } catch (err) {
    if (err instanceof SweepInputError && err.message.startsWith("--shards must increase strictly")) {
      throw new SweepRefused(
        `${err.message}: a deployed sweep only scales up, one \`up\` per step (the cluster-shape step refuses fewer primaries on a running cluster)`,
      );
    }
    if (err instanceof SweepInputError) throw new SweepRefused(err.message);
    throw err;
  }
}

/** The benchmark runId of one step: new at every step, so the benchmark Job runs again. */
export function stepRunId(timestamp: string, shards: number): string {
  return `sweep-${timestamp}-${shards}shards`;
}

/** One `pulumi config set` (value) or `rm` (undefined); `path` sets one leaf inside a YAML object. */
export interface ConfigEdit {
  key: string;
  path: boolean;
  value: string | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The section's current object: the YAML object, the JSON text decoded, or {} when unset. */
function sectionObject(entries: RawConfig, key: string): { object: Record<string, unknown>; yaml: boolean } {
  const e = entries[key];
  if (e === undefined) return { object: {}, yaml: true };
  if (isObject(e.objectValue)) return { object: e.objectValue, yaml: true };
  const decoded = decodeConfigValue(e.value);
  if (!isObject(decoded))
    throw new SweepRefused(`${key}: expected an object, got ${JSON.stringify(e.value).slice(0, 80)}`);
  return { object: decoded, yaml: false };
}

function withLeaf(object: Record<string, unknown>, path: readonly string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = path;
  if (head === undefined) return object;
  const child = isObject(object[head]) ? object[head] : {};
  return { ...object, [head]: rest.length === 0 ? value : withLeaf(child, rest, value) };
}

function leafOf(object: Record<string, unknown>, path: readonly string[]): unknown {
  return path.reduce<unknown>((o, k) => (isObject(o) ? o[k] : undefined), object);
}

/**
 * Sets `path` inside the section `key`. A YAML object gets a `--path` edit of that one leaf (the
 * rest of the file, comments included, stays as it is); a section held as JSON text (how the
 * Automation API and the e2e tests set objects) is rewritten whole, since a `--path` edit would
 * replace the text with an object holding only that leaf.
 */
function leafEdit(entries: RawConfig, key: string, path: readonly string[], value: string | number): ConfigEdit {
  const { object, yaml } = sectionObject(entries, key);
  // `--path` stores numeric-looking text as a number: only numbers and non-numeric text go that way.
  const safeForPath = typeof value === "number" || !/^-?\d+(\.\d+)?$/.test(value);
  if (yaml && safeForPath) return { key: `${key}.${path.join(".")}`, path: true, value: String(value) };
  return { key, path: false, value: JSON.stringify(withLeaf(object, path, value)) };
}

/** The edits of one step: `valkey.cluster.primaries` = shards, a new `benchmark.runId`. */
export function stepEdits(entries: RawConfig, shards: number, runId: string): ConfigEdit[] {
  return [
    leafEdit(entries, VALKEY_KEY, ["cluster", "primaries"], shards),
    leafEdit(entries, BENCHMARK_KEY, ["runId"], runId),
  ];
}

/** The edits that put both leaves back as they were before the sweep (after a destroy). */
export function restoreEdits(entries: RawConfig): ConfigEdit[] {
  const restore = (key: string, path: readonly string[]): ConfigEdit => {
    const e = entries[key];
    if (e === undefined) return { key, path: false, value: undefined };
    const { object, yaml } = sectionObject(entries, key);
    const original = leafOf(object, path);
    if (!yaml) return { key, path: false, value: e.value };
    if (original === undefined) return { key: `${key}.${path.join(".")}`, path: true, value: undefined };
    if (typeof original === "number" || typeof original === "string") return leafEdit(entries, key, path, original);
    return { key, path: false, value: e.value };
  };
  return [restore(VALKEY_KEY, ["cluster", "primaries"]), restore(BENCHMARK_KEY, ["runId"])];
}

/** The config values (`key → text`) one step would run with, for validation before anything changes. */
export function stepValues(entries: RawConfig, shards: number, runId: string): Record<string, string> {
  const values: Record<string, string> = Object.fromEntries(Object.entries(entries).map(([k, e]) => [k, e.value]));
  values[VALKEY_KEY] = JSON.stringify(
    withLeaf(sectionObject(entries, VALKEY_KEY).object, ["cluster", "primaries"], shards),
  );
  values[BENCHMARK_KEY] = JSON.stringify(withLeaf(sectionObject(entries, BENCHMARK_KEY).object, ["runId"], runId));
  return values;
}

export interface SweepPlan {
  shards: number[];
  replicasPerPrimary: number;
  /** The config of the first step (workload, zones, platform). */
  config: StackConfig;
  workload: Workload;
  runIds: string[];
}

/** What a stack that is already deployed runs, from its `report` output. */
export interface DeployedShape {
  mode: string;
  primaries: number;
}

/**
 * Checks that this stack can be swept over `shards` and that its config is valid at every step,
 * before anything changes. Refuses (SweepRefused): replication mode, the benchmark or the
 * topology check switched off, an invalid config at any step (the schema's message, by key), a
 * stack already deployed unless `keep` (the sweep destroys at the end), and a first step below
 * the primaries a deployed stack runs.
 */
export function planStackSweep(
  entries: RawConfig,
  shards: number[],
  o: { timestamp: string; deployed?: DeployedShape; keep: boolean },
): SweepPlan {
  const isSecret = (key: string) => entries[key]?.secret === true;
  const runIds = shards.map((n) => stepRunId(o.timestamp, n));
  const configs = shards.map((n, i) => {
    try {
      return parseConfigValues(stepValues(entries, n, runIds[i] as string), isSecret).config;
    } catch (err) {
      if (err instanceof ConfigError) throw new SweepRefused(`at ${n} shards, ${err.message}`);
      throw err;
    }
  });
  const config = configs[0] as StackConfig;
  if (config.valkey.mode !== "cluster") {
    throw new SweepRefused(
      `valkey.mode is ${config.valkey.mode}: a shard sweep needs cluster mode (replication mode has one primary, there are no shards to add); set valkey-on-eks:valkey.mode to cluster`,
    );
  }
  if (!config.benchmark.enabled)
    throw new SweepRefused(
      "benchmark.enabled is false: the sweep reads each step's benchmark rows; enable the benchmark",
    );
  if (!config.checks.verify)
    throw new SweepRefused(
      "checks.verify is false: the sweep verifies the cluster shape at every step from the topology check; enable it",
    );
  if (o.deployed !== undefined && !o.keep) {
    throw new SweepRefused(
      `the stack is already deployed (${o.deployed.mode}, ${o.deployed.primaries} primaries) and a sweep destroys its stack at the end: pass --keep to leave it up, or destroy it first`,
    );
  }
  const first = shards[0] as number;
  if (o.deployed !== undefined && o.deployed.mode === "cluster" && first < o.deployed.primaries) {
    throw new SweepRefused(
      `--shards starts at ${first}, but the stack runs ${o.deployed.primaries} primaries: a deployed sweep only scales up (the cluster-shape step refuses fewer primaries on a running cluster); start at ${o.deployed.primaries} or more`,
    );
  }
  return {
    shards,
    replicasPerPrimary: config.valkey.cluster.replicasPerPrimary,
    config,
    workload: workloadFromConfig(config),
    runIds,
  };
}

/**
 * What is wrong with a step's stack report, or [] when it shows the asked-for shape: cluster
 * mode, a topology check that passed with `shards` primaries of `replicasPerPrimary` replicas
 * each, and benchmark rows.
 */
export function stepShapeProblems(report: StackReportInput, shards: number, replicasPerPrimary: number): string[] {
  const problems: string[] = [];
  if (report.mode !== "cluster") problems.push(`mode is ${report.mode}, not cluster`);
  if (report.pods !== shards * (1 + replicasPerPrimary))
    problems.push(`${report.pods} Valkey pods, expected ${shards} × (1 + ${replicasPerPrimary})`);
  const t = report.topology;
  if (t === null) problems.push("no topology check in the report (checks.verify off?)");
  else {
    if (!t.ok) problems.push(`the topology check failed: ${t.failures.map((f) => f.code).join(", ")}`);
    if (t.primaries.length !== shards)
      problems.push(`the topology check saw ${t.primaries.length} primaries, expected ${shards}`);
    const off = t.primaries.filter((p) => p.replicas.length !== replicasPerPrimary);
    if (off.length > 0)
      problems.push(
        `${off.map((p) => `${p.address} has ${p.replicas.length} replica(s)`).join(", ")}; expected ${replicasPerPrimary} each`,
      );
  }
  if (report.benchmark === null || report.benchmark.rows.length === 0) problems.push("no benchmark rows in the report");
  return problems;
}

/** A step's benchmark rows as sweep rows (scale and exponent are added once every step ran). */
export function sweepRowsOf(
  report: StackReportInput,
  shards: number,
  replicasPerPrimary: number,
): Omit<SweepRow, "scale" | "exponent">[] {
  const usd = report.cost?.usdPerHour ?? null;
  return (report.benchmark?.rows ?? []).map((r) => ({
    workload: r.workload,
    test: r.test,
    shards,
    replicas_per_primary: replicasPerPrimary,
    rps: r.rps,
    p50_ms: r.p50_ms,
    p99_ms: r.p99_ms,
    client_cpus: null,
    client_cpu_pct: null,
    client_saturated: null,
    pinned: false,
    duration_s: r.duration_s,
    timestamp: r.timestamp,
    server_version: r.server_version,
    client_version: r.client_version,
    notes: [
      `stack ${report.stack}, ${report.pods} pods`,
      usd === null
        ? ""
        : `usd_per_hour ${usd}${r.usd_per_million_ops_per_s == null ? "" : `, usd_per_million_ops_per_s ${r.usd_per_million_ops_per_s}`}`,
      r.notes,
    ]
      .filter((x) => x !== "")
      .join("; "),
  }));
}

/**
 * The `error:` lines of a failed Pulumi command's text (the Automation API's CommandError wraps the engine's whole
 * output, the diagnostics far above its last line), each once, in order; empty when it has none.
 */
export function engineErrors(message: string): string[] {
  const lines = message
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /^error: /.test(l))
    .map((l) => l.replace(/^error: /, ""));
  return [...new Set(lines)];
}
