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
import { resolveBinaries } from "../binaries.js";
import { startLocalCluster } from "../local/local-cluster.js";
import { LocalFleet } from "../local/valkey-process.js";
import { runTimestamp, silentProgress, type ProgressRunner, type ProgressStep } from "../local/local-comparison.js";
import { writeReport } from "../report/render.js";
import { buildRunMeta, RUN_META_FILE } from "../report/run-meta.js";
import { runWorkload } from "../run/benchmark-runner.js";
import { DirectConnector } from "../topology/connector.js";
import { StaticZoneSource } from "../topology/zones.js";
import { formatTopologyReport } from "../verify/format-report.js";
import { verifyTopology } from "../verify/verify-topology.js";
import type { Workload } from "../../vocabulary/workload.js";
import { CpuSampler, pinProcess } from "./process-cpu.js";
import { renderSweepCsv, type SweepRow } from "./sweep-csv.js";
import { pinPlan, scaling, type PinPlan } from "./sweep-math.js";
import { CLIENT_SATURATION, clientCpuShare } from "../run/client-cpu.js";

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

export async function runLocalSweep(
  o: LocalSweepOptions,
  progress: ProgressRunner = silentProgress,
): Promise<LocalSweepResult> {
  const cpuCount = o.cpuCount ?? availableParallelism();
  const clientProcesses = o.clientProcesses ?? 1;
  checkPin({ ...o, cpuCount });
  const timestamp = o.timestamp ?? runTimestamp();
  const runDir = resolve(o.outputDir, timestamp);
  const rawDir = join(runDir, "raw");
  mkdirSync(rawDir, { recursive: true });
  const binaries = resolveBinaries();
  const measured: Omit<SweepRow, "scale" | "exponent">[] = [];
  const steps: ProgressStep[] = o.shards.map((n) => ({
    title: `${n} shard(s): start ${n} × (1 + ${o.replicasPerPrimary}), verify, benchmark ${o.workload.tests.join(",")}`,
    run: async (update) => {
      const plan = o.pin ? pinPlan(cpuCount, n) : undefined;
      const clientCpus = plan ? plan.clientCpus.length : cpuCount;
      const fleet = new LocalFleet();
      const connector = new DirectConnector({});
      const sampler = new CpuSampler();
      try {
        const c = await startLocalCluster(fleet, {
          primaries: n,
          replicasPerPrimary: o.replicasPerPrimary,
          zones: o.zones,
          server: { ioThreads: o.ioThreads },
        });
        if (plan) {
          c.primaries.forEach((p, i) => pinProcess(p.pid, [plan.primaryCpus[i] as number]));
          for (const node of c.nodes) if (!c.primaries.includes(node)) pinProcess(node.pid, plan.clientCpus);
        }
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
        writeFileSync(join(rawDir, `verify-${n}-shards.json`), `${JSON.stringify(report, null, 2)}\n`);
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
          timestamp,
          rawDir: join(rawDir, `${n}-shards`),
          clientProcesses,
          onSpawn: (pid, args) => {
            if (plan) pinProcess(pid, plan.clientCpus);
            sampler.track(pid);
            const t = args[args.indexOf("-t") + 1];
            if (args.includes("-t") && t) pidsOf.set(t.toUpperCase(), [...(pidsOf.get(t.toUpperCase()) ?? []), pid]);
          },
          onProgress: (e) => update(`${e.test.toUpperCase()}: ${e.phase} ${e.requests} requests`),
        });
        for (const r of rows) {
          const pids = (pidsOf.get(r.test) ?? []).slice(-clientProcesses);
          const cpuSeconds = pids.reduce((sum, pid) => sum + sampler.cpuSeconds(pid), 0);
          const share =
            pids.length === 0
              ? 0
              : clientCpuShare(cpuSeconds, r.duration_s, o.workload.threads * clientProcesses, clientCpus);
          measured.push({
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
            timestamp,
            server_version: r.server_version,
            client_version: r.client_version,
            notes: [
              n === 1 ? "1 shard: client without --cluster against the primary, which owns every slot" : "",
              r.notes,
            ]
              .filter((x) => x !== "")
              .join("; "),
          });
        }
      } finally {
        sampler.stop();
        await connector.close();
        await fleet.stopAll();
      }
    },
  }));
  await progress(steps);
  const s = scaling(measured);
  const rows: SweepRow[] = measured.map((r, i) => ({
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
