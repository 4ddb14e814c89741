/**
 * One measuring step of the local comparison (local-comparison.ts): the workload on one topology
 * and path (replication direct to the primary or through the write endpoint; cluster), in run
 * `run` of `--repeat`. valkey-benchmark's tests, or the mix; each row's notes start with its
 * path, and its rows go to the run's record (run/repeated-runs.ts). A later run starts each test
 * with the requests the same step's previous run ended with, so it is not re-run again from a
 * short first run. Every run's raw output goes to raw/run-<k>/ (several runs). Every test's data
 * transfer is recorded around it (transfer-ledger.ts), every run's.
 */
import type { ValkeyBinaries } from "../../benchmarks/run/binaries.js";
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";
import { DEFAULT_MIX_DURATION_SECONDS, type Workload } from "../../vocabulary/workload.js";
import { runWorkload } from "../../benchmarks/run/benchmark-runner.js";
import { runMixComparingLoops } from "../../benchmarks/run/loop-comparison.js";
import { writeMixFiles } from "../../benchmarks/run/mix-runner.js";
import type { RepeatedRuns } from "../../benchmarks/run/repeated-runs.js";
import { REPLICATION_PATH_NOTES } from "../../benchmarks/run/replication-paths.js";
import type { ResultMode, ResultRow } from "../../benchmarks/run/result-row.js";
import type { SoakRecord } from "../../benchmarks/run/soak-sample.js";
import type { ProgressStep } from "../../core/util/progress.js";
import type { TransferLedger } from "./transfer-ledger.js";
import type { ZoneTopology } from "../../benchmarks/cost/transfer.js";

export type ReplicationPath = keyof typeof REPLICATION_PATH_NOTES;

export interface BenchmarkStepContext {
  workload: Workload;
  password?: string;
  timestamp: string;
  clientProcesses: number;
  runs: RepeatedRuns;
  /** raw/: a mix's files for the report (the last run's). */
  rawDir: string;
  /** Run k's raw directory, `sub` inside it. */
  runRaw: (run: number, sub?: string) => string;
  binaries: () => ValkeyBinaries;
  /** Where the step sends its load, and the members whose commandstats count (a mix). */
  target: (mode: ResultMode, path?: ReplicationPath) => { target: NodeEndpoint; members?: NodeEndpoint[] };
  /** Soaks measured, for summary.md. */
  soaks: { label: string; record: SoakRecord }[];
  /** The data transfer around every test (transfer-ledger.ts). */
  transfer: TransferLedger;
  /** The topology as the verifier saw it before the benchmark (the members' zones). */
  verified: (mode: ResultMode) => ZoneTopology | undefined;
}

function title(w: Workload, mode: ResultMode, path?: ReplicationPath): string {
  const where =
    path === undefined ? "" : path === "endpoint" ? " through the write endpoint" : " direct to the primary";
  const what =
    w.mix === undefined
      ? `${w.tests.join(",")}, -n ${w.requests}`
      : `mix ${w.mix.map((e) => `${e.test}:${e.percent}`).join(",")} for ${w.durationSeconds ?? DEFAULT_MIX_DURATION_SECONDS} s`;
  return `Benchmark ${mode}${where} (${what} -c ${w.clients} -P ${w.pipeline})`;
}

export function benchmarkStep(
  c: BenchmarkStepContext,
  run: number,
  mode: ResultMode,
  path?: ReplicationPath,
): ProgressStep {
  const stepTitle = title(c.workload, mode, path);
  const note = path === undefined ? undefined : REPLICATION_PATH_NOTES[path];
  return {
    title: stepTitle,
    run: async (update) => {
      const b = c.binaries();
      const { target, members } = c.target(mode, path);
      // The primary paths: `--reads replicas` adds its own rows (read-scale-out-steps.ts).
      const workload: Workload = { ...c.workload, reads: "primary" };
      const common = { workload, mode, serverVersion: b.server.version, password: c.password, timestamp: c.timestamp };
      const tx = c.transfer.step(mode, note ?? "", members ?? [], c.verified(mode));
      let out: ResultRow[];
      if (workload.mix !== undefined) {
        const r = await runMixComparingLoops({
          ...common,
          target: { ...target, cluster: mode === "cluster" },
          members,
          onProgress: update,
        });
        writeMixFiles(c.rawDir, mode, r);
        tx.mix(r);
        if (c.runs.count > 1) writeMixFiles(c.runRaw(run), `${mode}${path === undefined ? "" : `-${path}`}`, r);
        if (r.soak !== undefined)
          c.soaks.push({ label: `${mode}${note === undefined ? "" : ` (${note})`}`, record: r.soak.record });
        out = r.rows;
      } else {
        out = await runWorkload({
          ...common,
          target: { host: target.host, port: target.port, cluster: mode === "cluster" },
          client: b.benchmark,
          rawDir: c.runRaw(run, path === undefined ? "" : `replication-${path}`),
          clientProcesses: c.clientProcesses,
          startRequests: c.runs.previousRequests(run, stepTitle),
          ...tx.hooks((e) => {
            if (e.phase === "run") update(`${e.test.toUpperCase()}: ${e.requests} requests`);
            else if (e.phase === "rerun")
              update(`${e.test.toUpperCase()}: too short, re-running with ${e.requests} requests`);
            else if (e.row)
              update(
                `${e.row.test}: ${Math.round(e.row.rps)} rps, p50 ${e.row.p50_ms} ms (${e.row.duration_s.toFixed(1)} s)`,
              );
          }),
        });
      }
      c.runs.add(
        tx
          .columns(out)
          .map((r) => (note === undefined ? r : { ...r, notes: r.notes === "" ? note : `${note}; ${r.notes}` })),
      );
    },
  };
}
