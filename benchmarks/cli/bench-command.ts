/**
 * `vbench bench --target HOST:PORT [--cluster] [--password-env NAME] [workload flags] [--json]
 * [--output DIR]`: the local comparison's pipeline (verify, benchmark with re-runs, results.csv,
 * summary.md, report.html) against an endpoint you already have, so it can go side by side with
 * this stack in one report (`vbench report --from dirA --from dirB`).
 *
 * Exit 0 done, 1 the run failed, 2 bad flags or an unreachable endpoint.
 */
import type { Command } from "commander";
import { runEndpointBench } from "../run/endpoint-bench.js";
import { ConnectionError } from "../topology/connector.js";
import { parseEndpoint, type NodeEndpoint } from "../topology/endpoint.js";
import { onTerminatingSignal } from "../util/process-reaper.js";
import { SEED_WORKLOAD } from "../workload.js";
import { nonNegativeNumber, positiveInt, RunFailed, UsageError } from "./errors.js";
import { workloadFromFlags, type WorkloadFlags } from "./local-command.js";

interface BenchFlags extends WorkloadFlags {
  target?: NodeEndpoint;
  cluster?: boolean;
  passwordEnv?: string;
  output: string;
  json?: boolean;
  clientProcesses: number;
}

function target(value: string): NodeEndpoint {
  try {
    return parseEndpoint(value);
  } catch (err) {
    throw new UsageError(`--target: ${(err as Error).message}`);
  }
}

export async function runBenchCommand(f: BenchFlags): Promise<void> {
  if (f.target === undefined) throw new UsageError("bench: --target HOST:PORT is required");
  const workload = workloadFromFlags(f);
  let password: string | undefined;
  if (f.passwordEnv !== undefined) {
    password = process.env[f.passwordEnv];
    if (password === undefined || password === "") throw new UsageError(`--password-env ${f.passwordEnv}: that environment variable is not set`);
  }
  const unhook = onTerminatingSignal((sig) => process.stderr.write(`\nvbench bench: ${sig}: stopped every benchmark process it started\n`));
  try {
    const r = await runEndpointBench({
      target: f.target,
      cluster: f.cluster === true,
      workload,
      password,
      outputDir: f.output,
      clientProcesses: f.clientProcesses,
      onProgress: (e) => {
        if (!f.json && e.phase === "done" && e.row) process.stderr.write(`${e.row.test}: ${Math.round(e.row.rps)} rps, p50 ${e.row.p50_ms} ms\n`);
      },
    });
    if (!r.topology.ok) process.stderr.write(`warning: the verifier reports ${r.topology.failures.map((x) => x.code).join(", ")} (see summary.md)\n`);
    if (f.json) {
      process.stdout.write(`${JSON.stringify({ ok: true, runDir: r.runDir, report: r.reportPath, topologyOk: r.topology.ok, rows: r.rows }, null, 2)}\n`);
    } else {
      process.stdout.write(`\n${r.table}\n\nresults: ${r.runDir}/{results.csv, summary.md, report.html, raw/}\n`);
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    if (err instanceof ConnectionError) throw new UsageError(err.message);
    throw new RunFailed((err as Error).message, { cause: err });
  } finally {
    unhook();
  }
}

export function registerBenchCommand(program: Command): void {
  const d = SEED_WORKLOAD;
  program
    .command("bench")
    .description("benchmark an endpoint you already have with the same pipeline (verify, re-runs, results.csv, summary.md, report.html)")
    .option("--target <host:port>", "the endpoint: a primary, or any cluster node with --cluster", target)
    .option("--cluster", "cluster mode: the client follows the slot map (--cluster)")
    .option("--password-env <name>", "the password is in this environment variable (given to the client only through its environment)")
    .option("--tests <csv>", "valkey-benchmark -t tests", d.tests.join(","))
    .option("--requests <n>", "-n: requests per test", positiveInt("--requests"), d.requests)
    .option("--min-duration <seconds>", "re-run a test that finished faster than this, with more requests", nonNegativeNumber("--min-duration"), d.minDurationSeconds)
    .option("--max-requests <n>", "cap on a re-run's request count", positiveInt("--max-requests"), d.maxRequests)
    .option("--clients <n>", "-c: parallel connections", positiveInt("--clients"), d.clients)
    .option("--pipeline <n>", "-P: pipeline depth", positiveInt("--pipeline"), d.pipeline)
    .option("--datasize <bytes>", "-d: value size", positiveInt("--datasize"), d.dataSize)
    .option("--threads <n>", "--threads: client threads", positiveInt("--threads"), d.threads)
    .option("--keyspace-len <n>", "-r: random keys over this many names", positiveInt("--keyspace-len"), d.keyspaceLength)
    .option("--workload-name <name>", "results.csv workload column", "bench")
    .option("--client-processes <n>", "benchmark processes per test, started together (rps summed, worst client's percentiles)", positiveInt("--client-processes"), 1)
    .option("--output <dir>", "results root (the run writes <dir>/<timestamp>/)", "results")
    .option("--json", "print the rows and paths as JSON on stdout")
    .action(async (flags: BenchFlags) => runBenchCommand(flags));
}
