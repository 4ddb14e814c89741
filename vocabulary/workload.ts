/**
 * The benchmark workload: what valkey-benchmark is asked to do. The seed page's workload is
 * the default everywhere (stack config, local mode, CLI flags).
 */
import type { SloTarget } from "./slo.js";

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

/** Where the read tests of a workload go (`--reads`, `benchmark.reads`). */
export const READ_TARGETS = ["primary", "replicas"] as const;

export type ReadTarget = (typeof READ_TARGETS)[number];

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
  /**
   * Where the read tests (READ_TESTS) go: the primary (primaries), or the replicas (replication:
   * direct or through the read endpoint; cluster: READONLY connections to the replicas).
   * benchmarks/run/replica-reads.ts. @default "primary"
   */
  reads?: ReadTarget;
  /**
   * Throughput at a latency target: after the run, an open-loop rate sweep per topology finds the
   * highest rate whose `percentile` stays within `boundMs` (benchmarks/run/slo-sweep.ts; `--slo`).
   * @default none (no sweep)
   */
  slo?: SloTarget;
  /** The sweep's rate steps (1/n … 100 % of the closed-loop ceiling). @default DEFAULT_SLO_STEPS (vocabulary/slo.ts) */
  sloSteps?: number;
  /** Seconds per sweep step. @default DEFAULT_SLO_STEP_SECONDS (vocabulary/slo.ts) */
  sloStepSeconds?: number;
  /**
   * Runs of every test (or of the mix), interleaved with the other measurements (A B A B, never
   * all of one first); every row is then the median of its runs with their min–max
   * (benchmarks/run/run-spread.ts). A soak runs once ({@link runsOf}). @default 1
   */
  repeat?: number;
}

/** `--repeat` and `benchmark.repeat` when not given: three runs of every measurement (a soak: one). */
export const DEFAULT_REPEAT = 3;

/** `repeat` as given, else the default: DEFAULT_REPEAT runs, one for a soak. */
export function repeatOrDefault(repeat: number | undefined, soak: boolean): number {
  return repeat ?? (soak ? 1 : DEFAULT_REPEAT);
}

/**
 * How many runs the workload's measurements get: `repeat`, but one for a soak (its figure is the series, and it runs
 * for hours).
 */
export function runsOf(w: Pick<Workload, "repeat" | "soak">): number {
  return w.soak !== undefined ? 1 : (w.repeat ?? 1);
}

/**
 * The problem with running a soak more than once, or undefined: shared by `--repeat` and `benchmark.repeat`, which
 * prefix the key.
 */
export function repeatProblem(repeat: number | undefined, soak: boolean): string | undefined {
  return soak && repeat !== undefined && repeat > 1
    ? `${repeat} runs of a soak: a soak runs once (its figure is the sampled series); give 1 or leave it out`
    : undefined;
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

/**
 * The tests whose command only reads, so a replica can serve it (`--reads replicas` sends these,
 * and only these, to the replicas): GET and the LRANGEs. Every other test writes (or, PING,
 * reads no data).
 */
export const READ_TESTS: readonly BenchmarkTest[] = Object.freeze([
  "get",
  "lrange_100",
  "lrange_300",
  "lrange_500",
  "lrange_600",
] as BenchmarkTest[]);

/**
 * The commands of READ_TESTS as `INFO commandstats` names them: a replica's calls of these are reads it served, never
 * its primary's write stream.
 */
export const READ_COMMANDS: ReadonlySet<string> = new Set(READ_TESTS.map((t) => BENCHMARK_TEST_COMMANDS[t]));

export function isReadTest(test: BenchmarkTest): boolean {
  return READ_TESTS.includes(test);
}

/**
 * The problem with reading from `reads` for these tests (or this mix), or undefined: reads on
 * the replicas need a read test to send there. With tests (no mix) that is GET alone:
 * valkey-benchmark fills the list with LPUSH before an LRANGE test, a write a replica refuses,
 * so an LRANGE goes to the replicas only in a mix (the generator). Shared by `--reads` and
 * `benchmark.reads`, which prefix the key.
 */
export function readsProblem(
  reads: ReadTarget,
  tests: readonly BenchmarkTest[],
  mix?: readonly { test: string }[],
): string | undefined {
  if (reads !== "replicas") return undefined;
  if (mix !== undefined)
    return mix.some((e) => isReadTest(e.test as BenchmarkTest))
      ? undefined
      : `replicas needs a read command in the mix (${READ_TESTS.join(", ")}), and ${mix.map((e) => e.test).join(",")} has none`;
  const lists = tests.filter((t) => isReadTest(t) && t !== "get");
  if (lists.length > 0)
    return `replicas: ${lists.join(", ")} cannot run on a replica as a test (valkey-benchmark first fills the list with LPUSH, a write a replica refuses); read it from the replicas in a mix instead (e.g. lpush:20,${lists[0] ?? ""}:80)`;
  return tests.includes("get")
    ? undefined
    : `replicas needs the get test to send to the replicas, and the tests (${tests.join(",")}) have none`;
}

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
    else if (earlier !== undefined)
      problems.push(
        `${earlier} and ${e.test} both send ${command.toUpperCase()}: the server cannot tell them apart, give one`,
      );
    seen.set(command, e.test);
  }
  const sum = entries.reduce((n, e) => n + e.percent, 0);
  if (problems.length === 0 && sum !== 100)
    problems.push(`shares sum to ${sum}, not 100 (${entries.map((e) => `${e.test}:${e.percent}`).join(",")})`);
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
