/**
 * `vbench local`: the seed's side-by-side comparison on this machine (see
 * local/local-comparison.ts). Progress goes to stderr, the table (or --json) to stdout.
 */
import { join } from "node:path";
import { CLIENT_ZONES, type ClientZones } from "../../benchmarks/cost/transfer.js";
import type { Command } from "commander";
import { Listr, ListrLogger, ProcessOutput } from "listr2";
import { FAULTS, parseFaults, type Fault } from "../../vocabulary/faults.js";
import {
  runLocalComparison,
  TopologyCheckError,
  type LocalComparisonOptions,
  type LocalComparisonResult,
  type ProgressRunner,
} from "./local-comparison.js";
import { findChromium } from "../../benchmarks/report/browser-check.js";
import {
  BENCHMARK_TESTS,
  DEFAULT_MIX_DURATION_SECONDS,
  DEFAULT_REPEAT,
  mixProblems,
  parseMixText,
  READ_TARGETS,
  READ_TESTS,
  readsProblem,
  repeatProblem,
  SEED_WORKLOAD,
  type BenchmarkTest,
  type MixEntry,
  type ReadTarget,
  type Workload,
} from "../../vocabulary/workload.js";
import { CheckFailed, durationSpan, nonNegativeInt, nonNegativeNumber, positiveInt, UsageError } from "./errors.js";
import { guarded, passwordFromEnv } from "./guard.js";
import { screenshotReport } from "./report-command.js";
import { RUNS_FILE } from "../../benchmarks/run/repeated-runs.js";
import { SLO_OPTIONS, withSlo, type SloFlags } from "./slo-options.js";

interface LocalFlags extends SloFlags {
  tests: string;
  requests: number;
  minDuration: number;
  maxRequests: number;
  clients: number;
  pipeline: number;
  datasize: number;
  threads: number;
  keyspaceLen: number;
  workloadName: string;
  replicas: number;
  primaries: number;
  replicasPerPrimary: number;
  zones: string;
  ioThreads: number;
  clientProcesses: number;
  output: string;
  passwordEnv?: string;
  json?: boolean;
  quiet?: boolean;
  screenshot: boolean;
  drills?: string;
  metrics?: boolean;
  mix?: string;
  durationS?: number;
  /** Open loop for a mix: requests per second, each sent at its intended time. */
  rate?: number;
  /** `--duration 3h`: the mix's duration as a span, in seconds (instead of --duration-s). */
  duration?: number;
  /** Soak: seconds between samples. */
  sampleS?: number;
  /** Where the read tests go: primary (default) or replicas. */
  reads?: string;
  /** Runs of every measurement (`--repeat`, local and bench). @default DEFAULT_REPEAT (a soak: 1) */
  repeat?: number;
  /** Data transfer: where the clients are (spread or primary). */
  clientZones: string;
}

/** Parses `--client-zones spread|primary` (the data transfer's client placement, config `cost.clientZones`). */
export function parseClientZones(text: string): ClientZones {
  if (!(CLIENT_ZONES as readonly string[]).includes(text))
    throw new UsageError(`--client-zones: '${text}' is not one of ${CLIENT_ZONES.join(", ")}`);
  return text as ClientZones;
}

/** Parses `--tests set,get,incr`, naming any test valkey-benchmark does not know. */
export function parseTests(text: string): BenchmarkTest[] {
  const names = text
    .split(",")
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== "");
  if (names.length === 0) throw new UsageError("--tests names no test");
  const unknown = names.filter((t) => !(BENCHMARK_TESTS as readonly string[]).includes(t));
  if (unknown.length > 0)
    throw new UsageError(`--tests: unknown test(s) ${unknown.join(", ")} (known: ${BENCHMARK_TESTS.join(", ")})`);
  return names as BenchmarkTest[];
}

function parseZones(text: string): string[] {
  const zones = text
    .split(",")
    .map((z) => z.trim())
    .filter((z) => z !== "");
  if (zones.length === 0) throw new UsageError("--zones names no zone");
  if (new Set(zones).size !== zones.length) throw new UsageError(`--zones repeats a zone (${text})`);
  return zones;
}

/** The workload flags `vbench local` and `vbench sweep` share. */
export type WorkloadFlags = Pick<
  LocalFlags,
  | "tests"
  | "requests"
  | "minDuration"
  | "maxRequests"
  | "clients"
  | "pipeline"
  | "datasize"
  | "threads"
  | "keyspaceLen"
  | "workloadName"
  | "mix"
  | "durationS"
  | "rate"
  | "duration"
  | "sampleS"
  | "reads"
  | "repeat"
>;

/** Parses `--mix get:80,set:20`, naming every problem (mixProblems). */
export function parseMix(text: string): MixEntry[] {
  const entries = parseMixText(text);
  const problems = mixProblems(entries);
  if (problems.length > 0) throw new UsageError(`--mix: ${problems.join("; ")}`);
  return entries as MixEntry[];
}

/** Parses `--reads primary|replicas`. */
export function parseReads(text: string | undefined): ReadTarget {
  if (text === undefined) return "primary";
  const t = text.trim().toLowerCase();
  if (!(READ_TARGETS as readonly string[]).includes(t))
    throw new UsageError(`--reads: '${text}' is not one of ${READ_TARGETS.join(", ")}`);
  return t as ReadTarget;
}

/**
 * The workload the flags give. `repeats`: the command runs every measurement `--repeat` times
 * (local, bench), so the workload carries `repeat` (DEFAULT_REPEAT when not given; a soak 1);
 * other commands (sweep) run once and carry none.
 */
export function workloadFromFlags(f: WorkloadFlags, o: { repeats?: boolean } = {}): Workload {
  const reads = parseReads(f.reads);
  const repeatWrong = repeatProblem(f.repeat, f.sampleS !== undefined);
  if (repeatWrong !== undefined) throw new UsageError(`--repeat ${repeatWrong}`);
  const repeat = o.repeats === true ? (f.repeat ?? (f.sampleS === undefined ? DEFAULT_REPEAT : 1)) : undefined;
  if (f.durationS !== undefined && f.mix === undefined && reads !== "replicas")
    throw new UsageError(
      "--duration-s applies to a mix (or to the generator's reads with --reads replicas): give --mix too",
    );
  if (f.rate !== undefined && f.mix === undefined)
    throw new UsageError("--rate applies to a mix (open loop): give --mix too, e.g. --mix set:100");
  if (f.duration !== undefined && f.durationS !== undefined)
    throw new UsageError("--duration and --duration-s both give a mix's duration: give one");
  if (f.duration !== undefined && f.mix === undefined)
    throw new UsageError("--duration applies to a mix: give --mix too");
  if (f.sampleS !== undefined && f.mix === undefined)
    throw new UsageError("--sample-s applies to a mix (soak): give --mix too, e.g. --mix get:80,set:20");
  const durationSeconds = f.durationS ?? f.duration;
  const soakDuration = durationSeconds ?? DEFAULT_MIX_DURATION_SECONDS;
  if (f.sampleS !== undefined && 2 * f.sampleS > soakDuration)
    throw new UsageError(
      `--sample-s ${f.sampleS} leaves fewer than two samples in the mix's ${soakDuration} s (--duration-s or --duration)`,
    );
  if (f.maxRequests < f.requests)
    throw new UsageError(`--max-requests (${f.maxRequests}) must be ≥ --requests (${f.requests})`);
  const tests = parseTests(f.tests);
  const mix = f.mix === undefined ? undefined : parseMix(f.mix);
  const readsWrong = readsProblem(reads, tests, mix);
  if (readsWrong !== undefined) throw new UsageError(`--reads ${readsWrong}`);
  return {
    name: f.workloadName,
    requests: f.requests,
    clients: f.clients,
    pipeline: f.pipeline,
    dataSize: f.datasize,
    threads: f.threads,
    keyspaceLength: f.keyspaceLen,
    tests,
    minDurationSeconds: f.minDuration,
    maxRequests: f.maxRequests,
    ...(mix === undefined ? {} : { mix }),
    ...(reads === "primary" ? {} : { reads }),
    ...(durationSeconds === undefined ? {} : { durationSeconds }),
    ...(f.rate === undefined ? {} : { rate: f.rate }),
    ...(f.sampleS === undefined ? {} : { soak: { sampleSeconds: f.sampleS } }),
    ...(repeat === undefined ? {} : { repeat }),
  };
}

/** listr2 on stderr: a live task list on a terminal, one line per update otherwise. */
function listrProgress(quiet: boolean): ProgressRunner {
  return async (steps) => {
    const processOutput = new ProcessOutput(process.stderr, process.stderr);
    const list = new Listr(
      steps.map((s) => ({
        title: s.title,
        task: async (_ctx: unknown, task: { output: string }) => {
          await s.run((line) => {
            task.output = line;
          });
        },
      })),
      {
        concurrent: false,
        exitOnError: true,
        registerSignalListeners: false,
        renderer: quiet ? "silent" : "default",
        fallbackRenderer: quiet ? "silent" : "simple",
        rendererOptions: { logger: new ListrLogger({ processOutput }) },
        fallbackRendererOptions: { logger: new ListrLogger({ processOutput }) },
      },
    );
    await list.run();
  };
}

/**
 * `vbench local`'s own defaults, against the seed's (-n 500000, 5 s): three interleaved runs of
 * every measurement (DEFAULT_REPEAT) in about the time one run of the seed's took here, each test
 * re-run until its window is at least 2 s (the minimum exists for the tool's rps quantisation:
 * whole 250 ms ticks with --threads ≥ 2, so at most one tick in eight) and starting from fewer
 * requests (a later run starts where its previous run ended). docs/report-and-sweep.md says what
 * this buys, measured.
 */
export const LOCAL_WORKLOAD_DEFAULTS: Readonly<Pick<Workload, "requests" | "minDurationSeconds">> = Object.freeze({
  requests: 100_000,
  minDurationSeconds: 2,
});

/**
 * The workload flags every benchmarking command shares (`local`, `bench`, `sweep`), with the seed
 * workload's defaults (or `defaults` over them); `workloadName` is the default of the CSV's
 * workload column.
 */
export function addWorkloadOptions(
  command: Command,
  workloadName: string,
  csv: string,
  defaults: Partial<Pick<Workload, "requests" | "minDurationSeconds">> = {},
): Command {
  const d = { ...SEED_WORKLOAD, ...defaults };
  return command
    .option("--tests <csv>", "valkey-benchmark -t tests", d.tests.join(","))
    .option("--requests <n>", "-n: requests per test", positiveInt("--requests"), d.requests)
    .option(
      "--min-duration <seconds>",
      "re-run a test that finished faster than this, with more requests",
      nonNegativeNumber("--min-duration"),
      d.minDurationSeconds,
    )
    .option("--max-requests <n>", "cap on a re-run's request count", positiveInt("--max-requests"), d.maxRequests)
    .option("--clients <n>", "-c: parallel connections", positiveInt("--clients"), d.clients)
    .option("--pipeline <n>", "-P: pipeline depth", positiveInt("--pipeline"), d.pipeline)
    .option("--datasize <bytes>", "-d: value size", positiveInt("--datasize"), d.dataSize)
    .option("--threads <n>", "--threads: client threads", positiveInt("--threads"), d.threads)
    .option(
      "--keyspace-len <n>",
      "-r: random keys over this many names",
      positiveInt("--keyspace-len"),
      d.keyspaceLength,
    )
    .option("--workload-name <name>", `${csv} workload column`, workloadName)
    .option(
      "--mix <shares>",
      "a mixed workload instead of --tests, e.g. get:80,set:20 (whole percents summing to 100; ioredis load generator, served shares checked with INFO commandstats)",
    )
    .option(
      "--duration-s <seconds>",
      "how long a --mix runs (default 30); with --reads replicas, how long the generator runs each read test in cluster mode (default --min-duration)",
      positiveInt("--duration-s"),
    )
    .option(
      "--duration <span>",
      "how long a --mix runs, as a span: 3h, 90m, 1h30m, 45s (instead of --duration-s)",
      durationSpan("--duration"),
    )
    .option(
      "--sample-s <seconds>",
      "soak a --mix: every N seconds sample the window's rps and latency percentiles and every member's INFO (memory, fragmentation, AOF rewrites, fork time, replica links, full syncs); events flagged in summary.md and the report",
      positiveInt("--sample-s"),
    )
    .option(
      "--rate <ops/s>",
      "open loop for a --mix: this many requests per second in total, each sent at its intended time, latency measured from that time (no coordinated omission)",
      positiveInt("--rate"),
    )
    .option(
      "--reads <where>",
      `where the read tests (${READ_TESTS.join(", ")}) go: primary, or replicas (adds the read scale-out rows: on the replicas vs on the primary, who served them checked with INFO commandstats)`,
      "primary",
    );
}

/** `--repeat N` (local and bench): runs of every measurement, interleaved; rows are medians with min–max. */
export const REPEAT_OPTION = [
  "--repeat <n>",
  `runs of every test (or mix), interleaved with the other measurements (A B A B); each row is the median of its runs with their min–max (default ${DEFAULT_REPEAT}; a soak runs once)`,
  positiveInt("--repeat"),
] as const;

/** `--client-processes N` (local, bench and sweep): benchmark processes per test, started together. */
export const CLIENT_PROCESSES_OPTION = [
  "--client-processes <n>",
  "benchmark processes per test, started together (rps summed, worst client's percentiles)",
  positiveInt("--client-processes"),
  1,
] as const;

export function registerLocalCommand(program: Command): void {
  addLocalOptions(
    addWorkloadOptions(
      program
        .command("local")
        .description(
          "start replication (1 + N) and cluster (P × (1 + M)) topologies on 127.0.0.1 with real valkey-server processes, " +
            "verify them, run the same workload on both, write results/<timestamp>/ and print the side-by-side table",
        ),
      "local",
      "results.csv",
      LOCAL_WORKLOAD_DEFAULTS,
    ),
  ).action(localAction);
}

/** The options only `vbench local` has: both topologies' shapes, zones, repeats, SLO, output, drills. */
function addLocalOptions(command: Command): Command {
  return command
    .option("--replicas <n>", "replication mode: replicas of the primary", nonNegativeInt("--replicas"), 3)
    .option("--primaries <n>", "cluster mode: primaries", positiveInt("--primaries"), 3)
    .option(
      "--replicas-per-primary <n>",
      "cluster mode: replicas per primary",
      nonNegativeInt("--replicas-per-primary"),
      1,
    )
    .option("--zones <csv>", "zone names assigned round-robin to the nodes", "zone-a,zone-b,zone-c")
    .option("--io-threads <n>", "valkey-server io-threads", positiveInt("--io-threads"), 1)
    .option(
      "--client-zones <where>",
      "data transfer: the clients spread evenly over the zones, or all in the primary's zone (cluster: the zone of the most primaries)",
      "spread",
    )
    .option(...CLIENT_PROCESSES_OPTION)
    .option(...REPEAT_OPTION)
    .option(...SLO_OPTIONS.slo)
    .option(...SLO_OPTIONS.steps)
    .option(...SLO_OPTIONS.stepS)
    .option("--output <dir>", "results root (the run writes <dir>/<timestamp>/)", "results")
    .option(
      "--password-env <name>",
      "servers require the password in this env var (the benchmark client must read it from its environment)",
    )
    .option("--json", "print the result rows and paths as JSON on stdout")
    .option("--quiet", "no progress display")
    .option(
      "--drills <faults>",
      `append failure drills in both modes: any of ${FAULTS.join(",")} (drills.csv, summary.md, terminal)`,
    )
    .option(
      "--metrics",
      "watch the drills with live metrics (exporters, HAProxy's endpoint, a real Prometheus with the alert rules): each drill row records the alerts that fired (needs --drills; not with the cluster all fault)",
    )
    .option(
      "--no-screenshot",
      "do not open report.html in headless Chromium for report.png (skipped anyway when no Chromium is found)",
    );
}

/**
 * `vbench local`'s action: flags checked (usage errors before anything starts), the comparison run, its result printed.
 */
async function localAction(flags: LocalFlags): Promise<void> {
  const options = localComparisonOptions(flags);
  const known = (err: unknown) => (err instanceof TopologyCheckError ? new CheckFailed(err.message) : undefined);
  await guarded(
    "local",
    "every server and benchmark process it started",
    async () => {
      const result = await runLocalComparison(options, listrProgress(flags.quiet === true || flags.json === true));
      await printLocalResult(flags, result);
    },
    known,
  );
}

/** The comparison's options from the flags; throws UsageError for a flag that cannot run. */
function localComparisonOptions(flags: LocalFlags): LocalComparisonOptions {
  const workload = withSlo(workloadFromFlags(flags, { repeats: true }), flags);
  if (workload.reads === "replicas" && (flags.replicas < 1 || flags.replicasPerPrimary < 1))
    throw new UsageError(
      `--reads replicas needs replicas to read from: --replicas ${flags.replicas}, --replicas-per-primary ${flags.replicasPerPrimary} (both ≥ 1)`,
    );
  const zones = parseZones(flags.zones);
  const clientZones = parseClientZones(flags.clientZones);
  let drills: Fault[] | undefined;
  if (flags.drills !== undefined) {
    try {
      drills = parseFaults(flags.drills);
    } catch (err) {
      throw new UsageError(`--drills: ${(err as Error).message}`);
    }
  }
  if (flags.metrics === true && drills === undefined)
    throw new UsageError("--metrics watches the drills: give --drills too");
  const password = passwordFromEnv(flags.passwordEnv);
  return {
    workload,
    replicas: flags.replicas,
    primaries: flags.primaries,
    replicasPerPrimary: flags.replicasPerPrimary,
    zones,
    outputDir: flags.output,
    ioThreads: flags.ioThreads,
    clientProcesses: flags.clientProcesses,
    password,
    drills,
    ...(flags.metrics === true ? { drillMetrics: true } : {}),
    clientZones,
  };
}

/** report.png when asked for and Chromium is found; then the JSON (--json) or the table and the files written. */
async function printLocalResult(flags: LocalFlags, result: LocalComparisonResult): Promise<void> {
  const shot =
    flags.screenshot && findChromium() !== undefined
      ? (await screenshotReport(result.reportPath)).screenshot
      : undefined;
  if (flags.json) {
    const paths = {
      report: result.reportPath,
      screenshot: shot ?? null,
      runs: join(result.runDir, "raw", RUNS_FILE),
    };
    const drillFigures = result.drills.map(({ timeline: _t, ...rest }) => rest);
    process.stdout.write(
      `${JSON.stringify({ ok: true, runDir: result.runDir, ...paths, versions: result.versions, rows: result.rows, drills: drillFigures, sloSweeps: result.sloSweeps }, null, 2)}\n`,
    );
  } else {
    const files = `results.csv, ${result.drills.length > 0 ? "drills.csv, " : ""}summary.md, report.html${shot ? ", report.png" : ""}, dashboards/, raw/`;
    process.stdout.write(`\n${result.table}\n\nresults: ${result.runDir}/{${files}}\n`);
  }
}
