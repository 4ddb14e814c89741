/**
 * Runs a workload with the benchmark client (valkey-benchmark or redis-benchmark), one child
 * process per test, and turns each test into a ResultRow.
 *
 * Timing. Each row's `duration_s` is the wall time of the benchmark process, measured with
 * process.hrtime around spawn → exit: it includes process start, the CONFIG fetch, connection
 * set-up and (with --cluster) slot discovery, so it is slightly longer than the tool's window.
 * Short tests are re-run with more requests by the re-run rule of rerun-rule.ts, and the row is
 * built by result-rows.ts (both shared with the in-cluster benchmark Job).
 *
 * Children. Every benchmark child is registered with util/process-reaper.ts (trackChild), which
 * SIGKILLs it if this Node process exits first; the reaper's SIGINT / SIGTERM / SIGHUP handlers,
 * installed with the first child, kill it and exit with 128 + signal.
 *
 * Passwords. The password reaches the child only through its environment (VALKEYCLI_AUTH and
 * REDISCLI_AUTH), never argv, which any local user can read in the process list. A probe run
 * (`-n 1 -t ping`) first checks that the client actually authenticated that way: clients that
 * only take `-a` (redis-benchmark 7.x does) fail it with BenchmarkAuthError. Every message
 * this module builds has the password redacted.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { ResolvedTool } from "./binaries.js";
import type { BenchmarkTest, Workload } from "../../vocabulary/workload.js";
import { buildBenchmarkArgs, buildProbeArgs, type BenchmarkTarget } from "./benchmark-args.js";
import { BenchmarkOutputError, parseBenchmarkCsv, type BenchmarkLine } from "./benchmark-csv.js";
import { RESULT_TIMESTAMP_PATTERN, type ResultMode, type ResultRow } from "./result-row.js";
import { combineClients, perClientNote, type ClientMeasurement, type CombinedMeasurement } from "./multi-client.js";
import { resultRow } from "./result-rows.js";
import { measuredWindow, rerunStep, stillShortNote, type RunMeasurement } from "./rerun-rule.js";
import { checkReachable, runChild, type ChildResult } from "./benchmark-child.js";
import { clientCpuColumns, usableCores, type ClientCpu } from "./client-cpu.js";
import { childrenCpuSeconds } from "./client-cpu-probe.js";

export interface RunProgressEvent {
  test: string;
  phase: "run" | "rerun" | "done";
  requests: number;
  row?: ResultRow;
}

export interface RunWorkloadOptions {
  workload: Workload;
  target: BenchmarkTarget;
  /**
   * Several targets at once (the replicas): `clientProcesses` benchmark processes per target, all
   * started together, combined into one row like several client processes (multi-client.ts).
   * @default [target]
   */
  targets?: readonly BenchmarkTarget[];
  mode: ResultMode;
  client: ResolvedTool;
  serverVersion: string;
  /** Given to the client through its environment only; see the module comment. */
  password?: string;
  /** `YYYYMMDD-HHMMSS`, written in every row. */
  timestamp: string;
  /** Each run's argv, exit status, stdout and stderr go to `<rawDir>/<mode>-<test>-<n>.txt`. */
  rawDir?: string;
  onProgress?: (e: RunProgressEvent) => void;
  /** Aborting kills the running child and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Called with each benchmark child's pid as it starts (probe included). */
  onSpawn?: (pid: number, args: readonly string[]) => void;
  /** Kill a benchmark process that runs longer than this. @default no limit */
  processTimeoutMs?: number;
  /** TCP connect check before anything is spawned. @default 5000 */
  connectTimeoutMs?: number;
  /**
   * Benchmark processes per run, started together, each with the workload's `-n` and `-c`; their
   * results combine into one row (multi-client.ts: rps summed, worst client's percentiles).
   * @default 1
   */
  clientProcesses?: number;
  /**
   * Per test (lower case), the first run's requests in total over the client processes instead of
   * `workload.requests` each: a later run of `--repeat` starts where the same test's previous run
   * ended, so it is not re-run again from a short first run. @default workload.requests per process
   */
  startRequests?: Readonly<Record<string, number>>;
  /**
   * Wraps each measured run, re-runs included (every member's byte counters around it: mix-served.ts
   * MemberBytesRecorder).
   */
  aroundRun?: <T>(run: () => Promise<T>) => Promise<T>;
}

/** The client could not authenticate with the password from its environment. */
export class BenchmarkAuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BenchmarkAuthError";
  }
}

/** A benchmark process failed: non-zero exit, a signal, unreadable output, an unreachable target. */
export class BenchmarkRunError extends Error {
  constructor(
    message: string,
    readonly test: string,
    readonly exitCode: number | null,
    readonly exitSignal: NodeJS.Signals | null,
    readonly stderrTail: string,
  ) {
    super(message);
    this.name = "BenchmarkRunError";
  }
}

const AUTH_FAILURE = /NOAUTH|WRONGPASS|Authentication required|invalid password|invalid username-password/i;

function redactor(password: string | undefined): (s: string) => string {
  if (password === undefined || password === "") return (s) => s;
  return (s) => s.split(password).join("***");
}

function tailOf(text: string, lines = 8): string {
  const t = text
    .trimEnd()
    .split(/\r\n|\r|\n/)
    .filter((l) => l.trim() !== "")
    .slice(-lines)
    .join("\n");
  return t === "" ? "(empty)" : t;
}

function clientName(client: ResolvedTool): string {
  return basename(client.path);
}

const targetsOf = (o: RunWorkloadOptions): readonly BenchmarkTarget[] =>
  o.targets === undefined || o.targets.length === 0 ? [o.target] : o.targets;

/** Benchmark processes per run: clientProcesses per target. */
const processCount = (o: RunWorkloadOptions): number => (o.clientProcesses ?? 1) * targetsOf(o).length;

function describeTarget(o: RunWorkloadOptions): string {
  return targetsOf(o)
    .map((t) => `${t.host}:${t.port}${t.cluster ? " (--cluster)" : ""}`)
    .join(", ");
}

/** `o` narrowed to one of its targets (messages then name that one). */
const onlyTarget = (o: RunWorkloadOptions, target: BenchmarkTarget): RunWorkloadOptions => ({
  ...o,
  target,
  targets: undefined,
});

function failure(o: RunWorkloadOptions, test: string, r: ChildResult, what: string): BenchmarkRunError {
  const redact = redactor(o.password);
  const status =
    r.killedFor !== undefined
      ? `killed: ${r.killedFor}`
      : r.signal !== null
        ? `signal ${r.signal}`
        : `exit code ${r.code}`;
  const stdoutPart = r.stdout.trim() === "" ? "" : `; stdout tail:\n${tailOf(r.stdout)}`;
  return new BenchmarkRunError(
    redact(
      `${clientName(o.client)} ${test} against ${describeTarget(o)} (${o.mode}) ${what} (${status}); ` +
        `stderr tail:\n${tailOf(r.stderr)}${stdoutPart}`,
    ),
    test,
    r.code,
    r.signal,
    redact(tailOf(r.stderr)),
  );
}

function writeRaw(
  o: RunWorkloadOptions,
  test: string,
  n: number,
  args: string[],
  r: ChildResult,
  client?: number,
): void {
  if (o.rawDir === undefined) return;
  mkdirSync(o.rawDir, { recursive: true });
  const redact = redactor(o.password);
  const text = [
    `# ${clientName(o.client)} ${o.client.version}: ${args.join(" ")}`,
    `# exit: ${r.code ?? "-"} signal: ${r.signal ?? "-"} wall: ${r.wallSeconds.toFixed(3)} s${r.killedFor ? ` killed: ${r.killedFor}` : ""}`,
    "# --- stdout ---",
    r.stdout.trimEnd(),
    "# --- stderr ---",
    r.stderr.trimEnd(),
    "",
  ].join("\n");
  writeFileSync(
    join(o.rawDir, `${o.mode}-${test}-${n}${client === undefined ? "" : `-client${client}`}.txt`),
    redact(text),
  );
}

/** Checks every target answers and the client authenticates from its environment. */
async function probe(o: RunWorkloadOptions): Promise<void> {
  for (const target of targetsOf(o)) await probeOne(onlyTarget(o, target));
}

async function probeOne(o: RunWorkloadOptions): Promise<void> {
  const { host, port } = o.target;
  try {
    await checkReachable(host, port, o.connectTimeoutMs ?? 5000);
  } catch (err) {
    throw new BenchmarkRunError(
      `cannot benchmark ${o.mode}: ${host}:${port} does not accept connections (${(err as Error).message})`,
      "connect",
      null,
      null,
      "",
    );
  }
  const r = await runChild(o, buildProbeArgs(o.target));
  const output = `${r.stdout}\n${r.stderr}`;
  if (AUTH_FAILURE.test(output)) {
    const who = `${clientName(o.client)} ${o.client.version}`;
    if (o.password === undefined) {
      throw new BenchmarkAuthError(
        `${describeTarget(o)} requires a password, but none was given to the ${o.mode} benchmark (${who})`,
      );
    }
    throw new BenchmarkAuthError(
      redactor(o.password)(
        `${who} did not authenticate to ${describeTarget(o)} with the password in its environment ` +
          `(VALKEYCLI_AUTH / REDISCLI_AUTH): this client only accepts a password on its command line (-a), ` +
          `which would expose it in the process list, so it is never passed that way. ` +
          `The local comparison therefore runs password-less on loopback; benchmarking a password-protected ` +
          `target needs a client that reads the password from its environment or a file.`,
      ),
    );
  }
  if (r.code !== 0 || r.signal !== null || r.killedFor !== undefined) throw failure(o, "probe", r, "probe run failed");
}

interface Measured {
  line: BenchmarkLine;
  requests: number;
  wallSeconds: number;
  /** min(wall time, requests / rps): the window the rps figure was measured over, at most. */
  windowSeconds: number;
  /** With several client processes: each one's measurement (requests and rps above are the sums). */
  perClient?: CombinedMeasurement["perClient"];
  /** The benchmark processes' CPU use (their rusage), when readable. */
  clientCpu?: ClientCpu;
}

async function measureOne(
  o: RunWorkloadOptions,
  test: BenchmarkTest,
  requests: number,
  n: number,
  client?: number,
  target: BenchmarkTarget = o.target,
): Promise<ClientMeasurement & { cpus: number }> {
  const one = onlyTarget(o, target);
  const args = buildBenchmarkArgs(o.workload, target, test, requests);
  const r = await runChild(one, args);
  writeRaw(one, test, n, args, r, client);
  if (r.code !== 0 || r.signal !== null || r.killedFor !== undefined)
    throw failure(one, test.toUpperCase(), r, "failed");
  let lines: BenchmarkLine[];
  try {
    lines = parseBenchmarkCsv(r.stdout, { allowInfiniteRps: true });
  } catch (err) {
    if (!(err instanceof BenchmarkOutputError)) throw err;
    throw failure(one, test.toUpperCase(), r, `printed output that does not parse: ${err.message}`);
  }
  const wanted = test.toUpperCase();
  const line = lines.find((l) => l.test === wanted || l.test.startsWith(`${wanted} `));
  if (line === undefined || lines.length !== 1) {
    throw failure(
      one,
      wanted,
      r,
      `printed ${lines.length} result line(s) (${lines.map((l) => l.test).join(", ")}), expected one ${wanted} line`,
    );
  }
  return { line, requests, wallSeconds: r.wallSeconds, cpus: r.cpus };
}

/**
 * One run of a test: `requests` per client process, all processes (every target's) spawned in the
 * same tick. Their CPU time is this process's children's rusage across the run (nothing else is
 * waited for meanwhile), on min(threads × processes, the CPUs they may run on) cores.
 */
async function measure(o: RunWorkloadOptions, test: BenchmarkTest, requests: number, n: number): Promise<Measured> {
  const targets = targetsOf(o);
  const count = processCount(o);
  const cpu0 = childrenCpuSeconds();
  const each = await (o.aroundRun ?? ((run) => run()))(() =>
    Promise.all(
      Array.from({ length: count }, (_, i) =>
        measureOne(o, test, requests, n, count === 1 ? undefined : i + 1, targets[i % targets.length]),
      ),
    ),
  );
  const cpu1 = childrenCpuSeconds();
  const m = count === 1 ? (each[0] as ClientMeasurement) : combineClients(each);
  const clientCpu: ClientCpu | undefined =
    cpu0 === undefined || cpu1 === undefined
      ? undefined
      : {
          cpuSeconds: cpu1 - cpu0,
          wallSeconds: m.wallSeconds,
          cores: usableCores(o.workload.threads * count, Math.min(...each.map((x) => x.cpus))),
          source: "the benchmark processes' rusage",
        };
  return {
    ...m,
    windowSeconds: measuredWindow(m.requests, m.line.rps, m.wallSeconds),
    ...(clientCpu === undefined ? {} : { clientCpu }),
  };
}

function toRow(o: RunWorkloadOptions, m: Measured, notes: string): ResultRow {
  const row = {
    ...resultRow({ ...o, clientVersion: `${o.client.flavor}-benchmark ${o.client.version}` }, m, notes),
    ...(m.clientCpu && clientCpuColumns(m.clientCpu)),
  };
  if (m.perClient === undefined) return row;
  // Several processes: connections and notes cover all of them (multi-client.ts).
  const unit =
    targetsOf(o).length > 1 ? `client processes over ${targetsOf(o).length} targets (${describeTarget(o)})` : undefined;
  return {
    ...row,
    clients: row.clients * m.perClient.length,
    notes: [perClientNote(m.perClient, unit), notes].filter((x) => x !== "").join("; "),
  };
}

const measurement = (m: Measured): RunMeasurement => ({
  requests: m.requests,
  rps: m.line.rps,
  wallSeconds: m.wallSeconds,
  windowSeconds: m.windowSeconds,
});

/** Runs one test, re-running it with more requests while its window is shorter than the minimum. */
async function runTest(o: RunWorkloadOptions, test: BenchmarkTest): Promise<ResultRow> {
  const w = o.workload;
  const start = o.startRequests?.[test];
  const first = start === undefined ? w.requests : Math.ceil(start / processCount(o));
  o.onProgress?.({ test, phase: "run", requests: first });
  let final = await measure(o, test, first, 1);
  const notes: string[] = [];
  for (let attempt = 2; ; attempt++) {
    const step = rerunStep(w, measurement(final), attempt);
    notes.push(...step.notes);
    if (step.next === undefined) break;
    o.onProgress?.({ test, phase: "rerun", requests: step.next });
    // step.next is the total over all client processes; each gets its share.
    final = await measure(o, test, Math.ceil(step.next / processCount(o)), attempt);
  }
  notes.push(...stillShortNote(w, measurement(final), notes));
  if (!Number.isFinite(final.line.rps)) {
    throw new BenchmarkRunError(
      `${clientName(o.client)} ${test.toUpperCase()} against ${describeTarget(o)} reported rps 'inf' ` +
        `(${final.requests} requests finished within 1 ms); raise requests or minDurationSeconds`,
      test.toUpperCase(),
      0,
      null,
      "",
    );
  }
  const row = toRow(o, final, notes.join("; "));
  o.onProgress?.({ test, phase: "done", requests: final.requests, row });
  return row;
}

/** Probes the target, then runs every test of the workload in order, one process each. */
export async function runWorkload(o: RunWorkloadOptions): Promise<ResultRow[]> {
  if (!RESULT_TIMESTAMP_PATTERN.test(o.timestamp))
    throw new RangeError(`timestamp '${o.timestamp}' is not YYYYMMDD-HHMMSS`);
  const w = o.workload;
  if (!(w.minDurationSeconds >= 0))
    throw new RangeError(`minDurationSeconds must be ≥ 0 (got ${w.minDurationSeconds})`);
  if (w.tests.length === 0) throw new RangeError("the workload has no tests");
  // Validates every number before anything is spawned.
  for (const t of w.tests) for (const target of targetsOf(o)) buildBenchmarkArgs(w, target, t, w.requests);
  await probe(o);
  const rows: ResultRow[] = [];
  for (const test of w.tests) rows.push(await runTest(o, test));
  return rows;
}
