/**
 * The main job on the embedded default: both of the seed's topologies started on this machine
 * with real valkey-server processes, verified, benchmarked with the same workload, and written
 * out as `results/<timestamp>/{results.csv,summary.md,run.json,report.html,raw/}`.
 *
 * Steps: find binaries → start replication (1 + N members, 3 Sentinels, the HAProxy write
 * endpoint: the Sentinel topology the stack deploys) and cluster (P × (1 + M), AZ-aware
 * bootstrap) → verify both (must pass; replication through the Sentinels) → benchmark
 * replication through the write endpoint (the path an in-cluster client without Sentinel
 * support takes) AND direct to the primary (the seed's path, so its numbers stay comparable),
 * then cluster → verify again (per-primary key counts after the run) → write results. Each
 * replication row says its path in `notes` (REPLICATION_PATH_NOTES). With `reads: "replicas"`
 * the reads are measured on the replicas too, after each mode's primary rows
 * (read-scale-out-steps.ts), and a "read scale-out" table pairs them. With `workload.repeat` N
 * the measuring steps run N times, interleaved (run 1 is every one of them, then run 2, ...:
 * run/repeated-runs.ts); each row is the median of its runs with their min–max, every run's raw
 * output is kept in raw/run-<k>/ and its rows in raw/runs.json. Every server is stopped at the
 * end, on failure, and on Ctrl-C (see util/process-reaper.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { resolveBinaries, type ValkeyBinaries } from "../../benchmarks/run/binaries.js";
import { renderSoakMarkdown } from "../../benchmarks/run/soak-sampler.js";
import type { SoakRecord } from "../../benchmarks/run/soak-sample.js";
import { writeReport } from "../../benchmarks/report/render.js";
import { writeRunVerdict } from "../../benchmarks/report/verdict-run.js";
import { buildRunMeta, RUN_META_FILE } from "../../benchmarks/report/run-meta.js";
import { renderComparisonTable, renderSummaryMarkdown } from "../../benchmarks/run/comparison.js";
import { formatResultTimestamp, type ResultRow } from "../../benchmarks/run/result-row.js";
import { renderResultsCsv } from "../../benchmarks/run/results-csv.js";
import { renderDrillMarkdown } from "../../core/drill/drill-table.js";
import type { Fault } from "../../vocabulary/faults.js";
import {
  DRILL_MODES,
  renderLocalDrillTable,
  runOneLocalDrill,
  writeDrillFiles,
} from "../../harness/drill/local-drills.js";
import { isSkipped, type DrillResult } from "../../core/drill/drill-result.js";
import {
  REPLICATION_PATH_NOTES,
  renderReplicationPathMarkdown,
  renderReplicationPathTable,
  replicationPathPairs,
} from "../../benchmarks/run/replication-paths.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { formatTopologyReport } from "../../core/verify/format-report.js";
import type { TopologyReport, VerifyExpectations } from "../../core/verify/verify-types.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import { runsOf, type Workload } from "../../vocabulary/workload.js";
import { benchmarkStep, type BenchmarkStepContext } from "../../harness/local/benchmark-step.js";
import { RepeatedRuns, writeRunsFile } from "../../benchmarks/run/repeated-runs.js";
import { startLocalCluster } from "../../harness/local/local-cluster.js";
import { silentProgress, type ProgressRunner, type ProgressStep } from "../../core/util/progress.js";
import {
  clusterReadSteps,
  replicationReadSteps,
  type ReadScaleOutContext,
} from "../../harness/local/read-scale-out-steps.js";
import {
  readScaleOutPairs,
  renderReadScaleOutMarkdown,
  renderReadScaleOutTable,
} from "../../benchmarks/run/read-scale-out.js";
import { SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { renderSloMarkdown, sloSideRows, sloSweepSteps, type SloSweepRecord } from "../../harness/local/slo-steps.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { TransferLedger, type LocalTransferOptions } from "../../harness/local/transfer-ledger.js";

export type LocalMode = "replication" | "cluster";

export interface LocalComparisonOptions extends LocalTransferOptions {
  workload: Workload;
  /** Replicas of the replication-mode primary. @default 3 */
  replicas: number;
  /** Cluster-mode primaries. @default 3 */
  primaries: number;
  /** Cluster-mode replicas per primary. @default 1 */
  replicasPerPrimary: number;
  /** Zone names assigned round-robin to the nodes (the local stand-in for AZs). */
  zones: readonly string[];
  /** Results root; the run writes `<outputDir>/<timestamp>/`. */
  outputDir: string;
  /** Server `io-threads`. @default 1 */
  ioThreads: number;
  /** Servers require this password; the benchmark client must then read it from the environment. */
  password?: string;
  /** Failure drills appended after the comparison, in both modes (`--drills primary,zone`). */
  drills?: readonly Fault[];
  /** The drills watched by live metrics (`--metrics`): each row records the alerts that fired. @default false */
  drillMetrics?: boolean;
  /** Benchmark processes per test, started together (runWorkload clientProcesses). @default 1 */
  clientProcesses?: number;
  /** Run timestamp, `YYYYMMDD-HHMMSS` (UTC). @default now */
  timestamp?: string;
}

export interface LocalComparisonResult {
  runDir: string;
  rows: ResultRow[];
  /** Topology reports before the benchmark (the gate) and after it (key counts). */
  reports: Record<LocalMode, { before: TopologyReport; after: TopologyReport }>;
  versions: { server: string; client: string; cli: string };
  /** The side-by-side table printed at the end. */
  table: string;
  /** `<runDir>/report.html`. */
  reportPath: string;
  /** One per mode × fault, when drills were asked for. */
  drills: DrillResult[];
  /** One per mode, with `workload.slo` (raw/slo-sweep-<mode>.json). */
  sloSweeps: SloSweepRecord[];
}

export { silentProgress, type ProgressRunner, type ProgressStep };

/** `YYYYMMDD-HHMMSS` in UTC, the seed's results.csv timestamp format (one home: result-row.ts). */
export { formatResultTimestamp as runTimestamp };

/** A topology that failed its check: the CLI prints the report and exits 1. */
export class TopologyCheckError extends Error {
  constructor(
    readonly mode: LocalMode,
    readonly report: TopologyReport,
  ) {
    super(
      `${mode} topology failed verification (${report.failures.map((f) => f.code).join(", ")}):\n${formatTopologyReport(report)}`,
    );
    this.name = "TopologyCheckError";
  }
}

export { REPLICATION_PATH_NOTES };

interface StartedTopology {
  mode: LocalMode;
  seed: NodeEndpoint;
  /** Replication: the HAProxy write endpoint and the Sentinels the verifier asks. */
  writeEndpoint?: NodeEndpoint;
  sentinels?: { endpoints: NodeEndpoint[]; masterName: string };
  zoneMap: Record<string, string>;
  /** Every server of the topology (a mix reads their INFO commandstats). */
  members?: NodeEndpoint[];
  expect: VerifyExpectations;
  describe: string;
}

type TopologyReports = Record<LocalMode, { before: TopologyReport; after: TopologyReport }>;

/** The state one local comparison's steps share: its options, servers, and what it has measured so far. */
interface ComparisonRun {
  o: LocalComparisonOptions;
  timestamp: string;
  runDir: string;
  rawDir: string;
  fleet: LocalFleet;
  server: { ioThreads: number };
  connector: DirectConnector;
  topologies: Partial<Record<LocalMode, StartedTopology>>;
  sentinelTopology?: SentinelTopology;
  reports: Partial<Record<LocalMode, { before?: TopologyReport; after?: TopologyReport }>>;
  runs: RepeatedRuns;
  /** Run k's raw files (every run's kept): raw/run-<k>/ when there are several. */
  runRaw: (k: number, sub?: string) => string;
  soaks: { label: string; record: SoakRecord }[];
  drills: DrillResult[];
  skipped: string[];
  sweeps: SloSweepRecord[];
  binaries?: ValkeyBinaries;
  transfer: TransferLedger;
}

export async function runLocalComparison(
  o: LocalComparisonOptions,
  progress: ProgressRunner = silentProgress,
): Promise<LocalComparisonResult> {
  const run = newComparisonRun(o);
  try {
    mkdirSync(run.rawDir, { recursive: true });
    await progress(comparisonSteps(run));
  } catch (err) {
    keepPartialResults(run, err);
    throw err;
  } finally {
    await stopTopologies(run);
  }
  return writeComparison(run);
}

/** A fresh run: its directories under `o.outputDir`, nothing started or measured yet. */
function newComparisonRun(o: LocalComparisonOptions): ComparisonRun {
  const timestamp = o.timestamp ?? formatResultTimestamp();
  const runDir = resolve(o.outputDir, timestamp);
  const rawDir = join(runDir, "raw");
  const runs = new RepeatedRuns(runsOf(o.workload));
  return {
    o,
    timestamp,
    runDir,
    rawDir,
    fleet: new LocalFleet(),
    server: { ioThreads: o.ioThreads },
    connector: new DirectConnector({ password: o.password }),
    topologies: {},
    reports: {},
    runs,
    runRaw: (k: number, sub = ""): string => join(rawDir, runs.count === 1 ? "" : `run-${k}`, sub),
    soaks: [],
    drills: [],
    skipped: [],
    sweeps: [],
    transfer: new TransferLedger({ zones: o.zones, placement: o.clientZones ?? "spread", password: o.password }),
  };
}

/** Every step of the run, in order: find, start, verify, measure (each run), sweep, verify again, stop, drill. */
function comparisonSteps(run: ComparisonRun): ProgressStep[] {
  return [
    findBinariesStep(run),
    startReplicationStep(run),
    startClusterStep(run),
    ...(["replication", "cluster"] as const).map((mode) => verifyBeforeStep(run, mode)),
    ...measuringSteps(run),
    ...sloSweepSteps({
      ...run.o,
      timestamp: run.timestamp,
      rawDir: run.rawDir,
      records: run.sweeps,
      binaries: () => run.binaries,
      started: () => [startedTopology(run, "replication"), startedTopology(run, "cluster")],
    }),
    verifyAfterStep(run),
    {
      title: "Stop the benchmarked topologies",
      run: async () => {
        await stopTopologies(run);
      },
    },
    ...drillSteps(run),
  ];
}

/** Stops every server of both topologies (the fleet's cluster, the Sentinel topology). */
async function stopTopologies(run: ComparisonRun): Promise<void> {
  await Promise.all([run.fleet.stopAll(), run.sentinelTopology?.stopAll()]);
}

/** Nothing measured is lost: rows finished before the failure are still written, and `err` says where. */
function keepPartialResults(run: ComparisonRun, err: unknown): void {
  if (run.drills.length > 0) writeDrillFiles(run.runDir, run.drills);
  const rows = run.runs.rows();
  if (rows.length > 0) {
    writeRunsFile(run.rawDir, run.runs);
    writeFileSync(join(run.runDir, "results.csv"), renderResultsCsv(rows));
    (err as Error).message +=
      ` (the ${rows.length} result row(s) measured before the failure are in ${join(run.runDir, "results.csv")})`;
  }
}

/** Verifies a started topology (replication through its Sentinels); throws TopologyCheckError unless it passes. */
async function verifyStarted(run: ComparisonRun, t: StartedTopology): Promise<TopologyReport> {
  const { connector } = run;
  const report = await verifyTopology({
    mode: t.mode,
    seeds: t.sentinels === undefined ? [t.seed] : [],
    connector,
    zones: new StaticZoneSource(t.zoneMap),
    expect: t.expect,
    sentinel: t.sentinels === undefined ? undefined : { ...t.sentinels, connector },
  });
  if (!report.ok) throw new TopologyCheckError(t.mode, report);
  return report;
}

/** The topology `mode` as started; throws if its start step has not run. */
function startedTopology(run: ComparisonRun, mode: LocalMode): StartedTopology {
  const t = run.topologies[mode];
  if (t === undefined) throw new Error(`${mode} topology was not started`);
  return t;
}

function findBinariesStep(run: ComparisonRun): ProgressStep {
  return {
    title: "Find valkey-server and the benchmark client",
    run: (update) => {
      const binaries = resolveBinaries();
      run.binaries = binaries;
      update(
        `server ${binaries.server.path} ${binaries.server.version}; client ${binaries.benchmark.path} ${binaries.benchmark.version}`,
      );
      return Promise.resolve();
    },
  };
}

/** Starts the Sentinel topology (members, 3 Sentinels, HAProxy) and records it as the replication topology. */
function startReplicationStep(run: ComparisonRun): ProgressStep {
  const { o } = run;
  return {
    title: `Start replication: 1 primary + ${o.replicas} replicas, 3 Sentinels, HAProxy write endpoint`,
    run: async (update) => {
      run.sentinelTopology = await SentinelTopology.start({
        replicas: o.replicas,
        zones: o.zones,
        password: o.password,
        server: run.server,
      });
      const t = run.sentinelTopology;
      const primary = t.member(await t.primaryFromSentinels());
      const write = t.proxy?.write as NodeEndpoint;
      run.topologies.replication = {
        mode: "replication",
        seed: primary,
        writeEndpoint: write,
        sentinels: { endpoints: t.sentinelEndpoints, masterName: t.masterName },
        zoneMap: t.zoneMap,
        expect: { replicas: o.replicas },
        describe:
          `replication: 1 primary + ${o.replicas} replicas, ${t.sentinels.length} Sentinels (quorum 2, zones round-robin), ` +
          `HAProxy write endpoint ${write.host}:${write.port}; benchmarked through the endpoint and direct to the primary` +
          (o.workload.reads === "replicas"
            ? `; reads also on the replicas, direct and through the read endpoint ${endpointKey(t.proxy?.read as NodeEndpoint)}`
            : ""),
      };
      update(
        `primary ${primary.address}, Sentinels ${t.sentinels.map((s) => s.address).join(", ")}, write endpoint ${write.host}:${write.port}`,
      );
    },
  };
}

/** Starts the cluster (AZ-aware bootstrap) in the run's fleet and records it as the cluster topology. */
function startClusterStep(run: ComparisonRun): ProgressStep {
  const { o } = run;
  return {
    title: `Start cluster: ${o.primaries} primaries × ${o.replicasPerPrimary} replica(s), AZ-aware bootstrap`,
    run: async (update) => {
      const c = await startLocalCluster(run.fleet, {
        primaries: o.primaries,
        replicasPerPrimary: o.replicasPerPrimary,
        zones: o.zones,
        password: o.password,
        server: run.server,
        onStep: update,
      });
      run.topologies.cluster = {
        mode: "cluster",
        seed: c.seed,
        zoneMap: c.zoneMap,
        members: c.nodes.map((n) => ({ host: n.host, port: n.port })),
        expect: { primaries: o.primaries, replicasPerPrimary: o.replicasPerPrimary },
        describe: `cluster: ${o.primaries} primaries × ${o.replicasPerPrimary} replica(s), ${c.nodes.length} nodes`,
      };
    },
  };
}

/** The gate before any benchmark: the topology must pass the verifier. */
function verifyBeforeStep(run: ComparisonRun, mode: LocalMode): ProgressStep {
  return {
    title: `Verify ${mode} topology`,
    run: async (update) => {
      const report = await verifyStarted(run, startedTopology(run, mode));
      run.reports[mode] = { before: report };
      update(`PASS: ${report.nodeCount} nodes, ${report.shards.length} primary(ies)`);
    },
  };
}

/** Every measuring step, run after run: replication direct and through the endpoint, cluster, and their reads. */
function measuringSteps(run: ComparisonRun): ProgressStep[] {
  const steps = benchmarkStepContext(run);
  // Run 1 is every measuring step once, run 2 all of them again, ...: the topologies' runs interleave.
  return run.runs.steps((k) => [
    benchmarkStep(steps, k, "replication", "direct"),
    benchmarkStep(steps, k, "replication", "endpoint"),
    ...replicationReads(run, k),
    benchmarkStep(steps, k, "cluster"),
    ...clusterReads(run, k),
  ]);
}

/** What benchmark-step.ts needs of the run: workload, records, and where each mode and path sends its load. */
function benchmarkStepContext(run: ComparisonRun): BenchmarkStepContext {
  const { o } = run;
  return {
    workload: o.workload,
    password: o.password,
    timestamp: run.timestamp,
    clientProcesses: o.clientProcesses ?? 1,
    runs: run.runs,
    rawDir: run.rawDir,
    runRaw: run.runRaw,
    binaries: () => run.binaries as ValkeyBinaries,
    soaks: run.soaks,
    transfer: run.transfer,
    verified: (mode) => run.reports[mode]?.before,
    target: (mode, path) => {
      const t = startedTopology(run, mode);
      const members =
        mode === "cluster" ? t.members : run.sentinelTopology?.members.map((m) => ({ host: m.host, port: m.port }));
      return {
        target: path === "endpoint" ? (t.writeEndpoint as NodeEndpoint) : t.seed,
        ...(members === undefined ? {} : { members }),
      };
    },
  };
}

/** What read-scale-out-steps.ts needs of run `k` of the comparison. */
function readScaleOutContext(run: ComparisonRun, k: number): ReadScaleOutContext {
  const { o } = run;
  return {
    workload: o.workload,
    password: o.password,
    timestamp: run.timestamp,
    rawDir: run.runRaw(k),
    clientProcesses: o.clientProcesses ?? 1,
    binaries: () => run.binaries as ValkeyBinaries,
    push: (r) => run.runs.add(r),
  };
}

/** Run k's replica-read steps (`reads: "replicas"`): the primary, its replicas, and both proxy endpoints. */
function replicationReads(run: ComparisonRun, k: number): ProgressStep[] {
  return replicationReadSteps(readScaleOutContext(run, k), () => {
    const t = run.sentinelTopology as SentinelTopology;
    const primary = startedTopology(run, "replication").seed;
    const replicas = t.members
      .filter((m) => m.port !== primary.port || m.host !== primary.host)
      .map((m) => ({ host: m.host, port: m.port }));
    return {
      primary,
      replicas,
      writeEndpoint: t.proxy?.write as NodeEndpoint,
      readEndpoint: t.proxy?.read as NodeEndpoint,
    };
  });
}

/** Run k's cluster replica-read steps (`reads: "replicas"`). */
function clusterReads(run: ComparisonRun, k: number): ProgressStep[] {
  return clusterReadSteps(readScaleOutContext(run, k), () => ({
    seed: startedTopology(run, "cluster").seed,
    members: startedTopology(run, "cluster").members ?? [],
  }));
}

/** Both topologies verified again after the run; the update lists the cluster's per-primary key counts. */
function verifyAfterStep(run: ComparisonRun): ProgressStep {
  return {
    title: "Verify both topologies after the run (per-primary key counts)",
    run: async (update) => {
      for (const mode of ["replication", "cluster"] as const) {
        const report = await verifyStarted(run, startedTopology(run, mode));
        (run.reports[mode] ??= {}).after = report;
      }
      const keys =
        run.reports.cluster?.after?.shards.map((s) => `${s.primary.address}: ${s.primary.keys ?? "?"} keys`) ?? [];
      update(keys.join(", "));
    },
  };
}

/** One step per asked-for fault and drill mode; a skipped drill is listed, never counted as a pass. */
function drillSteps(run: ComparisonRun): ProgressStep[] {
  const { o } = run;
  return (o.drills ?? []).flatMap((fault) =>
    DRILL_MODES.map((mode): ProgressStep => ({
      title: `Drill ${mode} ${fault}: write load, fault, measured until the verifier passes`,
      run: async (update) => {
        const shape = {
          replicas: Math.max(1, o.replicas),
          primaries: o.primaries,
          replicasPerPrimary: Math.max(1, o.replicasPerPrimary),
          zones: o.zones,
        };
        const r = await runOneLocalDrill(mode, fault, shape, update, o.drillMetrics === true);
        if (isSkipped(r)) {
          // Not a row of figures: listed under the drill table, never counted as a pass.
          run.skipped.push(`${mode} ${fault}: SKIPPED: ${r.skipped.reason}`);
          update(run.skipped[run.skipped.length - 1] as string);
          return;
        }
        run.drills.push(r);
        update(
          `${r.healed ? "healed" : "NOT healed"}: outage ${r.writeOutageMs} ms, recovery ${r.recoveryMs ?? "—"} ms, lost acked ${r.lostAckedWrites}, lost waited ${r.lostWaitedWrites}`,
        );
      },
    })),
  );
}

/** After a completed run: every results file, run.json, the verdict and report.html; the result the CLI prints. */
async function writeComparison(run: ComparisonRun): Promise<LocalComparisonResult> {
  const { o, runDir, rawDir, drills, sweeps, topologies } = run;
  const rows = run.runs.rows();
  writeRunsFile(rawDir, run.runs);
  await writeDashboards(runDir);
  const b = run.binaries as ValkeyBinaries;
  const versions = {
    server: b.server.version,
    client: `${b.benchmark.flavor}-benchmark ${b.benchmark.version}`,
    cli: b.cli.version,
  };
  const done = run.reports as TopologyReports;
  const pathPairs = replicationPathPairs(rows, REPLICATION_PATH_NOTES);
  const readPairs = readScaleOutPairs(rows);
  const table = renderComparisonTables(run, rows, pathPairs, readPairs);
  if (drills.length > 0) writeDrillFiles(runDir, drills);
  writeResults(runDir, rows, done, versions, topologies, sweeps, [
    ...renderReplicationPathMarkdown(pathPairs),
    ...renderSoakMarkdown(run.soaks),
    ...renderReadScaleOutMarkdown(readPairs),
    ...renderDrillMarkdown(drills),
    ...run.transfer.write(rawDir),
  ]);
  const describe = (["replication", "cluster"] as const).map((m) => topologies[m]?.describe ?? m);
  writeFileSync(
    join(runDir, RUN_META_FILE),
    `${JSON.stringify(buildRunMeta(o.workload, versions, describe), null, 2)}\n`,
  );
  const verdictText = writeRunVerdict(runDir);
  const reportPath = await writeReport([runDir], runDir);
  return {
    runDir,
    rows,
    reports: done,
    versions,
    table: [table, verdictText].filter((t) => t !== "").join("\n\n"),
    reportPath,
    drills,
    sloSweeps: sweeps,
  };
}

/**
 * Both modes' Grafana dashboards (core/metrics/dashboard.ts), as the stack ships them, in `<runDir>/dashboards/`.
 * Grafana's SDK is loaded here, not with the CLI: every `vbench` command imports this file.
 */
async function writeDashboards(runDir: string): Promise<void> {
  const { dashboardFileName, dashboardJson } = await import("../../core/metrics/dashboard.js");
  const dir = join(runDir, "dashboards");
  mkdirSync(dir, { recursive: true });
  for (const mode of ["replication", "cluster"] as const)
    writeFileSync(join(dir, dashboardFileName(mode)), dashboardJson(mode));
}

/** The side-by-side tables printed at the end: comparison, replication paths, read scale-out, drills. */
function renderComparisonTables(
  run: ComparisonRun,
  rows: readonly ResultRow[],
  pathPairs: ReturnType<typeof replicationPathPairs>,
  readPairs: ReturnType<typeof readScaleOutPairs>,
): string {
  return [
    renderComparisonTable(rows, sloSideRows(run.sweeps, true)),
    renderReplicationPathTable(pathPairs),
    renderReadScaleOutTable(readPairs),
    renderLocalDrillTable(run.drills, run.skipped),
  ]
    .filter((t) => t !== "")
    .join("\n\n");
}

function writeResults(
  runDir: string,
  rows: readonly ResultRow[],
  reports: Record<LocalMode, { before: TopologyReport; after: TopologyReport }>,
  versions: { server: string; client: string },
  topologies: Partial<Record<LocalMode, StartedTopology>>,
  sweeps: readonly SloSweepRecord[],
  extraSummary: string[],
): void {
  writeFileSync(join(runDir, "results.csv"), renderResultsCsv(rows));
  const topologyLines: string[] = [];
  for (const mode of ["replication", "cluster"] as const) {
    const r = reports[mode];
    writeFileSync(join(runDir, "raw", `verify-${mode}.json`), JSON.stringify(r, null, 2) + "\n");
    topologyLines.push(
      `### ${topologies[mode]?.describe ?? mode}`,
      "",
      "```",
      formatTopologyReport(r.after),
      "```",
      "",
    );
  }
  const extraSideRows = sloSideRows(sweeps);
  const summary = renderSummaryMarkdown({
    rows,
    title: "Local comparison: replication vs cluster mode",
    topology: topologyLines,
    versions,
    extraSideRows,
  });
  writeFileSync(join(runDir, "summary.md"), [summary, ...extraSummary, ...renderSloMarkdown(sweeps)].join("\n"));
}
