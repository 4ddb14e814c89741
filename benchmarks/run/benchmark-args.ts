/**
 * The benchmark client's command line. valkey-benchmark and redis-benchmark (≥ 7) take the
 * same flags. A password never appears here: argv is world-readable in the process list, so
 * the runner passes credentials through the child's environment only.
 */
import { isReadTest, type BenchmarkTest, type Workload } from "../../vocabulary/workload.js";

export interface BenchmarkTarget {
  host: string;
  port: number;
  /** Adds `--cluster`: the client discovers the primaries and routes keys by slot. */
  cluster: boolean;
}

function positiveInt(name: string, value: number): string {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a whole number ≥ 1 (got ${value})`);
  return String(value);
}

function targetArgs(target: BenchmarkTarget): string[] {
  if (target.host.trim() === "" || target.host.startsWith("-"))
    throw new RangeError(`invalid benchmark host '${target.host}'`);
  const args = ["-h", target.host, "-p", positiveInt("port", target.port)];
  if (target.cluster) args.push("--cluster");
  return args;
}

/**
 * The first valkey-benchmark with `--rfr <no|yes|all>` (read from replicas, cluster mode only:
 * `yes` connects to the replicas alone and sends them READONLY; valkey-io/valkey#1392, Valkey
 * 8.1). redis-benchmark has no such flag.
 */
export const RFR_MIN_VERSION = { major: 8, minor: 1 } as const;

/** Whether this benchmark client reads from replicas in cluster mode (`--rfr`). */
export function supportsReadFromReplicas(client: { flavor: "valkey" | "redis"; version: string }): boolean {
  const m = /^(\d+)\.(\d+)/.exec(client.version);
  if (client.flavor !== "valkey" || m === null) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > RFR_MIN_VERSION.major || (major === RFR_MIN_VERSION.major && minor >= RFR_MIN_VERSION.minor);
}

/**
 * `-h -p [--cluster [--rfr yes]] -n -c -P -d --threads -r -t <test> --csv` for one test of `w`,
 * with `requests` in place of `w.requests` (the runner scales it for re-runs). `--rfr yes` only
 * for a read test of a workload reading from the replicas in cluster mode: a write test sent to
 * the replicas would be answered with MOVED. Outside cluster mode the replicas are the target.
 */
export function buildBenchmarkArgs(
  w: Workload,
  target: BenchmarkTarget,
  test: BenchmarkTest,
  requests: number,
): string[] {
  const rfr = target.cluster && w.reads === "replicas" && isReadTest(test) ? ["--rfr", "yes"] : [];
  return [
    ...targetArgs(target),
    ...rfr,
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
