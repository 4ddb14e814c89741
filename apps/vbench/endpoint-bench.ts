/**
 * Benchmarks an endpoint you already have (your own Valkey, a managed service reachable from
 * here) with the same pipeline as the local comparison: verify the topology (recorded, not a
 * gate: the verifier has no zone map for a foreign endpoint), run the workload with re-runs,
 * verify again, and write `<outputDir>/<timestamp>/{results.csv,summary.md,run.json,report.html,raw/}`.
 * The password reaches the benchmark client only through its environment and the verifier only
 * through AUTH (see benchmark-runner.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { resolveBinaries, type ResolvedTool, type ValkeyBinaries } from "../../benchmarks/run/binaries.js";
import { runTimestamp } from "./local-comparison.js";
import { writeReport } from "../../benchmarks/report/render.js";
import { buildRunMeta, RUN_META_FILE } from "../../benchmarks/report/run-meta.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { parseInfo } from "../../core/topology/info.js";
import { formatTopologyReport } from "../../core/verify/format-report.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import { runsOf, type Workload } from "../../vocabulary/workload.js";
import { runWorkload, type RunProgressEvent } from "../../benchmarks/run/benchmark-runner.js";
import { discoverMembers, writeMixFiles, type MixResult } from "../../benchmarks/run/mix-runner.js";
import { runMixComparingLoops } from "../../benchmarks/run/loop-comparison.js";
import { renderSoakMarkdown } from "../../benchmarks/run/soak-sampler.js";
import type { SoakEvent } from "../../benchmarks/run/soak-sample.js";
import {
  readScaleOutPairs,
  renderReadScaleOutMarkdown,
  renderReadScaleOutTable,
} from "../../benchmarks/run/read-scale-out.js";
import { runReplicaReads } from "../../benchmarks/run/replica-reads.js";
import { renderComparisonTable, renderSummaryMarkdown } from "../../benchmarks/run/comparison.js";
import type { ResultMode, ResultRow } from "../../benchmarks/run/result-row.js";
import { renderResultsCsv } from "../../benchmarks/run/results-csv.js";
import { RepeatedRuns, writeRunsFile } from "../../benchmarks/run/repeated-runs.js";
import { runSloSweeps } from "../../benchmarks/run/slo-sweep.js";
import type { SloSweepRecord } from "../../benchmarks/run/slo-figure.js";
import { renderSloMarkdown, sloSideRows, writeSloFiles } from "../../benchmarks/run/slo-table.js";

export interface EndpointBenchOptions {
  target: NodeEndpoint;
  /** Cluster mode (`--cluster`: the client follows the slot map); otherwise a primary. */
  cluster: boolean;
  workload: Workload;
  password?: string;
  outputDir: string;
  timestamp?: string;
  onProgress?: (e: RunProgressEvent) => void;
  /** Benchmark processes per test, started together (runWorkload clientProcesses). @default 1 */
  clientProcesses?: number;
  /**
   * Replication with `workload.reads` "replicas": where the reads go (replicas, or a read
   * endpoint). @default the replicas the target lists in INFO replication
   */
  readTargets?: readonly NodeEndpoint[];
}

export interface EndpointBenchResult {
  runDir: string;
  rows: ResultRow[];
  table: string;
  reportPath: string;
  /** The verifier's view after the run; `ok` false is reported, not fatal. */
  topology: TopologyReport;
  /**
   * A mix: p99.9 per row (ms), open loop the rate and the per-second series, soak its sample count and events (the
   * files are in raw/).
   */
  mix?: {
    p999_ms: Record<string, number>;
    openLoop?: MixResult["openLoop"];
    loops?: MixResult["loops"];
    soak?: { samples: number; events: SoakEvent[] };
  };
  /** With `workload.slo`: the sweep (raw/slo-sweep-<mode>.json). */
  sloSweep?: SloSweepRecord;
}

/** `valkey_version` (or `redis_version` for a Redis-compatible server) from INFO server. */
async function serverVersion(target: NodeEndpoint, password: string | undefined): Promise<string> {
  const client = await new DirectConnector({ password }).connect(target);
  try {
    const info = parseInfo(await client.info("server"));
    return info.get("valkey_version") ?? info.get("redis_version") ?? "unknown";
  } finally {
    client.disconnect();
  }
}

/** The endpoint cannot be benchmarked as asked; `code` is the CLI's error code for it. */
export class EndpointNotReady extends Error {
  constructor(
    message: string,
    readonly code: "CLUSTER_MODE_DISABLED" | "CLUSTER_NOT_READY" | "NO_REPLICAS",
  ) {
    super(message);
    this.name = "EndpointNotReady";
  }
}

/**
 * `--cluster` needs a cluster that serves every slot: `valkey-benchmark --cluster` against a node
 * with cluster mode off, or a cluster with unassigned slots / `cluster_state:fail`, does not fail
 * but waits (seen hanging for minutes), so this fails fast instead, naming what the verifier saw.
 */
function checkClusterReady(target: NodeEndpoint, before: TopologyReport): void {
  const at = endpointKey(target);
  const off = before.failures.find((f) => f.code === "CLUSTER_MODE_DISABLED");
  if (off !== undefined)
    throw new EndpointNotReady(
      `--cluster: ${at} has cluster mode off (cluster-enabled no); drop --cluster to benchmark it as a primary`,
      "CLUSTER_MODE_DISABLED",
    );
  const blocking = before.failures.filter(
    (f) => f.code === "CLUSTER_STATE_NOT_OK" || f.code === "SLOTS_UNASSIGNED" || f.code === "SLOTS_NOT_OK",
  );
  if (blocking.length > 0) {
    throw new EndpointNotReady(
      `--cluster: the cluster at ${at} is not serving every slot, so the benchmark would wait for it: ${blocking.map((f) => `${f.code}: ${f.message}`).join("; ")}`,
      "CLUSTER_NOT_READY",
    );
  }
}

/** What the steps of one endpoint benchmark share: its options, directories, binaries, and the last mix run. */
interface EndpointRun {
  o: EndpointBenchOptions;
  mode: ResultMode;
  timestamp: string;
  runDir: string;
  rawDir: string;
  binaries: ValkeyBinaries;
  /** The server's version, from INFO server. */
  version: string;
  /** A mix: the last run's result. */
  mixed?: MixResult;
}

export async function runEndpointBench(o: EndpointBenchOptions): Promise<EndpointBenchResult> {
  const run = await prepareEndpointRun(o);
  const connector = new DirectConnector({ password: o.password });
  const verify = () => verifyTopology({ mode: run.mode, seeds: [o.target], connector });
  const before = await verify();
  if (o.cluster) checkClusterReady(o.target, before);
  mkdirSync(run.rawDir, { recursive: true });
  const runs = await measureRuns(run);
  const rows = runs.rows();
  writeRunsFile(run.rawDir, runs);
  const sweeps = o.workload.slo === undefined ? [] : await sweep(o, run.mode, run.version, run.timestamp);
  writeSloFiles(run.rawDir, sweeps);
  const after = await verify();
  await connector.close();
  return writeEndpointResults(run, rows, sweeps, { before, after });
}

/** The run's mode, timestamp and directories, the binaries, and the server's version (nothing written yet). */
async function prepareEndpointRun(o: EndpointBenchOptions): Promise<EndpointRun> {
  const mode: ResultMode = o.cluster ? "cluster" : "replication";
  const timestamp = o.timestamp ?? runTimestamp();
  const runDir = resolve(o.outputDir, timestamp);
  const rawDir = join(runDir, "raw");
  const binaries = resolveBinaries();
  const version = await serverVersion(o.target, o.password);
  return { o, mode, timestamp, runDir, rawDir, binaries, version };
}

/** `repeat` N: the whole workload N times (set get incr set get incr ...), each run's raw files in raw/run-<k>/. */
async function measureRuns(run: EndpointRun): Promise<RepeatedRuns> {
  const { o } = run;
  const runs = new RepeatedRuns(runsOf(o.workload));
  for (let k = 1; k <= runs.count; k++) {
    const raw = runs.count === 1 ? run.rawDir : join(run.rawDir, `run-${k}`);
    const step = `benchmark ${endpointKey(o.target)} (${run.mode})`;
    await runs.measure(k, step, () => measureOnce(run, runs, k, step, raw));
  }
  return runs;
}

/** Run k: the mix or valkey-benchmark's tests on the primary path, then the replica reads when asked for. */
async function measureOnce(
  run: EndpointRun,
  runs: RepeatedRuns,
  k: number,
  step: string,
  raw: string,
): Promise<ResultRow[]> {
  const { o, mode, timestamp, version, binaries } = run;
  // The primary paths first; `reads: replicas` adds the reads on the replicas after them.
  const workload: Workload = { ...o.workload, reads: "primary" };
  if (workload.mix !== undefined) {
    const target = { ...o.target, cluster: o.cluster };
    run.mixed = await runMixComparingLoops({
      workload,
      target,
      mode,
      serverVersion: version,
      password: o.password,
      timestamp,
    });
    writeMixFiles(run.rawDir, mode, run.mixed);
    if (runs.count > 1) writeMixFiles(raw, mode, run.mixed);
  }
  const rows =
    run.mixed?.rows ??
    (await runWorkload({
      workload,
      target: { host: o.target.host, port: o.target.port, cluster: o.cluster },
      mode,
      client: binaries.benchmark,
      serverVersion: version,
      password: o.password,
      timestamp,
      rawDir: raw,
      onProgress: o.onProgress,
      clientProcesses: o.clientProcesses ?? 1,
      startRequests: runs.previousRequests(k, step),
    }));
  return o.workload.reads === "replicas"
    ? [...rows, ...(await replicaReads(o, mode, version, timestamp, raw, binaries.benchmark))]
    : rows;
}

/** results.csv, raw/verify-<mode>.json, summary.md, run.json and report.html; the result the CLI prints. */
async function writeEndpointResults(
  run: EndpointRun,
  rows: ResultRow[],
  sweeps: SloSweepRecord[],
  verified: { before: TopologyReport; after: TopologyReport },
): Promise<EndpointBenchResult> {
  const { o, mode, runDir, rawDir, binaries } = run;
  const { after } = verified;
  const versions = {
    server: run.version,
    client: `${binaries.benchmark.flavor}-benchmark ${binaries.benchmark.version}`,
    cli: binaries.cli.version,
  };
  const describe = `${mode === "cluster" ? "cluster" : "primary"} endpoint ${endpointKey(o.target)}: ${after.shards.length} primar${after.shards.length === 1 ? "y" : "ies"}, ${after.nodeCount} nodes`;
  writeFileSync(join(runDir, "results.csv"), renderResultsCsv(rows));
  writeFileSync(join(rawDir, `verify-${mode}.json`), `${JSON.stringify(verified, null, 2)}\n`);
  const readPairs = readScaleOutPairs(rows);
  writeFileSync(
    join(runDir, "summary.md"),
    [
      renderSummaryMarkdown({
        rows,
        title: `Endpoint benchmark: ${endpointKey(o.target)} (${mode})`,
        topology: [`### ${describe}`, "", "```", formatTopologyReport(after), "```", ""],
        versions,
        extraSideRows: sloSideRows(sweeps),
      }),
      ...renderReadScaleOutMarkdown(readPairs),
      ...(run.mixed?.soak === undefined ? [] : renderSoakMarkdown([{ label: mode, record: run.mixed.soak.record }])),
      ...renderSloMarkdown(sweeps),
    ].join("\n"),
  );
  const meta = { ...buildRunMeta(o.workload, versions, [describe]), target: endpointKey(o.target) };
  writeFileSync(join(runDir, RUN_META_FILE), `${JSON.stringify(meta, null, 2)}\n`);
  const reportPath = await writeReport([runDir], runDir);
  const table = [renderComparisonTable(rows, sloSideRows(sweeps, true)), renderReadScaleOutTable(readPairs)]
    .filter((x) => x !== "")
    .join("\n\n");
  return {
    runDir,
    rows,
    table,
    reportPath,
    topology: after,
    ...mixFigures(run.mixed),
    ...(sweeps[0] === undefined ? {} : { sloSweep: sweeps[0] }),
  };
}

/** A mix's figures for the result: p99.9 per row, the open loop, the loops compared, the soak's samples and events. */
function mixFigures(mixed: MixResult | undefined): Pick<EndpointBenchResult, "mix"> {
  if (mixed === undefined) return {};
  const soakFigures =
    mixed.soak === undefined
      ? {}
      : { soak: { samples: mixed.soak.record.samples.length, events: mixed.soak.record.events } };
  const openLoop = mixed.openLoop === undefined ? {} : { openLoop: mixed.openLoop };
  const loops = mixed.loops === undefined ? {} : { loops: mixed.loops };
  return { mix: { p999_ms: mixed.latency.p999_ms, ...openLoop, ...loops, ...soakFigures } };
}

/**
 * `--reads replicas`: the reads on the replicas (replica-reads.ts). Replication: to `readTargets`
 * when given (a read endpoint, or replicas reachable at other addresses), else to the replicas the
 * target lists in INFO replication; every listed replica's commandstats count, so each must be
 * reachable from here. Cluster: READONLY connections to the replicas CLUSTER NODES lists.
 */
async function replicaReads(
  o: EndpointBenchOptions,
  mode: ResultMode,
  version: string,
  timestamp: string,
  rawDir: string,
  client: ResolvedTool,
): Promise<ResultRow[]> {
  const members = await discoverMembers({ ...o.target, cluster: o.cluster }, o.password);
  const given = o.readTargets !== undefined && o.readTargets.length > 0;
  if (!o.cluster && !given && members.length < 2)
    throw new EndpointNotReady(
      `--reads replicas: ${endpointKey(o.target)} lists no replica in INFO replication; give --read-target`,
      "NO_REPLICAS",
    );
  const r = await runReplicaReads({
    workload: o.workload,
    mode,
    path: o.cluster ? "clusterReplicas" : given ? "readTargets" : "replicasDirect",
    target: o.target,
    ...(o.cluster ? {} : { readTargets: given ? o.readTargets : members.slice(1) }),
    members,
    client,
    serverVersion: version,
    password: o.password,
    timestamp,
    rawDir,
    clientProcesses: o.clientProcesses ?? 1,
  });
  return [...r.baseline, ...r.rows];
}

/**
 * `--slo`: the latency-target sweeps of the endpoint (slo-sweep.ts), on the primary path (the target, or the cluster
 * through it).
 */
function sweep(
  o: EndpointBenchOptions,
  mode: ResultMode,
  version: string,
  timestamp: string,
): Promise<SloSweepRecord[]> {
  const via = `${o.cluster ? "the cluster, seed" : "the endpoint"} ${endpointKey(o.target)}`;
  const options = {
    workload: o.workload,
    target: { ...o.target, cluster: o.cluster },
    mode,
    serverVersion: version,
    password: o.password,
    timestamp,
  };
  return runSloSweeps([{ options, via }], runsOf(o.workload));
}
