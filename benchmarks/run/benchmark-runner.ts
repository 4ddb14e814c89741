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
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { basename, join } from "node:path";
import type { ResolvedTool } from "../binaries.js";
import { trackChild } from "../util/process-reaper.js";
import type { BenchmarkTest, Workload } from "../../vocabulary/workload.js";
import { buildBenchmarkArgs, buildProbeArgs, type BenchmarkTarget } from "./benchmark-args.js";
import { BenchmarkOutputError, parseBenchmarkCsv, type BenchmarkLine } from "./benchmark-csv.js";
import { RESULT_TIMESTAMP_PATTERN, type ResultMode, type ResultRow } from "./result-row.js";
import { combineClients, perClientNote, type ClientMeasurement, type CombinedMeasurement } from "./multi-client.js";
import { resultRow } from "./result-rows.js";
import { measuredWindow, rerunStep, stillShortNote, type RunMeasurement } from "./rerun-rule.js";

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
  /** Wraps each measured run, re-runs included (every member's byte counters around it: mix-served.ts MemberBytesRecorder). */
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

interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  wallSeconds: number;
  /** Why this module killed the child, if it did. */
  killedFor?: string;
}

const CONNECT_FAILURE = /Could not connect to \S+ at \S+: [^\n]*/;
const AUTH_FAILURE = /NOAUTH|WRONGPASS|Authentication required|invalid password|invalid username-password/i;
const MAX_CAPTURE = 1 << 20;

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

function childEnv(password: string | undefined): NodeJS.ProcessEnv {
  if (password === undefined) return { ...process.env };
  return { ...process.env, VALKEYCLI_AUTH: password, REDISCLI_AUTH: password };
}

/** Resolves once `host:port` accepts a TCP connection; rejects with the socket error otherwise. */
function checkReachable(host: string, port: number, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host, port });
    const fail = (why: string): void => {
      sock.destroy();
      reject(new Error(why));
    };
    sock.setTimeout(timeoutMs, () => fail(`no answer within ${timeoutMs} ms`));
    sock.once("error", (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
    sock.once("connect", () => {
      sock.destroy();
      resolve();
    });
  });
}

/** The signal's reason when it is an Error (AbortController.abort() gives an AbortError DOMException). */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return Object.assign(new Error("The benchmark was aborted", { cause: reason }), { name: "AbortError" });
}

/** Spawns the client with piped stdio; kills it on abort, timeout, or a fatal connect error. */
function runChild(o: RunWorkloadOptions, args: string[]): Promise<ChildResult> {
  const { signal } = o;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(o.client.path, args, { stdio: ["ignore", "pipe", "pipe"], env: childEnv(o.password) });
    trackChild(child);
    let stdout = "";
    let stderr = "";
    let killedFor: string | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    const kill = (why: string, sig: NodeJS.Signals = "SIGTERM"): void => {
      if (killedFor !== undefined) return;
      killedFor = why;
      child.kill(sig);
      graceTimer = setTimeout(() => child.kill("SIGKILL"), 2000);
    };
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length < MAX_CAPTURE) stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < MAX_CAPTURE) stderr += d;
      // redis-benchmark 7 spins forever after a refused connection instead of exiting.
      const m = CONNECT_FAILURE.exec(stderr);
      if (m) kill(m[0], "SIGKILL");
    });
    const onAbort = (): void => kill("aborted");
    signal?.addEventListener("abort", onAbort, { once: true });
    const timeout = o.processTimeoutMs === undefined ? undefined : setTimeout(() => kill(`ran longer than ${o.processTimeoutMs} ms`), o.processTimeoutMs);
    if (child.pid !== undefined) o.onSpawn?.(child.pid, args);
    let spawnError: Error | undefined;
    child.once("error", (err) => {
      spawnError = err;
    });
    child.once("close", (code, sig) => {
      clearTimeout(graceTimer);
      clearTimeout(timeout);
      signal?.removeEventListener("abort", onAbort);
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      if (spawnError !== undefined) {
        reject(new Error(`could not start ${o.client.path}: ${spawnError.message}`, { cause: spawnError }));
        return;
      }
      const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      resolve({ code, signal: sig, stdout, stderr, wallSeconds, ...(killedFor === undefined ? {} : { killedFor }) });
    });
  });
}

function clientName(client: ResolvedTool): string {
  return basename(client.path);
}

const targetsOf = (o: RunWorkloadOptions): readonly BenchmarkTarget[] => (o.targets === undefined || o.targets.length === 0 ? [o.target] : o.targets);

/** Benchmark processes per run: clientProcesses per target. */
const processCount = (o: RunWorkloadOptions): number => (o.clientProcesses ?? 1) * targetsOf(o).length;

function describeTarget(o: RunWorkloadOptions): string {
  return targetsOf(o)
    .map((t) => `${t.host}:${t.port}${t.cluster ? " (--cluster)" : ""}`)
    .join(", ");
}

/** `o` narrowed to one of its targets (messages then name that one). */
const onlyTarget = (o: RunWorkloadOptions, target: BenchmarkTarget): RunWorkloadOptions => ({ ...o, target, targets: undefined });

function failure(o: RunWorkloadOptions, test: string, r: ChildResult, what: string): BenchmarkRunError {
  const redact = redactor(o.password);
  const status = r.killedFor !== undefined ? `killed: ${r.killedFor}` : r.signal !== null ? `signal ${r.signal}` : `exit code ${r.code}`;
  const stdoutPart = r.stdout.trim() === "" ? "" : `; stdout tail:\n${tailOf(r.stdout)}`;
  return new BenchmarkRunError(
    redact(`${clientName(o.client)} ${test} against ${describeTarget(o)} (${o.mode}) ${what} (${status}); ` + `stderr tail:\n${tailOf(r.stderr)}${stdoutPart}`),
    test,
    r.code,
    r.signal,
    redact(tailOf(r.stderr)),
  );
}

function writeRaw(o: RunWorkloadOptions, test: string, n: number, args: string[], r: ChildResult, client?: number): void {
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
  writeFileSync(join(o.rawDir, `${o.mode}-${test}-${n}${client === undefined ? "" : `-client${client}`}.txt`), redact(text));
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
      throw new BenchmarkAuthError(`${describeTarget(o)} requires a password, but none was given to the ${o.mode} benchmark (${who})`);
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
}

async function measureOne(
  o: RunWorkloadOptions,
  test: BenchmarkTest,
  requests: number,
  n: number,
  client?: number,
  target: BenchmarkTarget = o.target,
): Promise<ClientMeasurement> {
  const one = onlyTarget(o, target);
  const args = buildBenchmarkArgs(o.workload, target, test, requests);
  const r = await runChild(one, args);
  writeRaw(one, test, n, args, r, client);
  if (r.code !== 0 || r.signal !== null || r.killedFor !== undefined) throw failure(one, test.toUpperCase(), r, "failed");
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
    throw failure(one, wanted, r, `printed ${lines.length} result line(s) (${lines.map((l) => l.test).join(", ")}), expected one ${wanted} line`);
  }
  return { line, requests, wallSeconds: r.wallSeconds };
}

/** One run of a test: `requests` per client process, all processes (every target's) spawned in the same tick. */
async function measure(o: RunWorkloadOptions, test: BenchmarkTest, requests: number, n: number): Promise<Measured> {
  const targets = targetsOf(o);
  const count = processCount(o);
  const m = await (o.aroundRun ?? ((run) => run()))(async () =>
    count === 1
      ? await measureOne(o, test, requests, n)
      : combineClients(await Promise.all(Array.from({ length: count }, (_, i) => measureOne(o, test, requests, n, i + 1, targets[i % targets.length])))),
  );
  return { ...m, windowSeconds: measuredWindow(m.requests, m.line.rps, m.wallSeconds) };
}

function toRow(o: RunWorkloadOptions, m: Measured, notes: string): ResultRow {
  const row = resultRow({ ...o, clientVersion: `${o.client.flavor}-benchmark ${o.client.version}` }, m, notes);
  if (m.perClient === undefined) return row;
  // Several processes: connections and notes cover all of them (multi-client.ts).
  const unit = targetsOf(o).length > 1 ? `client processes over ${targetsOf(o).length} targets (${describeTarget(o)})` : undefined;
  return { ...row, clients: row.clients * m.perClient.length, notes: [perClientNote(m.perClient, unit), notes].filter((x) => x !== "").join("; ") };
}

const measurement = (m: Measured): RunMeasurement => ({ requests: m.requests, rps: m.line.rps, wallSeconds: m.wallSeconds, windowSeconds: m.windowSeconds });

/** Runs one test, re-running it with more requests while its window is shorter than the minimum. */
async function runTest(o: RunWorkloadOptions, test: BenchmarkTest): Promise<ResultRow> {
  const w = o.workload;
  o.onProgress?.({ test, phase: "run", requests: w.requests });
  let final = await measure(o, test, w.requests, 1);
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
  if (!RESULT_TIMESTAMP_PATTERN.test(o.timestamp)) throw new RangeError(`timestamp '${o.timestamp}' is not YYYYMMDD-HHMMSS`);
  const w = o.workload;
  if (!(w.minDurationSeconds >= 0)) throw new RangeError(`minDurationSeconds must be ≥ 0 (got ${w.minDurationSeconds})`);
  if (w.tests.length === 0) throw new RangeError("the workload has no tests");
  // Validates every number before anything is spawned.
  for (const t of w.tests) for (const target of targetsOf(o)) buildBenchmarkArgs(w, target, t, w.requests);
  await probe(o);
  const rows: ResultRow[] = [];
  for (const test of w.tests) rows.push(await runTest(o, test));
  return rows;
}
