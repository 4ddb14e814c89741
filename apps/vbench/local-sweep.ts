/**
 * The shard-scaling sweep on this machine: for each shard count, a fresh local cluster
 * (P primaries × M replicas, AZ-aware bootstrap), verified, the same workload, then stopped.
 * Writes `<outputDir>/<timestamp>/{sweep.csv,report.html,raw/}`.
 *
 * With `pin`, each primary i runs on CPU i and the client (and any replicas) on the CPUs left;
 * the run is refused up front when the largest step would leave the client no CPU. Every row
 * records how many CPUs the client had and how busy it was, so a step the client limited is
 * flagged instead of being read as the servers' limit. With several client processes per test
 * (`clientProcesses`), the CPU share is that of all of them over min(threads × processes, CPUs).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { resolveBinaries, type ValkeyBinaries } from "../../benchmarks/run/binaries.js";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { runTimestamp, silentProgress, type ProgressRunner, type ProgressStep } from "./local-comparison.js";
import { writeReport } from "../../benchmarks/report/render.js";
import { buildRunMeta, RUN_META_FILE } from "../../benchmarks/report/run-meta.js";
import { runWorkload } from "../../benchmarks/run/benchmark-runner.js";
import type { ResultRow } from "../../benchmarks/run/result-row.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { formatTopologyReport } from "../../core/verify/format-report.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import type { Workload } from "../../vocabulary/workload.js";
import { CpuSampler, pinProcess } from "../../benchmarks/sweep/process-cpu.js";
import { renderSweepCsv, type SweepRow } from "../../benchmarks/sweep/sweep-csv.js";
import { pinPlan, scaling, type PinPlan } from "../../benchmarks/sweep/sweep-math.js";
import { CLIENT_SATURATION, clientCpuShare } from "../../benchmarks/run/client-cpu.js";

export const SWEEP_CSV_FILE = "sweep.csv";

export interface LocalSweepOptions {
  workload: Workload;
  /** Strictly increasing shard counts. */
  shards: number[];
  replicasPerPrimary: number;
  zones: readonly string[];
  pin: boolean;
  outputDir: string;
  ioThreads: number;
  /**
   * Benchmark processes per test, started together (runWorkload clientProcesses: rps summed,
   * the worst client's percentiles). The client CPU share counts all of them. @default 1
   */
  clientProcesses?: number;
  /** @default os.availableParallelism() */
  cpuCount?: number;
  timestamp?: string;
}

export interface LocalSweepResult {
  runDir: string;
  rows: SweepRow[];
  reportPath: string;
}

/** Failure codes a cluster without replicas has by construction (M = 0). */
const NO_REPLICA_CODES = new Set(["PRIMARY_WITHOUT_REPLICA", "NO_CROSS_AZ_REPLICA"]);

/** Refuses a --pin sweep this machine cannot run; returns the plan for the largest step. */
export function checkPin(o: Pick<LocalSweepOptions, "pin" | "shards" | "cpuCount">): PinPlan | undefined {
  if (!o.pin) return undefined;
  return pinPlan(o.cpuCount ?? availableParallelism(), Math.max(...o.shards));
}

/** A sweep row before the scaling across steps is computed. */
type MeasuredRow = Omit<SweepRow, "scale" | "exponent">;

/** What every step of one sweep shares: its options, directories, binaries and the rows measured so far. */
interface SweepRun {
  o: LocalSweepOptions;
  cpuCount: number;
  clientProcesses: number;
  timestamp: string;
  runDir: string;
  rawDir: string;
  binaries: ValkeyBinaries;
  measured: MeasuredRow[];
}

/** One shard count's step: its CPU plan, and the CPUs and sampler its client processes are measured with. */
interface ShardStep {
  n: number;
  plan: PinPlan | undefined;
  clientCpus: number;
  sampler: CpuSampler;
}

export async function runLocalSweep(
  o: LocalSweepOptions,
  progress: ProgressRunner = silentProgress,
): Promise<LocalSweepResult> {
  const run = startSweep(o);
  await progress(o.shards.map((n) => shardStep(run, n)));
  return writeSweep(run);
}

/** Checks `--pin`, makes the run's raw/ directory and finds the binaries: nothing started yet. */
function startSweep(o: LocalSweepOptions): SweepRun {
  const cpuCount = o.cpuCount ?? availableParallelism();
  const clientProcesses = o.clientProcesses ?? 1;
  checkPin({ ...o, cpuCount });
  const timestamp = o.timestamp ?? runTimestamp();
  const runDir = resolve(o.outputDir, timestamp);
  const rawDir = join(runDir, "raw");
  mkdirSync(rawDir, { recursive: true });
  const binaries = resolveBinaries();
  return { o, cpuCount, clientProcesses, timestamp, runDir, rawDir, binaries, measured: [] };
}

/** Step n: a fresh n-shard cluster started (pinned), verified, benchmarked, its rows measured, then stopped. */
function shardStep(run: SweepRun, n: number): ProgressStep {
  const { o } = run;
  return {
    title: `${n} shard(s): start ${n} × (1 + ${o.replicasPerPrimary}), verify, benchmark ${o.workload.tests.join(",")}`,
    run: async (update) => {
      const plan = o.pin ? pinPlan(run.cpuCount, n) : undefined;
      const step: ShardStep = {
        n,
        plan,
        clientCpus: plan ? plan.clientCpus.length : run.cpuCount,
        sampler: new CpuSampler(),
      };
      const fleet = new LocalFleet();
      const connector = new DirectConnector({});
      try {
        const c = await startPinnedCluster(run, step, fleet);
        await verifyShardCluster(run, step, c, connector);
        await benchmarkShardCluster(run, step, c, update);
      } finally {
        step.sampler.stop();
        await connector.close();
        await fleet.stopAll();
      }
    },
  };
}

/** Starts the n-shard cluster; with a plan, primary i on CPU i and every replica on the client's CPUs. */
async function startPinnedCluster(run: SweepRun, step: ShardStep, fleet: LocalFleet): Promise<LocalCluster> {
  const { o } = run;
  const { plan } = step;
  const c = await startLocalCluster(fleet, {
    primaries: step.n,
    replicasPerPrimary: o.replicasPerPrimary,
    zones: o.zones,
    server: { ioThreads: o.ioThreads },
  });
  if (plan) {
    c.primaries.forEach((p, i) => pinProcess(p.pid, [plan.primaryCpus[i] as number]));
    for (const node of c.nodes) if (!c.primaries.includes(node)) pinProcess(node.pid, plan.clientCpus);
  }
  return c;
}

/** Throws unless the cluster passes (M = 0 tolerates the no-replica codes); writes raw/verify-<n>-shards.json. */
async function verifyShardCluster(
  run: SweepRun,
  step: ShardStep,
  c: LocalCluster,
  connector: DirectConnector,
): Promise<void> {
  const { o } = run;
  const { n } = step;
  const report = await verifyTopology({
    mode: "cluster",
    seeds: [c.seed],
    connector,
    zones: new StaticZoneSource(c.zoneMap),
    expect: { primaries: n, replicasPerPrimary: o.replicasPerPrimary },
  });
  const tolerated = o.replicasPerPrimary === 0 && report.failures.every((f) => NO_REPLICA_CODES.has(f.code));
  if (!report.ok && !tolerated)
    throw new Error(`the ${n}-shard cluster failed verification:\n${formatTopologyReport(report)}`);
  writeFileSync(join(run.rawDir, `verify-${n}-shards.json`), `${JSON.stringify(report, null, 2)}\n`);
}

/** Runs the workload on the cluster (clients pinned and CPU-sampled) and adds one sweep row per test. */
async function benchmarkShardCluster(
  run: SweepRun,
  step: ShardStep,
  c: LocalCluster,
  update: (message: string) => void,
): Promise<void> {
  const { o, binaries } = run;
  const { n, plan, sampler } = step;
  // Per test, the pids of its runs in spawn order; the last `clientProcesses` are the final run's.
  const pidsOf = new Map<string, number[]>();
  const rows = await runWorkload({
    workload: o.workload,
    // redis-/valkey-benchmark --cluster refuses a cluster with one primary ("Invalid cluster:
    // 1 node(s)"); that primary owns every slot, so a plain client gets no MOVED either.
    target: { host: (c.primaries[0] ?? c.seed).host, port: (c.primaries[0] ?? c.seed).port, cluster: n > 1 },
    mode: "cluster",
    client: binaries.benchmark,
    serverVersion: binaries.server.version,
    timestamp: run.timestamp,
    rawDir: join(run.rawDir, `${n}-shards`),
    clientProcesses: run.clientProcesses,
    onSpawn: (pid, args) => {
      if (plan) pinProcess(pid, plan.clientCpus);
      sampler.track(pid);
      const t = args[args.indexOf("-t") + 1];
      if (args.includes("-t") && t) pidsOf.set(t.toUpperCase(), [...(pidsOf.get(t.toUpperCase()) ?? []), pid]);
    },
    onProgress: (e) => update(`${e.test.toUpperCase()}: ${e.phase} ${e.requests} requests`),
  });
  for (const r of rows)
    run.measured.push(sweepRow(run, step, r, (pidsOf.get(r.test) ?? []).slice(-run.clientProcesses)));
}

/** One test's sweep row: its figures, and the CPU share its final run's client processes (`pids`) used. */
function sweepRow(run: SweepRun, step: ShardStep, r: ResultRow, pids: readonly number[]): MeasuredRow {
  const { o } = run;
  const { n, clientCpus, sampler } = step;
  const cpuSeconds = pids.reduce((sum, pid) => sum + sampler.cpuSeconds(pid), 0);
  const share =
    pids.length === 0
      ? 0
      : clientCpuShare(cpuSeconds, r.duration_s, o.workload.threads * run.clientProcesses, clientCpus);
  return {
    workload: r.workload,
    test: r.test,
    shards: n,
    replicas_per_primary: o.replicasPerPrimary,
    rps: r.rps,
    p50_ms: r.p50_ms,
    p99_ms: r.p99_ms,
    client_cpus: clientCpus,
    client_cpu_pct: Math.round(share * 1000) / 10,
    client_saturated: share >= CLIENT_SATURATION,
    pinned: o.pin,
    duration_s: r.duration_s,
    timestamp: run.timestamp,
    server_version: r.server_version,
    client_version: r.client_version,
    notes: [n === 1 ? "1 shard: client without --cluster against the primary, which owns every slot" : "", r.notes]
      .filter((x) => x !== "")
      .join("; "),
  };
}

/** Scale and exponent across the steps, then sweep.csv, run.json and report.html. */
async function writeSweep(run: SweepRun): Promise<LocalSweepResult> {
  const { o, runDir, binaries, clientProcesses } = run;
  const s = scaling(run.measured);
  const rows: SweepRow[] = run.measured.map((r, i) => ({
    ...r,
    scale: s[i]?.scale ?? null,
    exponent: s[i]?.exponent ?? null,
  }));
  writeFileSync(join(runDir, SWEEP_CSV_FILE), renderSweepCsv(rows));
  const versions = {
    server: binaries.server.version,
    client: `${binaries.benchmark.flavor}-benchmark ${binaries.benchmark.version}`,
    cli: binaries.cli.version,
  };
  const clientsText = clientProcesses > 1 ? `, ${clientProcesses} benchmark processes per test` : "";
  const describe = [
    `shard sweep: ${o.shards.join(", ")} primaries × (1 + ${o.replicasPerPrimary}), one cluster per step${o.pin ? ", pinned" : ""}${clientsText}`,
  ];
  writeFileSync(
    join(runDir, RUN_META_FILE),
    `${JSON.stringify(buildRunMeta(o.workload, versions, describe), null, 2)}\n`,
  );
  const reportPath = await writeReport([runDir], runDir);
  return { runDir, rows, reportPath };
}
