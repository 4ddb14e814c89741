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
 * (read-scale-out-steps.ts), and a "read scale-out" table pairs them. Every server is stopped at
 * the end, on failure, and on Ctrl-C (see util/process-reaper.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { resolveBinaries, type ValkeyBinaries } from "../binaries.js";
import { runWorkload } from "../run/benchmark-runner.js";
import { writeMixFiles } from "../run/mix-runner.js";
import { runMixComparingLoops } from "../run/loop-comparison.js";
import { renderSoakMarkdown } from "../run/soak-sampler.js";
import type { SoakRecord } from "../run/soak-sample.js";
import { writeReport } from "../report/render.js";
import { writeRunVerdict } from "../report/verdict-run.js";
import { buildRunMeta, RUN_META_FILE } from "../report/run-meta.js";
import { renderComparisonTable, renderSummaryMarkdown } from "../run/comparison.js";
import { formatResultTimestamp, type ResultRow } from "../run/result-row.js";
import { renderResultsCsv } from "../run/results-csv.js";
import { renderDrillMarkdown, renderDrillTable } from "../drill/drill-table.js";
import type { Fault } from "../../vocabulary/faults.js";
import { DRILL_MODES, LOCAL_DRILL_DEFAULTS, runOneLocalDrill, writeDrillFiles } from "../drill/local-drills.js";
import { isSkipped, type DrillResult } from "../drill/run-drill.js";
import { REPLICATION_PATH_NOTES, renderReplicationPathMarkdown, renderReplicationPathTable, replicationPathPairs } from "../run/replication-paths.js";
import { DirectConnector } from "../topology/connector.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { StaticZoneSource } from "../topology/zones.js";
import { formatTopologyReport } from "../verify/format-report.js";
import type { TopologyReport, VerifyExpectations } from "../verify/verify-types.js";
import { verifyTopology } from "../verify/verify-topology.js";
import { DEFAULT_MIX_DURATION_SECONDS, type Workload } from "../../vocabulary/workload.js";
import { startLocalCluster } from "./local-cluster.js";
import { silentProgress, type ProgressRunner, type ProgressStep } from "./progress.js";
import { clusterReadSteps, replicationReadSteps, type ReadScaleOutContext } from "./read-scale-out-steps.js";
import { readScaleOutPairs, renderReadScaleOutMarkdown, renderReadScaleOutTable } from "../run/read-scale-out.js";
import { SentinelTopology } from "./sentinel-topology.js";
import { renderSloMarkdown, sloSideRows, sloSweepSteps, type SloSweepRecord } from "./slo-steps.js";
import { LocalFleet } from "./valkey-process.js";
import { TransferLedger, type LocalTransferOptions } from "./transfer-ledger.js";

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
  /** Benchmark processes per test, started together (runWorkload clientProcesses). @default 1 */
  clientProcesses?: number;
  /** Latency-target sweeps per topology (`--repeat`, with `workload.slo`). @default DEFAULT_SLO_REPEAT */
  repeat?: number;
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
    super(`${mode} topology failed verification (${report.failures.map((f) => f.code).join(", ")}):\n${formatTopologyReport(report)}`);
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

export async function runLocalComparison(o: LocalComparisonOptions, progress: ProgressRunner = silentProgress): Promise<LocalComparisonResult> {
  const timestamp = o.timestamp ?? formatResultTimestamp();
  const runDir = resolve(o.outputDir, timestamp);
  const rawDir = join(runDir, "raw");
  const fleet = new LocalFleet();
  const server = { ioThreads: o.ioThreads };
  const connector = new DirectConnector({ password: o.password });
  const topologies: Partial<Record<LocalMode, StartedTopology>> = {};
  let sentinelTopology: SentinelTopology | undefined;
  const reports: Partial<Record<LocalMode, { before?: TopologyReport; after?: TopologyReport }>> = {};
  const rows: ResultRow[] = [];
  const soaks: { label: string; record: SoakRecord }[] = [];
  const drills: DrillResult[] = [];
  const skipped: string[] = [];
  const sweeps: SloSweepRecord[] = [];
  let binaries: ValkeyBinaries | undefined;
  const transfer = new TransferLedger({ zones: o.zones, placement: o.clientZones ?? "spread", password: o.password });

  const verify = async (t: StartedTopology): Promise<TopologyReport> => {
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
  };
  const topology = (mode: LocalMode): StartedTopology => {
    const t = topologies[mode];
    if (t === undefined) throw new Error(`${mode} topology was not started`);
    return t;
  };

  const benchmarkStep = (mode: LocalMode, path?: keyof typeof REPLICATION_PATH_NOTES): ProgressStep => ({
    title: `Benchmark ${mode}${path === undefined ? "" : path === "endpoint" ? " through the write endpoint" : " direct to the primary"} (${o.workload.mix === undefined ? `${o.workload.tests.join(",")}, -n ${o.workload.requests}` : `mix ${o.workload.mix.map((e) => `${e.test}:${e.percent}`).join(",")} for ${o.workload.durationSeconds ?? DEFAULT_MIX_DURATION_SECONDS} s`} -c ${o.workload.clients} -P ${o.workload.pipeline})`,
    run: async (update) => {
      const t = topology(mode);
      const b = binaries as ValkeyBinaries;
      const target = path === "endpoint" ? (t.writeEndpoint as NodeEndpoint) : t.seed;
      // The primary paths: `--reads replicas` adds its own rows (read-scale-out-steps.ts).
      const workload: Workload = { ...o.workload, reads: "primary" };
      const members = mode === "cluster" ? t.members : sentinelTopology?.members.map((m) => ({ host: m.host, port: m.port }));
      const tx = transfer.step(mode, path === undefined ? "" : REPLICATION_PATH_NOTES[path], members ?? [], reports[mode]?.before);
      const out =
        o.workload.mix !== undefined
          ? (
              await runMixComparingLoops({
                workload,
                target: { host: target.host, port: target.port, cluster: mode === "cluster" },
                mode,
                serverVersion: b.server.version,
                password: o.password,
                timestamp,
                members,
                onProgress: update,
              }).then((r) => {
                writeMixFiles(rawDir, mode, r);
                tx.mix(r);
                if (r.soak !== undefined)
                  soaks.push({ label: `${mode}${path === undefined ? "" : ` (${REPLICATION_PATH_NOTES[path]})`}`, record: r.soak.record });
                return r;
              })
            ).rows
          : await runWorkload({
              workload,
              target: { host: target.host, port: target.port, cluster: mode === "cluster" },
              mode,
              client: b.benchmark,
              serverVersion: b.server.version,
              password: o.password,
              timestamp,
              rawDir,
              clientProcesses: o.clientProcesses ?? 1,
              ...tx.hooks((e) => {
                if (e.phase === "run") update(`${e.test.toUpperCase()}: ${e.requests} requests`);
                else if (e.phase === "rerun") update(`${e.test.toUpperCase()}: too short, re-running with ${e.requests} requests`);
                else if (e.row) update(`${e.row.test}: ${Math.round(e.row.rps)} rps, p50 ${e.row.p50_ms} ms (${e.row.duration_s.toFixed(1)} s)`);
              }),
            });
      const note = path === undefined ? undefined : REPLICATION_PATH_NOTES[path];
      rows.push(...tx.columns(out).map((r) => (note === undefined ? r : { ...r, notes: r.notes === "" ? note : `${note}; ${r.notes}` })));
    },
  });

  const reads: ReadScaleOutContext = {
    workload: o.workload,
    password: o.password,
    timestamp,
    rawDir,
    clientProcesses: o.clientProcesses ?? 1,
    binaries: () => binaries as ValkeyBinaries,
    push: (r) => rows.push(...r),
  };
  const replicationReads = replicationReadSteps(reads, () => {
    const t = sentinelTopology as SentinelTopology;
    const primary = topology("replication").seed;
    const replicas = t.members.filter((m) => m.port !== primary.port || m.host !== primary.host).map((m) => ({ host: m.host, port: m.port }));
    return { primary, replicas, writeEndpoint: t.proxy?.write as NodeEndpoint, readEndpoint: t.proxy?.read as NodeEndpoint };
  });
  const clusterReads = clusterReadSteps(reads, () => ({ seed: topology("cluster").seed, members: topology("cluster").members ?? [] }));

  try {
    mkdirSync(rawDir, { recursive: true });
    await progress([
      {
        title: "Find valkey-server and the benchmark client",
        run: (update) => {
          binaries = resolveBinaries();
          update(`server ${binaries.server.path} ${binaries.server.version}; client ${binaries.benchmark.path} ${binaries.benchmark.version}`);
          return Promise.resolve();
        },
      },
      {
        title: `Start replication: 1 primary + ${o.replicas} replicas, 3 Sentinels, HAProxy write endpoint`,
        run: async (update) => {
          sentinelTopology = await SentinelTopology.start({ replicas: o.replicas, zones: o.zones, password: o.password, server });
          const t = sentinelTopology;
          const primary = t.member(await t.primaryFromSentinels());
          const write = t.proxy?.write as NodeEndpoint;
          topologies.replication = {
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
          update(`primary ${primary.address}, Sentinels ${t.sentinels.map((s) => s.address).join(", ")}, write endpoint ${write.host}:${write.port}`);
        },
      },
      {
        title: `Start cluster: ${o.primaries} primaries × ${o.replicasPerPrimary} replica(s), AZ-aware bootstrap`,
        run: async (update) => {
          const c = await startLocalCluster(fleet, {
            primaries: o.primaries,
            replicasPerPrimary: o.replicasPerPrimary,
            zones: o.zones,
            password: o.password,
            server,
            onStep: update,
          });
          topologies.cluster = {
            mode: "cluster",
            seed: c.seed,
            zoneMap: c.zoneMap,
            members: c.nodes.map((n) => ({ host: n.host, port: n.port })),
            expect: { primaries: o.primaries, replicasPerPrimary: o.replicasPerPrimary },
            describe: `cluster: ${o.primaries} primaries × ${o.replicasPerPrimary} replica(s), ${c.nodes.length} nodes`,
          };
        },
      },
      ...(["replication", "cluster"] as const).map((mode): ProgressStep => ({
        title: `Verify ${mode} topology`,
        run: async (update) => {
          const report = await verify(topology(mode));
          reports[mode] = { before: report };
          update(`PASS: ${report.nodeCount} nodes, ${report.shards.length} primary(ies)`);
        },
      })),
      benchmarkStep("replication", "direct"),
      benchmarkStep("replication", "endpoint"),
      ...replicationReads,
      benchmarkStep("cluster"),
      ...clusterReads,
      ...sloSweepSteps({ ...o, timestamp, rawDir, records: sweeps, binaries: () => binaries, started: () => [topology("replication"), topology("cluster")] }),
      {
        title: "Verify both topologies after the run (per-primary key counts)",
        run: async (update) => {
          for (const mode of ["replication", "cluster"] as const) {
            const report = await verify(topology(mode));
            (reports[mode] ??= {}).after = report;
          }
          const keys = reports.cluster?.after?.shards.map((s) => `${s.primary.address}: ${s.primary.keys ?? "?"} keys`) ?? [];
          update(keys.join(", "));
        },
      },
      {
        title: "Stop the benchmarked topologies",
        run: async () => {
          await Promise.all([fleet.stopAll(), sentinelTopology?.stopAll()]);
        },
      },
      ...(o.drills ?? []).flatMap((fault) =>
        DRILL_MODES.map((mode): ProgressStep => ({
          title: `Drill ${mode} ${fault}: write load, fault, measured until the verifier passes`,
          run: async (update) => {
            const shape = { replicas: Math.max(1, o.replicas), primaries: o.primaries, replicasPerPrimary: Math.max(1, o.replicasPerPrimary), zones: o.zones };
            const r = await runOneLocalDrill(mode, fault, shape, update);
            if (isSkipped(r)) {
              // Not a row of figures: listed under the drill table, never counted as a pass.
              skipped.push(`${mode} ${fault}: SKIPPED: ${r.skipped.reason}`);
              update(skipped[skipped.length - 1] as string);
              return;
            }
            drills.push(r);
            update(
              `${r.healed ? "healed" : "NOT healed"}: outage ${r.writeOutageMs} ms, recovery ${r.recoveryMs ?? "—"} ms, lost acked ${r.lostAckedWrites}, lost waited ${r.lostWaitedWrites}`,
            );
          },
        })),
      ),
    ]);
  } catch (err) {
    // Nothing measured is lost: rows finished before the failure are still written.
    if (drills.length > 0) writeDrillFiles(runDir, drills);
    if (rows.length > 0) {
      writeFileSync(join(runDir, "results.csv"), renderResultsCsv(rows));
      (err as Error).message += ` (the ${rows.length} result row(s) measured before the failure are in ${join(runDir, "results.csv")})`;
    }
    throw err;
  } finally {
    await Promise.all([fleet.stopAll(), sentinelTopology?.stopAll()]);
  }

  const b = binaries as ValkeyBinaries;
  const versions = { server: b.server.version, client: `${b.benchmark.flavor}-benchmark ${b.benchmark.version}`, cli: b.cli.version };
  const done = reports as Record<LocalMode, { before: TopologyReport; after: TopologyReport }>;
  const pathPairs = replicationPathPairs(rows, REPLICATION_PATH_NOTES);
  const drillTable = [
    drills.length === 0
      ? ""
      : `failure drills (local timeouts: detection ${LOCAL_DRILL_DEFAULTS.failureDetectionMs} ms, restart after ${LOCAL_DRILL_DEFAULTS.restartDelayMs} ms, zone down ${LOCAL_DRILL_DEFAULTS.zoneDownMs} ms)\n${renderDrillTable(drills)}`,
    ...skipped,
  ]
    .filter((t) => t !== "")
    .join("\n");
  const readPairs = readScaleOutPairs(rows);
  const table = [renderComparisonTable(rows, sloSideRows(sweeps, true)), renderReplicationPathTable(pathPairs), renderReadScaleOutTable(readPairs), drillTable]
    .filter((t) => t !== "")
    .join("\n\n");
  if (drills.length > 0) writeDrillFiles(runDir, drills);
  writeResults(runDir, rows, done, versions, topologies, sweeps, [
    ...renderReplicationPathMarkdown(pathPairs),
    ...renderSoakMarkdown(soaks),
    ...renderReadScaleOutMarkdown(readPairs),
    ...renderDrillMarkdown(drills),
    ...transfer.write(rawDir),
  ]);
  const describe = (["replication", "cluster"] as const).map((m) => topologies[m]?.describe ?? m);
  writeFileSync(join(runDir, RUN_META_FILE), `${JSON.stringify(buildRunMeta(o.workload, versions, describe), null, 2)}\n`);
  const verdictText = writeRunVerdict(runDir);
  const reportPath = await writeReport([runDir], runDir);
  return { runDir, rows, reports: done, versions, table: [table, verdictText].filter((t) => t !== "").join("\n\n"), reportPath, drills, sloSweeps: sweeps };
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
    topologyLines.push(`### ${topologies[mode]?.describe ?? mode}`, "", "```", formatTopologyReport(r.after), "```", "");
  }
  const extraSideRows = sloSideRows(sweeps);
  const summary = renderSummaryMarkdown({ rows, title: "Local comparison: replication vs cluster mode", topology: topologyLines, versions, extraSideRows });
  writeFileSync(join(runDir, "summary.md"), [summary, ...extraSummary, ...renderSloMarkdown(sweeps)].join("\n"));
}
