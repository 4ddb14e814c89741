/**
 * `vbench bench --target HOST:PORT [--cluster] [--password-env NAME] [workload flags]
 * [--reads replicas [--read-target HOST:PORT,...]] [--json] [--output
 * DIR]`: the local comparison's pipeline (verify, benchmark with re-runs, results.csv,
 * summary.md, report.html) against an endpoint you already have, so it can go side by side with
 * this stack in one report (`vbench report --from dirA --from dirB`).
 *
 * Exit 0 done, 1 the run failed (or, with --cluster, the cluster does not serve every slot:
 * CLUSTER_NOT_READY), 2 bad flags, an unreachable or non-Valkey endpoint, or --cluster against a
 * server with cluster mode off (CLUSTER_MODE_DISABLED).
 */
import type { Command } from "commander";
import { EndpointNotReady, runEndpointBench } from "./endpoint-bench.js";
import { ConnectionError } from "../../core/topology/connector.js";
import { parseEndpoint, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { CheckFailed, connectionFailed, UsageError } from "./errors.js";
import { guarded, passwordFromEnv } from "./guard.js";
import {
  addWorkloadOptions,
  CLIENT_PROCESSES_OPTION,
  REPEAT_OPTION,
  workloadFromFlags,
  type WorkloadFlags,
} from "./local-command.js";
import { SLO_OPTIONS, withSlo, type SloFlags } from "./slo-options.js";

interface BenchFlags extends WorkloadFlags, SloFlags {
  target?: NodeEndpoint;
  readTarget?: NodeEndpoint[];
  cluster?: boolean;
  passwordEnv?: string;
  output: string;
  json?: boolean;
  clientProcesses: number;
}

function endpointOf(value: string, flag: string): NodeEndpoint {
  try {
    return parseEndpoint(value);
  } catch (err) {
    throw new UsageError(`${flag}: ${(err as Error).message}`);
  }
}

const target = (value: string): NodeEndpoint => endpointOf(value, "--target");

/** `--read-target host:port[,host:port]`. */
function readTargets(value: string): NodeEndpoint[] {
  const list = value
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "");
  if (list.length === 0) throw new UsageError("--read-target names no endpoint");
  return list.map((x) => endpointOf(x, "--read-target"));
}

export async function runBenchCommand(f: BenchFlags): Promise<void> {
  const endpoint = f.target;
  if (endpoint === undefined) throw new UsageError("bench: --target HOST:PORT is required");
  const workload = withSlo(workloadFromFlags(f, { repeats: true }), f);
  if (f.readTarget !== undefined && workload.reads !== "replicas")
    throw new UsageError("--read-target applies to --reads replicas: give it too");
  if (f.readTarget !== undefined && f.cluster === true)
    throw new UsageError(
      "--read-target applies to replication mode: with --cluster the replicas come from CLUSTER NODES (READONLY connections)",
    );
  const password = passwordFromEnv(f.passwordEnv);
  const known = (err: unknown) => {
    if (err instanceof ConnectionError) return connectionFailed(err);
    if (err instanceof EndpointNotReady) {
      if (err.code === "NO_REPLICAS") return new CheckFailed(err.message);
      return err.code === "CLUSTER_NOT_READY"
        ? new CheckFailed(err.message, err.code)
        : new UsageError(err.message, err.code);
    }
    return undefined;
  };
  await guarded(
    "bench",
    "every benchmark process it started",
    async () => {
      const r = await runEndpointBench({
        target: endpoint,
        cluster: f.cluster === true,
        workload,
        password,
        outputDir: f.output,
        clientProcesses: f.clientProcesses,
        ...(f.readTarget === undefined ? {} : { readTargets: f.readTarget }),
        onProgress: (e) => {
          if (!f.json && e.phase === "done" && e.row)
            process.stderr.write(`${e.row.test}: ${Math.round(e.row.rps)} rps, p50 ${e.row.p50_ms} ms\n`);
        },
      });
      if (!r.topology.ok)
        process.stderr.write(
          `warning: the verifier reports ${r.topology.failures.map((x) => x.code).join(", ")} (see summary.md)\n`,
        );
      if (f.json) {
        process.stdout.write(
          `${JSON.stringify({ ok: true, runDir: r.runDir, report: r.reportPath, topologyOk: r.topology.ok, rows: r.rows, ...(r.mix === undefined ? {} : { mix: r.mix }), ...(r.sloSweep === undefined ? {} : { sloSweep: r.sloSweep }) }, null, 2)}\n`,
        );
      } else {
        process.stdout.write(`\n${r.table}\n\nresults: ${r.runDir}/{results.csv, summary.md, report.html, raw/}\n`);
      }
    },
    known,
  );
}

export function registerBenchCommand(program: Command): void {
  addWorkloadOptions(
    program
      .command("bench")
      .description(
        "benchmark an endpoint you already have with the same pipeline (verify, re-runs, results.csv, summary.md, report.html)",
      ),
    "bench",
    "results.csv",
  )
    .option("--target <host:port>", "the endpoint: a primary, or any cluster node with --cluster", target)
    .option("--cluster", "cluster mode: the client follows the slot map (--cluster)")
    .option(
      "--read-target <host:port,...>",
      "with --reads replicas (replication): where the reads go, e.g. a read endpoint or the replicas at addresses reachable from here (default: the replicas the target lists in INFO replication)",
      readTargets,
    )
    .option(
      "--password-env <name>",
      "the password is in this environment variable (given to the client only through its environment)",
    )
    .option(...CLIENT_PROCESSES_OPTION)
    .option(...REPEAT_OPTION)
    .option(...SLO_OPTIONS.slo)
    .option(...SLO_OPTIONS.steps)
    .option(...SLO_OPTIONS.stepS)
    .option("--output <dir>", "results root (the run writes <dir>/<timestamp>/)", "results")
    .option("--json", "print the rows and paths as JSON on stdout")
    .action(async (flags: BenchFlags) => runBenchCommand(flags));
}
