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
  /**
   * A mixed workload instead of `tests`: these commands interleaved in these shares on every
   * connection for `durationSeconds` (benchmarks/run/mix-runner.ts). @default none (the tests run one by one)
   */
  mix?: MixEntry[];
  /** How long a mix runs. @default 30 */
  durationSeconds?: number;
  /**
   * Open loop: a mix sends this many requests per second in total, each at its intended time
   * whatever the replies, and measures latency from that intended time (no coordinated omission;
   * benchmarks/run/open-loop.ts). @default none (closed loop: `pipeline` requests in flight per connection)
   */
  rate?: number;
  /**
   * Soak: a mix also samples every `sampleSeconds` the window's rps and latency percentiles and
   * every member's INFO (memory, fragmentation, AOF rewrites and fork time, replica links, full
   * syncs), and flags events in the series (benchmarks/run/soak-sampler.ts). @default none
   */
  soak?: { sampleSeconds: number };
}

/** A mix's `durationSeconds` when the workload gives none. */
export const DEFAULT_MIX_DURATION_SECONDS = 30;

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

/**
 * The server command each test sends, as `INFO commandstats` names it (`cmdstat_<name>`): the one
 * table a mixed workload's served ratio is checked against. Tests that send the same command
 * (the two PINGs, the four LRANGEs) cannot be told apart by the server, so a mix takes one of each.
 */
export const BENCHMARK_TEST_COMMANDS: Readonly<Record<BenchmarkTest, string>> = Object.freeze({
  ping_inline: "ping",
  ping_mbulk: "ping",
  set: "set",
  get: "get",
  incr: "incr",
  lpush: "lpush",
  rpush: "rpush",
  lpop: "lpop",
  rpop: "rpop",
  sadd: "sadd",
  hset: "hset",
  spop: "spop",
  zadd: "zadd",
  zpopmin: "zpopmin",
  lrange_100: "lrange",
  lrange_300: "lrange",
  lrange_500: "lrange",
  lrange_600: "lrange",
  mset: "mset",
  xadd: "xadd",
});

/** One command of a mixed workload and its share of the requests, in percent (whole numbers, summing to 100). */
export interface MixEntry {
  test: BenchmarkTest;
  percent: number;
}

/**
 * The problems of a mix, each naming the command at fault (empty when valid): unknown test,
 * a share that is not a whole number from 1 to 100, a test given twice (or two tests the server
 * counts as one command), shares not summing to 100. Shared by the CLI (`--mix`) and the stack
 * config (`benchmark.mix`), which prefix the key.
 */
export function mixProblems(entries: readonly { test: string; percent: number }[]): string[] {
  const problems: string[] = [];
  if (entries.length === 0) return ["names no command (e.g. get:80,set:20)"];
  const seen = new Map<string, string>();
  for (const e of entries) {
    if (!(BENCHMARK_TESTS as readonly string[]).includes(e.test)) {
      problems.push(`unknown command '${e.test}' (known: ${BENCHMARK_TESTS.join(", ")})`);
      continue;
    }
    if (!Number.isInteger(e.percent) || e.percent < 1 || e.percent > 100)
      problems.push(`${e.test}: share must be a whole percent from 1 to 100 (got ${e.percent})`);
    const command = BENCHMARK_TEST_COMMANDS[e.test as BenchmarkTest];
    const earlier = seen.get(command);
    if (earlier === e.test) problems.push(`${e.test} is given twice`);
    else if (earlier !== undefined) problems.push(`${earlier} and ${e.test} both send ${command.toUpperCase()}: the server cannot tell them apart, give one`);
    seen.set(command, e.test);
  }
  const sum = entries.reduce((n, e) => n + e.percent, 0);
  if (problems.length === 0 && sum !== 100) problems.push(`shares sum to ${sum}, not 100 (${entries.map((e) => `${e.test}:${e.percent}`).join(",")})`);
  return problems;
}

/** Parses `get:80,set:20` (no validation beyond the syntax; see mixProblems). */
export function parseMixText(text: string): { test: string; percent: number }[] {
  return text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .map((p) => {
      const m = /^([A-Za-z_0-9]+)\s*:\s*(\S+)$/.exec(p);
      if (m === null) return { test: p.toLowerCase(), percent: Number.NaN };
      return { test: (m[1] as string).toLowerCase(), percent: Number(m[2]) };
    });
}
