/**
 * The benchmark workload: what valkey-benchmark is asked to do. The seed page's workload is
 * the default everywhere (stack config, local mode, CLI flags).
 */

/** Test names valkey-benchmark accepts with `-t` (lower case, as the tool prints them in --csv output upper case). */
export const BENCHMARK_TESTS = [
  "ping_inline",
  "ping_mbulk",
  "set",
  "get",
  "incr",
  "lpush",
  "rpush",
  "lpop",
  "rpop",
  "sadd",
  "hset",
  "spop",
  "zadd",
  "zpopmin",
  "lrange_100",
  "lrange_300",
  "lrange_500",
  "lrange_600",
  "mset",
  "xadd",
] as const;

export type BenchmarkTest = (typeof BENCHMARK_TESTS)[number];

export interface Workload {
  /** Tag written in results.csv's `workload` column. */
  name: string;
  /** `-n`: requests per test. */
  requests: number;
  /** `-c`: parallel client connections. */
  clients: number;
  /** `-P`: pipeline depth. */
  pipeline: number;
  /** `-d`: value size in bytes. */
  dataSize: number;
  /** `--threads`: benchmark client threads. */
  threads: number;
  /** `-r`: randomize keys over this many key names. */
  keyspaceLength: number;
  /** `-t`: the tests to run, in order. */
  tests: BenchmarkTest[];
  /**
   * A test that finishes faster than this is re-run with a request count scaled from its
   * measured rate, because sub-second runs give quantised rps figures.
   */
  minDurationSeconds: number;
  /** Upper bound on the scaled request count of a re-run. */
  maxRequests: number;
}

/** The seed page's workload: `-n 500000 -c 50 -P 16 -d 256 --threads 4 -r 1000000 -t set,get,incr`. */
export const SEED_WORKLOAD: Readonly<Workload> = Object.freeze<Workload>({
  name: "seed",
  requests: 500_000,
  clients: 50,
  pipeline: 16,
  dataSize: 256,
  threads: 4,
  keyspaceLength: 1_000_000,
  tests: ["set", "get", "incr"],
  minDurationSeconds: 5,
  maxRequests: 50_000_000,
});
