/**
 * Turns the benchmark Job's log (the framing of benchmarks/run/log-frames.ts around each run's --csv output)
 * into result rows: each run's CSV goes through the core's parseBenchmarkCsv, the final run of
 * each test is the row (result-rows.ts resultRow), and the notes come from replaying the core's
 * re-run rule (rerun-rule.ts rerunStep) over the logged runs, which also checks that the script
 * in the pod decided exactly as the local runner would. With `workload.repeat` the script runs the
 * tests in rounds (each run's frames name its round): each round gives its rows, and the rows are
 * their medians with min–max (run-spread.ts). Each row records its client's CPU from the `cpu_ms`
 * of its final run over its wall time, on min(threads, the pod's CPUs, its CPU quota) cores
 * (client-cpu.ts; a log without them: not measured). A truncated or foreign log is a JobLogError
 * naming what is missing; no field is ever NaN.
 */
import { parseToolVersion } from "../../benchmarks/run/tool-version.js";
import { BenchmarkOutputError, parseBenchmarkCsv, type BenchmarkLine } from "../../benchmarks/run/benchmark-csv.js";
import { measuredWindow, rerunStep, stillShortNote, type RunMeasurement } from "../../benchmarks/run/rerun-rule.js";
import type { ResultMode, ResultRow } from "../../benchmarks/run/result-row.js";
import { resultRow } from "../../benchmarks/run/result-rows.js";
import { aggregateRuns } from "../../benchmarks/run/run-spread.js";
import { clientCpuColumns, parseCpuQuota, usableCores } from "../../benchmarks/run/client-cpu.js";
import { runsOf, type Workload } from "../../vocabulary/workload.js";
import { parseFrame } from "../../benchmarks/run/log-frames.js";
import { MIX_CLIENT } from "../../benchmarks/run/mix-job.js";
import {
  parseMixJobResult,
  parseSoakSample,
  type MixJobExtras,
  type MixJobResult,
} from "../../benchmarks/run/mix-job-result.js";

export interface JobLogMeta {
  mode: ResultMode;
  /** The workload the Job ran (the script's requests, tests and re-run limits). */
  workload: Workload;
  /** Written to every row's server_version, e.g. `9.0.2`. */
  serverVersion: string;
  /** `YYYYMMDD-HHMMSS`. */
  timestamp: string;
}

export class JobLogError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JobLogError";
  }
}

interface Run {
  test: string;
  /** The round (`workload.repeat`), 1 in a log from before rounds. */
  round: number;
  run: number;
  requests: number;
  lines: string[];
  exit?: number;
  wallMs?: number;
  /** The client's CPU ms over the run (`times`), when logged. */
  cpuMs?: number;
  stderr: string[];
}

function wholeNumber(raw: string | undefined, what: string): number {
  const n = Number(raw);
  if (raw === undefined || !/^\d+$/.test(raw) || !Number.isSafeInteger(n)) {
    throw new JobLogError(`benchmark Job log: ${what} is ${JSON.stringify(raw)}, not a whole number`);
  }
  return n;
}

interface Scanned {
  client: string | undefined;
  /** The cores the pod's client may use, from the `cpus` frame (undefined: not logged). */
  cpus: number | undefined;
  runs: Run[];
  /** `### vbench-result` payloads (a mix prints one). */
  results: string[];
  /** `### vbench-sample` payloads (a soak's samples, in order). */
  samples: string[];
  done: number | undefined;
  errors: string[];
  stderr: string[];
}

function scan(log: string): Scanned {
  const s: Scanned = {
    client: undefined,
    cpus: undefined,
    runs: [],
    results: [],
    samples: [],
    done: undefined,
    errors: [],
    stderr: [],
  };
  let open: Run | undefined;
  for (const line of log.split("\n")) {
    const f = parseFrame(line.replace(/\r$/, ""));
    if (f === undefined) {
      open?.lines.push(line);
      continue;
    }
    const where = open === undefined ? undefined : `${open.test.toUpperCase()} run ${open.run}`;
    if (f.kind === "begin") {
      if (where !== undefined) throw new JobLogError(`benchmark Job log: ${where} has no end line (truncated?)`);
      const test = f.fields.test ?? "";
      if (test === "") throw new JobLogError(`benchmark Job log: begin line without a test: ${line}`);
      const round = f.fields.round === undefined ? 1 : wholeNumber(f.fields.round, `round of ${test}`);
      open = {
        test,
        round,
        run: wholeNumber(f.fields.run, `run of ${test}`),
        requests: wholeNumber(f.fields.requests, `requests of ${test}`),
        lines: [],
        stderr: [],
      };
    } else if (f.kind === "end") {
      if (
        open === undefined ||
        f.fields.test !== open.test ||
        f.fields.run !== String(open.run) ||
        (f.fields.round ?? "1") !== String(open.round)
      ) {
        throw new JobLogError(`benchmark Job log: end line without a matching begin: ${line}`);
      }
      open.exit = wholeNumber(f.fields.exit, `exit of ${where}`);
      open.wallMs = wholeNumber(f.fields.wall_ms, `wall_ms of ${where}`);
      if ((f.fields.cpu_ms ?? "") !== "") open.cpuMs = wholeNumber(f.fields.cpu_ms, `cpu_ms of ${where}`);
      s.runs.push(open);
      open = undefined;
    } else if (f.kind === "version") s.client = f.fields.client;
    else if (f.kind === "cpus") s.cpus = podCores(f.fields);
    else if (f.kind === "done") s.done = wholeNumber(f.fields.status, "done status");
    else if (f.kind === "error") s.errors.push(f.text);
    else if (f.kind === "result") s.results.push(f.text);
    else if (f.kind === "sample") s.samples.push(f.text);
    else if (f.kind === "stderr") (s.runs.at(-1)?.stderr ?? s.stderr).push(f.text);
  }
  if (open !== undefined)
    throw new JobLogError(`benchmark Job log ends inside ${open.test.toUpperCase()} run ${open.run} (truncated?)`);
  return s;
}

/**
 * The CPUs the pod may use, capped by its cgroup quota, from the `cpus` frame; undefined when it says nothing usable.
 */
function podCores(fields: Record<string, string>): number | undefined {
  const nproc = Number(fields.nproc);
  if (!(nproc >= 1)) return undefined;
  return Math.min(nproc, parseCpuQuota(fields.quota ?? "max", fields.period ?? "100000") ?? Number.POSITIVE_INFINITY);
}

/** `valkey-benchmark 9.0.2` from the client's `--version` line. */
function clientVersion(raw: string | undefined): string {
  const flavor = /^(valkey|redis)-benchmark\b/.exec(raw ?? "")?.[1];
  const version = parseToolVersion(raw ?? "");
  if (flavor === undefined || version === undefined) {
    throw new JobLogError(
      `benchmark Job log has no usable client version line (### vbench-version client=...; got ${JSON.stringify(raw ?? null)})`,
    );
  }
  return `${flavor}-benchmark ${version}`;
}

function resultLine(r: Run): BenchmarkLine {
  const name = `${r.test.toUpperCase()} run ${r.run}`;
  if (r.exit !== 0) {
    throw new JobLogError(`benchmark ${name} exited ${r.exit}; stderr: ${r.stderr.slice(-5).join(" | ") || "(empty)"}`);
  }
  let lines: BenchmarkLine[];
  try {
    lines = parseBenchmarkCsv(r.lines.join("\n"), { allowInfiniteRps: true });
  } catch (err) {
    if (!(err instanceof BenchmarkOutputError)) throw err;
    throw new JobLogError(`benchmark ${name}: ${err.message}`);
  }
  const wanted = r.test.toUpperCase();
  const line = lines.find((l) => l.test === wanted || l.test.startsWith(`${wanted} `));
  if (line === undefined || lines.length !== 1) {
    throw new JobLogError(
      `benchmark ${name} printed ${lines.length} result line(s) (${lines.map((l) => l.test).join(", ")}), expected one ${wanted} line`,
    );
  }
  return line;
}

/** The row of one test in one round from its runs, in order; checks the runs follow the re-run rule. */
function testRow(meta: JobLogMeta, client: string, label: string, runs: Run[], cores: number | undefined): ResultRow {
  const w = meta.workload;
  const notes: string[] = [];
  let last:
    { line: BenchmarkLine; requests: number; wallSeconds: number; m: RunMeasurement; cpuMs?: number } | undefined;
  for (const [i, r] of runs.entries()) {
    const wantRequests = i === 0 ? w.requests : undefined;
    if (r.run !== i + 1 || (wantRequests !== undefined && r.requests !== wantRequests)) {
      throw new JobLogError(
        `benchmark Job log: ${label} run ${r.run} with ${r.requests} requests is out of sequence (expected run ${i + 1}${wantRequests === undefined ? "" : ` with ${wantRequests} requests`})`,
      );
    }
    const line = resultLine(r);
    const wallSeconds = (r.wallMs ?? 0) / 1000;
    const m: RunMeasurement = {
      requests: r.requests,
      rps: line.rps,
      wallSeconds,
      windowSeconds: measuredWindow(r.requests, line.rps, wallSeconds),
    };
    last = { line, requests: r.requests, wallSeconds, m, ...(r.cpuMs === undefined ? {} : { cpuMs: r.cpuMs }) };
    const step = rerunStep(w, m, i + 2);
    notes.push(...step.notes);
    const following = runs[i + 1];
    if (step.next === undefined && following !== undefined) {
      throw new JobLogError(
        `benchmark Job log: ${label} was re-run (run ${following.run}) although the re-run rule stops after run ${r.run}`,
      );
    }
    if (step.next !== undefined && following === undefined) {
      throw new JobLogError(
        `benchmark Job log: ${label} run ${r.run + 1} with ${step.next} requests is missing (truncated?)`,
      );
    }
    if (step.next !== undefined && following !== undefined && following.requests !== step.next) {
      throw new JobLogError(
        `benchmark Job log: ${label} run ${following.run} ran ${following.requests} requests, the re-run rule gives ${step.next}`,
      );
    }
  }
  if (last === undefined) throw new JobLogError(`benchmark Job log has no run of ${label} (truncated?)`);
  notes.push(...stillShortNote(w, last.m, notes));
  if (!Number.isFinite(last.line.rps)) {
    throw new JobLogError(
      `benchmark ${label} reported rps 'inf' (${last.requests} requests finished within 1 ms); raise requests or minDurationSeconds`,
    );
  }
  const row = resultRow({ ...meta, clientVersion: client }, last, notes.join("; "));
  if (last.cpuMs === undefined || cores === undefined) return row;
  return {
    ...row,
    ...clientCpuColumns({
      cpuSeconds: last.cpuMs / 1000,
      wallSeconds: last.wallSeconds,
      cores: usableCores(w.threads, cores),
    }),
  };
}

/**
 * Parses a whole benchmark Job log into its rounds (`runsOf(meta.workload)` of them), each one row
 * per test of `meta.workload`, in its order.
 */
export function parseJobLogRounds(log: string, meta: JobLogMeta): ResultRow[][] {
  if (log.trim() === "") throw new JobLogError("benchmark Job log is empty");
  const s = scan(log);
  if (s.errors.length > 0) {
    throw new JobLogError(
      `benchmark Job stopped: ${s.errors.join("; ")}${s.stderr.length > 0 ? `; stderr: ${s.stderr.join(" | ")}` : ""}`,
    );
  }
  const client = clientVersion(s.client);
  const known = new Set<string>(meta.workload.tests);
  const rounds = runsOf(meta.workload);
  const stray = s.runs.find((r) => !known.has(r.test) || r.round > rounds);
  if (stray !== undefined)
    throw new JobLogError(
      `benchmark Job log has a run of ${stray.test} in round ${stray.round}, which the workload (${rounds} round(s) of ${meta.workload.tests.join(",")}) does not have`,
    );
  const perRound = Array.from({ length: rounds }, (_, i) =>
    meta.workload.tests.map((t) => {
      const runs = s.runs.filter((r) => r.test === t && r.round === i + 1);
      if (runs.length === 0) {
        const seen = [...new Set(s.runs.map((r) => `${r.test.toUpperCase()} (round ${r.round})`))].join(", ") || "none";
        throw new JobLogError(
          `benchmark Job log has no run of ${t.toUpperCase()}${rounds > 1 ? ` in round ${i + 1}` : ""} (truncated? tests with runs: ${seen})`,
        );
      }
      return testRow(meta, client, `${t.toUpperCase()}${rounds > 1 ? ` (round ${i + 1})` : ""}`, runs, s.cpus);
    }),
  );
  if (s.done === undefined) throw new JobLogError("benchmark Job log has no final `### vbench-done` line (truncated?)");
  if (s.done !== 0) throw new JobLogError(`benchmark Job script finished with status ${s.done}`);
  return perRound;
}

/**
 * Parses a whole benchmark Job log into one row per test of `meta.workload`, in its order: the medians of its rounds
 * with min–max.
 */
export function parseJobLog(log: string, meta: JobLogMeta): ResultRow[] {
  return aggregateRuns(parseJobLogRounds(log, meta));
}

/**
 * Parses the log of a Job that ran a mix (benchmarks/run/mix-job.ts): one `### vbench-result` line
 * whose rows are the mix's commands then `MIX`, in the workload's order; the rows get the Job's
 * timestamp. Anything else (an error line, no result, a second one, rows of other commands, a
 * status other than 0) is a JobLogError naming it.
 */
export function parseMixJobLog(log: string, meta: JobLogMeta): { rows: ResultRow[]; mix: MixJobExtras } {
  const mix = meta.workload.mix;
  if (mix === undefined) throw new JobLogError("parseMixJobLog: the workload has no mix");
  if (log.trim() === "") throw new JobLogError("benchmark Job log is empty");
  const s = scan(log);
  if (s.errors.length > 0) throw new JobLogError(`benchmark Job stopped: ${s.errors.join("; ")}`);
  if (s.client !== MIX_CLIENT)
    throw new JobLogError(
      `benchmark Job log: client is ${JSON.stringify(s.client ?? null)}, expected ${MIX_CLIENT} (a mix)`,
    );
  if (s.results.length !== 1)
    throw new JobLogError(`benchmark Job log has ${s.results.length} result lines, expected one (truncated?)`);
  if (s.done === undefined) throw new JobLogError("benchmark Job log has no final `### vbench-done` line (truncated?)");
  if (s.done !== 0) throw new JobLogError(`benchmark Job mix runner finished with status ${s.done}`);
  let result: MixJobResult;
  try {
    result = parseMixJobResult(s.results[0] as string);
    if (result.soak !== undefined) {
      if (s.samples.length !== result.soak.sampleCount)
        throw new Error(
          `the soak reports ${result.soak.sampleCount} samples, the log holds ${s.samples.length} sample lines (truncated or rotated?)`,
        );
      result.soak.samples = s.samples.map((text, n) => parseSoakSample(text, n + 1));
    } else if (s.samples.length > 0) throw new Error(`${s.samples.length} soak sample lines but no soak in the result`);
  } catch (err) {
    throw new JobLogError(`benchmark Job log: ${(err as Error).message}`);
  }
  const want = [...mix.map((e) => e.test.toUpperCase()), "MIX"];
  const got = result.rows.map((r) => r.test);
  if (got.join(",") !== want.join(","))
    throw new JobLogError(`benchmark Job log: the mix's rows are ${got.join(", ")}, expected ${want.join(", ")}`);
  const wrongMode = result.rows.find((r) => r.mode !== meta.mode);
  if (wrongMode !== undefined)
    throw new JobLogError(`benchmark Job log: a ${wrongMode.mode} row in a ${meta.mode} stack`);
  const { rows, ...extras } = result;
  return { rows: rows.map((r) => ({ ...r, timestamp: meta.timestamp })), mix: extras };
}
