/**
 * The benchmark client's command line. valkey-benchmark and redis-benchmark (≥ 7) take the
 * same flags. A password never appears here: argv is world-readable in the process list, so
 * the runner passes credentials through the child's environment only.
 */
import type { BenchmarkTest, Workload } from "../../vocabulary/workload.js";

export interface BenchmarkTarget {
  host: string;
  port: number;
  /** Adds `--cluster`: the client discovers the primaries and routes keys by slot. */
  cluster: boolean;
}

function positiveInt(name: string, value: number): string {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a whole number ≥ 1 (got ${value})`);
  return String(value);
}

function targetArgs(target: BenchmarkTarget): string[] {
  if (target.host.trim() === "" || target.host.startsWith("-")) throw new RangeError(`invalid benchmark host '${target.host}'`);
  const args = ["-h", target.host, "-p", positiveInt("port", target.port)];
  if (target.cluster) args.push("--cluster");
  return args;
}

/**
 * `-h -p [--cluster] -n -c -P -d --threads -r -t <test> --csv` for one test of `w`, with
 * `requests` in place of `w.requests` (the runner scales it for re-runs).
 */
export function buildBenchmarkArgs(w: Workload, target: BenchmarkTarget, test: BenchmarkTest, requests: number): string[] {
  return [
    ...targetArgs(target),
    "-n",
    positiveInt("requests", requests),
    "-c",
    positiveInt("clients", w.clients),
    "-P",
    positiveInt("pipeline", w.pipeline),
    "-d",
    positiveInt("dataSize", w.dataSize),
    "--threads",
    positiveInt("threads", w.threads),
    "-r",
    positiveInt("keyspaceLength", w.keyspaceLength),
    "-t",
    test,
    "--csv",
  ];
}

/**
 * One PING from one connection: enough to learn whether the client reaches and authenticates
 * to the target before the real run (`-t ping` runs PING_INLINE and PING_MBULK).
 */
export function buildProbeArgs(target: BenchmarkTarget): string[] {
  return [...targetArgs(target), "-n", "1", "-c", "1", "-t", "ping", "--csv"];
}
