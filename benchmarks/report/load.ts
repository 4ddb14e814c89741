/**
 * Loads report sources from disk:
 *
 * - a local run's results directory (`results/<ts>/`): results.csv (required), run.json and
 *   raw/verify-<mode>.json, raw/drill-*.json and raw/soak-<mode>.json (optional);
 * - a deployed stack's report: `pulumi stack output report --json > stack.json` (or the whole
 *   `pulumi stack output --json`, whose `report` key is used);
 * - a bare results.csv file.
 *
 * Every problem is a ReportLoadError naming the path and, for JSON, the field.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { RESULT_TIMESTAMP_PATTERN, type ResultMode, type ResultRow } from "../run/result-row.js";
import { parseResultsCsv, ResultsCsvError } from "../run/results-csv.js";
import { parseSweepCsv, SweepCsvError, type SweepRow } from "../sweep/sweep-csv.js";
import { ladderFileSchema, SCALE_LADDER_FILE, type LadderFile } from "../scale/ladder-file.js";
import { loadDrills } from "./drill-files.js";
import { loadSoaks } from "./soak-section.js";
import { loadLoops, loadOpenLoops } from "./loop-section.js";
import { loadTransfers } from "./transfer-section.js";
import { loadSloSweeps } from "./slo-section.js";
import type { MixJobExtras } from "../run/mix-job-result.js";
import { verifierReportJsonSchema, type VerifierReportJson } from "../../core/verify/check-report.js";
import { replicaJson } from "../../core/verify/to-check-report.js";
import type { ReportSource, TopologyShard, TopologyView, WorkloadView } from "./model.js";
import { RUN_META_FILE, runMetaSchema, type RunMeta } from "./run-meta.js";

export class ReportLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReportLoadError";
  }
}

function describeIssues(path: string, what: string, error: z.ZodError): ReportLoadError {
  const lines = error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length > 0 ? i.path.join(".") : "(top level)"}: ${i.message}`);
  const more = error.issues.length > 5 ? ` (and ${error.issues.length - 5} more)` : "";
  return new ReportLoadError(`${path}: not ${what}: ${lines.join("; ")}${more}`);
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new ReportLoadError(`${path}: cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function readJson(path: string): unknown {
  const text = readText(path);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ReportLoadError(`${path}: not JSON: ${(err as Error).message}`);
  }
}

/**
 * Parses the CSV at `path` with `parse`; a file with a header but no `noun` rows is an error, and
 * so is a parse error (`isParseError`), prefixed with `prefix` after the path.
 */
function readRows<R>(
  path: string,
  parse: (text: string) => R[],
  noun: string,
  isParseError: (err: unknown) => err is Error,
  prefix = "",
): R[] {
  let rows: R[];
  try {
    rows = parse(readText(path));
  } catch (err) {
    if (isParseError(err)) throw new ReportLoadError(`${path}: ${prefix}${err.message}`);
    throw err;
  }
  if (rows.length === 0) throw new ReportLoadError(`${path}: has a header but no ${noun} rows`);
  return rows;
}

function readCsv(path: string): ResultRow[] {
  const prefix = basename(path) === "results.csv" ? "" : "not a results.csv (and not a directory or JSON): ";
  return readRows(path, parseResultsCsv, "result", (err) => err instanceof ResultsCsvError, prefix);
}

const verifyFileSchema = z.object({
  before: verifierReportJsonSchema.optional(),
  after: verifierReportJsonSchema.optional(),
});

function zonesOf(shards: TopologyShard[]): string[] {
  const all = shards.flatMap((s) => [s.zone, ...s.replicas.map((r) => r.zone)]);
  return [...new Set(all.filter((z): z is string => z !== null))].sort();
}

function viewOf(mode: ResultMode, r: VerifierReportJson): TopologyView {
  const shards: TopologyShard[] = r.shards.map((s) => ({
    address: s.primary.address,
    zone: s.primary.zone ?? null,
    slotRanges: s.primary.slotRanges,
    keys: s.primary.keys ?? null,
    replicas: s.replicas.map(replicaJson),
  }));
  return {
    mode,
    ok: r.ok,
    failures: r.failures.map((f) => ({ code: f.code, message: f.message })),
    shards,
    primariesPerZone: r.primariesPerZone,
    zones: zonesOf(shards),
    nodeCount: r.nodeCount,
    notes: r.notes ?? [],
  };
}

function workloadFromRows(rows: ResultRow[], name?: string): WorkloadView {
  const one = <T>(values: T[]): T | null => (new Set(values).size === 1 ? (values[0] ?? null) : null);
  return {
    name: name ?? [...new Set(rows.map((r) => r.workload))].join(", "),
    tests: [...new Set(rows.map((r) => r.test))],
    clients: one(rows.map((r) => r.clients)),
    pipeline: one(rows.map((r) => r.pipeline)),
    dataSize: one(rows.map((r) => r.datasize)),
    threads: null,
    keyspaceLength: null,
    requests: null,
    minDurationSeconds: null,
  };
}

function versionsFromRows(rows: Pick<ResultRow, "server_version" | "client_version">[]): [string, string][] {
  const list = (k: "server_version" | "client_version") => [...new Set(rows.map((r) => r[k]))].join(", ");
  return [
    ["Valkey server", list("server_version")],
    ["Benchmark client", list("client_version")],
  ];
}

function readSweep(path: string): SweepRow[] {
  return readRows(path, parseSweepCsv, "sweep", (err) => err instanceof SweepCsvError);
}

/** The optional sections a run directory may hold beside its rows (raw/drill-*.json, raw/soak-<mode>.json, ...). */
interface RunSections {
  drills: ReturnType<typeof loadDrills>;
  soak: ReturnType<typeof loadSoaks>;
  loops: ReturnType<typeof loadLoops>;
  openLoop: ReturnType<typeof loadOpenLoops>;
  transfer: ReturnType<typeof loadTransfers>;
  sloSweeps: ReturnType<typeof loadSloSweeps>;
}

/** <dir>/scale-ladder.json, when present; a malformed one is a ReportLoadError naming its keys. */
function readScaleLadder(dir: string): LadderFile | undefined {
  const path = join(dir, SCALE_LADDER_FILE);
  if (!existsSync(path)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(readText(path));
  } catch (err) {
    if (err instanceof ReportLoadError) throw err;
    throw new ReportLoadError(`${path}: not JSON: ${(err as Error).message}`);
  }
  const parsed = ladderFileSchema.safeParse(json);
  if (!parsed.success) throw describeIssues(path, "a scale ladder file (npm run bench:scale -- --json)", parsed.error);
  return parsed.data;
}

function loadRunDir(dir: string): ReportSource {
  const csvPath = join(dir, "results.csv");
  const sweepPath = join(dir, "sweep.csv");
  const hasSweep = existsSync(sweepPath);
  const scaleLadder = readScaleLadder(dir);
  if (!existsSync(csvPath) && !hasSweep && scaleLadder === undefined) {
    throw new ReportLoadError(
      `${dir}: no results.csv, sweep.csv or ${SCALE_LADDER_FILE} in this directory (is it a results/<timestamp>/ run directory?)`,
    );
  }
  const sweep = hasSweep ? readSweep(sweepPath) : undefined;
  const sections = loadRunSections(dir);
  const rows = existsSync(csvPath) ? readCsv(csvPath) : [];
  const meta = readRunMeta(dir);
  const topology = readRunTopology(dir);
  return {
    ...(sweep ? { sweep } : {}),
    ...(scaleLadder ? { scaleLadder } : {}),
    ...presentSections(sections),
    label: basename(dir),
    kind: meta?.stack ? "stack" : meta?.target ? "endpoint" : "local-run",
    path: dir,
    rows,
    topology,
    workload: runWorkloadView(meta, rows, sweep),
    versions: meta
      ? [
          ["Valkey server", meta.versions.server],
          ["Benchmark client", meta.versions.client],
          ["valkey-cli / redis-cli", meta.versions.cli],
        ]
      : rows.length === 0 && sweep === undefined && scaleLadder !== undefined
        ? [["Valkey server", scaleLadder.valkeyVersion]]
        : versionsFromRows(rows.length > 0 ? rows : (sweep ?? [])),
    machine: meta?.machine ?? scaleLadder?.machine ?? null,
    environment: runEnvironment(meta),
    describe: meta?.topologies ?? [
      ...topology.map((t) => `${t.mode}: ${t.shards.length} primary(ies), ${t.nodeCount} nodes`),
      ...(sweep
        ? [
            `shard sweep: ${[...new Set(sweep.map((r) => r.shards))].join(", ")} primaries × (1 + ${sweep[0]?.replicas_per_primary ?? "?"}), one cluster per step`,
          ]
        : []),
      ...(scaleLadder
        ? [
            `scale ladder: ${scaleLadder.rungs.map((r) => r.primaries).join(", ")} primaries × (1 + ${scaleLadder.replicasPerPrimary}), cluster-node-timeout ${scaleLadder.nodeTimeoutMs} ms`,
          ]
        : []),
    ],
  };
}

/** Every optional section of the run directory; a broken one is a ReportLoadError. */
function loadRunSections(dir: string): RunSections {
  try {
    return {
      drills: loadDrills(dir),
      soak: loadSoaks(dir),
      loops: loadLoops(dir),
      openLoop: loadOpenLoops(dir),
      transfer: loadTransfers(dir),
      sloSweeps: loadSloSweeps(dir),
    };
  } catch (err) {
    throw new ReportLoadError((err as Error).message);
  }
}

/** Only the sections the run has, in the report's order. */
function presentSections(s: RunSections): Partial<RunSections> {
  const { drills, soak, loops, openLoop, transfer, sloSweeps } = s;
  return {
    ...(drills ? { drills } : {}),
    ...(soak ? { soak } : {}),
    ...(loops ? { loops } : {}),
    ...(openLoop ? { openLoop } : {}),
    ...(transfer ? { transfer } : {}),
    ...(sloSweeps ? { sloSweeps } : {}),
  };
}

/** The run's run.json, when it has one; a malformed one is a ReportLoadError naming the fields. */
function readRunMeta(dir: string): RunMeta | undefined {
  const metaPath = join(dir, RUN_META_FILE);
  if (!existsSync(metaPath)) return undefined;
  const parsed = runMetaSchema.safeParse(readJson(metaPath));
  if (!parsed.success) throw describeIssues(metaPath, "a run.json this version writes", parsed.error);
  return parsed.data;
}

/** Each mode's topology from raw/verify-<mode>.json (the report after the run, else before), when present. */
function readRunTopology(dir: string): TopologyView[] {
  const topology: TopologyView[] = [];
  for (const mode of ["replication", "cluster"] as const) {
    const path = join(dir, "raw", `verify-${mode}.json`);
    if (!existsSync(path)) continue;
    const parsed = verifyFileSchema.safeParse(readJson(path));
    if (!parsed.success) throw describeIssues(path, "a verifier report ({ before, after })", parsed.error);
    const r = parsed.data.after ?? parsed.data.before;
    if (r) topology.push(viewOf(mode, r));
  }
  return topology;
}

/** The workload from run.json; without one, what the rows (or a sweep's rows) say of it. */
function runWorkloadView(meta: RunMeta | undefined, rows: ResultRow[], sweep: SweepRow[] | undefined): WorkloadView {
  const w = meta?.workload;
  if (w)
    return {
      name: w.name,
      tests: w.tests.map((t) => t.toUpperCase()),
      clients: w.clients,
      pipeline: w.pipeline,
      dataSize: w.dataSize,
      threads: w.threads,
      keyspaceLength: w.keyspaceLength,
      requests: w.requests,
      minDurationSeconds: w.minDurationSeconds,
    };
  return sweep && rows.length === 0
    ? {
        ...workloadFromRows([]),
        name: [...new Set(sweep.map((r) => r.workload))].join(", "),
        tests: [...new Set(sweep.map((r) => r.test))],
      }
    : workloadFromRows(rows);
}

/** Where the run's benchmark ran: a stack's Job, this machine against an endpoint, or everything on this machine. */
function runEnvironment(meta: RunMeta | undefined): string {
  return meta?.stack
    ? `${meta.stack.platform} stack "${meta.stack.name}": one cluster-mode deployment scaled up step by step over zones ${meta.stack.zones.join(", ")}; the benchmark ran as the stack's Job inside the cluster (this machine only drove Pulumi)`
    : meta?.target
      ? `the benchmark client on this machine against the endpoint ${meta.target} (over the network path between them)`
      : "this machine: every server and the benchmark client on 127.0.0.1, zones are names assigned round-robin";
}

import { stackReportReadSchema } from "./stack-report-schema.js";

export { stackReportReadSchema, type StackReportInput } from "./stack-report-schema.js";

/** "one client pod (a Job)", or "N client pods (an Indexed Job)" as the combined rows' notes record it. */
function clientPodsText(rows: readonly ResultRow[]): string {
  const n = Math.max(1, ...rows.map((r) => Number(/^(\d+) client pods:/.exec(r.notes)?.[1] ?? 1)));
  return n === 1 ? "one client pod (a Job)" : `${n} client pods (an Indexed Job; rps summed, worst pod's percentiles)`;
}

function loadStackReport(path: string, json: unknown): ReportSource {
  // `pulumi stack output --json` (all outputs) wraps the report under its output name.
  const candidate =
    typeof json === "object" && json !== null && !("schemaVersion" in json) && "report" in json ? json.report : json;
  const parsed = stackReportReadSchema.safeParse(candidate);
  if (!parsed.success) {
    throw describeIssues(path, "a stack report (`pulumi stack output report --json`, schemaVersion 1)", parsed.error);
  }
  const r = parsed.data;
  if (r.benchmark === null || r.benchmark.rows.length === 0) {
    throw new ReportLoadError(
      `${path}: benchmark: the stack report has no benchmark rows (was benchmark.enabled false?)`,
    );
  }
  const other = r.benchmark.rows.findIndex((row) => row.mode !== r.mode);
  if (other >= 0)
    throw new ReportLoadError(
      `${path}: benchmark.rows.${other}.mode is ${r.benchmark.rows[other]?.mode}, but the stack's mode is ${r.mode}`,
    );
  const topology: TopologyView[] = [];
  if (r.topology !== null) {
    const shards: TopologyShard[] = r.topology.primaries.map((p) => ({
      address: p.address,
      zone: p.zone,
      slotRanges: p.slotRanges,
      keys: p.keys,
      replicas: p.replicas.map((x) => ({ ...x, linkUp: null })),
    }));
    topology.push({
      mode: r.mode,
      ok: r.topology.ok,
      failures: r.topology.failures,
      shards,
      primariesPerZone: r.topology.primariesPerZone,
      zones: zonesOf(shards),
      nodeCount: shards.reduce((n, s) => n + 1 + s.replicas.length, 0),
      notes: [],
    });
  }
  const v = r.versions;
  const versions: [string, string][] = [["Valkey image", v.valkeyImage]];
  if (v.server) versions.push(["Valkey server", v.server]);
  if (v.client) versions.push(["Benchmark client", v.client]);
  if (v.kubernetesVersion) versions.push(["Kubernetes (EKS)", v.kubernetesVersion]);
  if (v.karpenterChart) versions.push(["Karpenter chart", v.karpenterChart]);
  return {
    label: `stack ${r.stack}`,
    kind: "stack",
    path,
    rows: r.benchmark.rows,
    topology,
    workload: workloadFromRows(r.benchmark.rows),
    versions,
    machine: null,
    environment: `${r.platform} stack "${r.stack}": ${r.mode} mode, ${r.pods} Valkey pods over zones ${r.zones.join(", ")}; benchmark from ${clientPodsText(r.benchmark.rows)} inside the cluster`,
    describe: [`${r.mode}: ${r.pods} pods`],
    ...(r.cost ? { cost: r.cost } : {}),
    ...(r.benchmark.transfer ? { transfer: [r.benchmark.transfer] } : {}),
    ...mixParts(r.mode, r.benchmark.mix ?? undefined),
    // The deployed drills carry no per-write timeline (the step keeps only the figures).
    ...(r.drills === null || r.drills === undefined || r.drills.length === 0
      ? {}
      : { drills: r.drills.map((d) => ({ ...d, timeline: [] })) }),
  };
}

/**
 * A deployed mix's extras as the report's fields (soak, loops, open-loop series, latency-target sweep), each for the
 * stack's one mode.
 */
function mixParts(
  mode: ResultMode,
  mix: MixJobExtras | undefined,
): Pick<ReportSource, "soak" | "loops" | "openLoop" | "sloSweeps"> {
  if (mix === undefined) return {};
  return {
    ...(mix.soak === undefined ? {} : { soak: [{ ...mix.soak, mode }] }),
    ...(mix.loops === undefined ? {} : { loops: [{ ...mix.loops, mode }] }),
    ...(mix.openLoop === undefined ? {} : { openLoop: [{ ...mix.openLoop, mode }] }),
    ...(mix.sloSweep === undefined ? {} : { sloSweeps: [{ ...mix.sloSweep, mode }] }),
  };
}

/** Loads one `--from` path: a results directory, a stack report JSON file, or a results.csv file. */
export function loadSource(path: string): ReportSource {
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch (err) {
    throw new ReportLoadError(
      `${path}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file or directory" : (err as Error).message}`,
    );
  }
  if (isDir) return loadRunDir(path);
  const text = readText(path);
  if (/^\s*[[{]/.test(text)) return loadStackReport(path, readJson(path));
  const rows = readCsv(path);
  const parent = basename(dirname(path));
  return {
    label: RESULT_TIMESTAMP_PATTERN.test(parent) ? parent : basename(path),
    kind: "results-csv",
    path,
    rows,
    topology: [],
    workload: workloadFromRows(rows),
    versions: versionsFromRows(rows),
    machine: null,
    environment: "not recorded (a bare results.csv)",
    describe: [],
  };
}

/** Loads every path in order; labels are made unique ("x", "x (2)"). */
export function loadSources(paths: readonly string[]): ReportSource[] {
  if (paths.length === 0)
    throw new ReportLoadError("no source given: pass --from <results dir | stack report .json | results.csv>");
  const sources = paths.map(loadSource);
  const seen = new Map<string, number>();
  for (const s of sources) {
    const n = (seen.get(s.label) ?? 0) + 1;
    seen.set(s.label, n);
    if (n > 1) s.label = `${s.label} (${n})`;
  }
  return sources;
}
