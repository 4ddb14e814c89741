/**
 * The load generator as the mixes see it: `vload` (loadgen/, Go), the process every mix, open
 * loop, soak, loop comparison and replica read of this project runs its load in. Node's one event
 * loop on ioredis reached 0.08x of redis-benchmark's throughput on the same target; `vload`
 * writes each lane's batch with one syscall and scans the replies in place
 * (docs/report-and-sweep.md, "The load generator", has the measurements and the choice).
 *
 * Contract: the spec goes to its stdin as JSON (never argv: it holds the password); it prints
 * JSON lines: `ready` once every connection is up (the load's start), `window` per soak window,
 * `result` at the end (per test: count, errors, the latencies as an HdrHistogram in V2
 * compressed encoding; the open loop's series and dispatch lag; redirects; bytes; its own CPU
 * use). Every line is validated here (zod/mini: this module is bundled into the Job's pod);
 * anything else, a missing result or a non-zero exit is an error naming what was wrong, with the
 * generator's stderr.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import * as z from "zod/mini";
import { trackChild } from "../../core/util/process-reaper.js";
import type { BenchmarkTest } from "../../vocabulary/workload.js";
import { LatencyHistogram } from "./latency-histogram.js";
import type { GeneratorFigures } from "./mix-job-result.js";

/** The env var naming the generator's executable (the Job's pod sets it; .ci/setup puts `vload` on PATH). */
export const LOADGEN_ENV = "VBENCH_LOADGEN";

/** The client_version of the generator's rows (no valkey-benchmark involved). */
export const MIX_CLIENT = "vbench mix (vload)";

/** One interval of the open loop's intended send time: what was sent then and how long it took. */
export interface LatencySecond {
  /** The interval's start, s from the load's start. */
  second: number;
  requests: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** What `vload run` reads (loadgen/spec.go's Spec: the one declaration of its fields is there). */
export interface LoadgenSpec {
  mode: "standalone" | "cluster";
  target: string;
  readTargets?: string[];
  readsFromReplicas?: boolean;
  password?: string;
  connections: number;
  pipeline: number;
  schedule: readonly BenchmarkTest[];
  readTests: readonly BenchmarkTest[];
  keyspace: number;
  dataSize: number;
  durationSeconds: number;
  rate?: number;
  pace?: number;
  windowSeconds?: number;
  /**
   * Cluster keys: spread over every slot of a lane's shard (default), or valkey-benchmark's one tagged slot per shard
   * (bench:loadgen).
   */
  keyShape?: "spread" | "tagged";
  drainMs?: number;
  connectTimeoutMs?: number;
}

const num = z.number();
const int = z.int();
const readySchema = z.object({ type: z.literal("ready"), connections: int, startUnixMs: num, version: z.string() });
const windowSchema = z.object({
  type: z.literal("window"),
  index: int,
  fromMs: num,
  toMs: num,
  count: int,
  errors: int,
  hist: z.string(),
});
const resultSchema = z.object({
  type: z.literal("result"),
  version: z.string(),
  tests: z.array(
    z.object({ test: z.string(), count: int, errors: int, firstError: z.optional(z.string()), hist: z.string() }),
  ),
  windowS: num,
  openLoop: z.optional(
    z.object({
      rate: num,
      sent: int,
      bucketS: num,
      series: z.array(z.object({ index: int, requests: int, p50Us: int, p99Us: int, maxUs: int })),
      lagMaxUs: num,
      lagMeanUs: num,
    }),
  ),
  redirects: z.object({ moved: int, ask: int }),
  bytes: z.object({ written: int, read: int }),
  cpu: z.object({ userS: num, sysS: num, wallS: num, cores: num }),
  clamped: int,
});
const lineSchema = z.discriminatedUnion("type", [readySchema, windowSchema, resultSchema]);

/** One soak window of the load: what arrived from `fromMs` to `toMs` (wall clock). */
export interface LoadgenWindow {
  index: number;
  fromMs: number;
  toMs: number;
  errors: number;
  hist: LatencyHistogram;
}

export interface LoadgenRun {
  version: string;
  /** Wall clock when the load started (every connection up). */
  startUnixMs: number;
  hist: Map<BenchmarkTest, LatencyHistogram>;
  errors: Map<BenchmarkTest, { count: number; first: string }>;
  /** From the load's start to the last reply (closed loop: to the end of the last batch), s. */
  windowS: number;
  openLoop?: {
    rate: number;
    sent: number;
    /** The series' interval, s (1 up to 600 s of load, coarser beyond: at most 600 points). */
    bucketS: number;
    series: LatencySecond[];
    lagMaxMs: number;
    lagMeanMs: number;
  };
  redirects: { moved: number; ask: number };
  bytes: { written: number; read: number };
  /**
   * Its own CPU use over the load (for the client-bound check); cores: the CPUs it may use (GOMAXPROCS, or a lower
   * cgroup limit).
   */
  cpu: GeneratorFigures["cpu"];
  /** Replies slower than an hour, recorded as one hour. */
  clamped: number;
}

/**
 * The generator failed: `exitCode` is its own (2 bad spec, 3 password refused, 4 unreachable or not what the spec
 * says).
 */
export class LoadgenError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
  ) {
    super(message);
    this.name = "LoadgenError";
  }
}

const ms = (us: number): number => Number((us / 1000).toFixed(3));

function toRun(r: z.infer<typeof resultSchema>, startUnixMs: number): LoadgenRun {
  const hist = new Map<BenchmarkTest, LatencyHistogram>();
  const errors = new Map<BenchmarkTest, { count: number; first: string }>();
  for (const t of r.tests) {
    const test = t.test as BenchmarkTest;
    hist.set(test, LatencyHistogram.decode(t.hist, `the generator's ${t.test} histogram`));
    if (t.errors > 0) errors.set(test, { count: t.errors, first: t.firstError ?? "" });
  }
  const o = r.openLoop;
  return {
    version: r.version,
    startUnixMs,
    hist,
    errors,
    windowS: r.windowS,
    ...(o === undefined
      ? {}
      : {
          openLoop: {
            rate: o.rate,
            sent: o.sent,
            bucketS: o.bucketS,
            series: o.series.map((p) => ({
              second: p.index * o.bucketS,
              requests: p.requests,
              p50_ms: ms(p.p50Us),
              p99_ms: ms(p.p99Us),
              max_ms: ms(p.maxUs),
            })),
            lagMaxMs: ms(o.lagMaxUs),
            lagMeanMs: ms(o.lagMeanUs),
          },
        }),
    redirects: r.redirects,
    bytes: r.bytes,
    cpu: { cpuSeconds: r.cpu.userS + r.cpu.sysS, wallSeconds: r.cpu.wallS, cores: r.cpu.cores },
    clamped: r.clamped,
  };
}

const redact = (s: string, password: string | undefined): string => (password ? s.split(password).join("***") : s);

/** Runs the generator with `spec` and returns what it measured; `onWindow` gets each soak window as it comes. */
export function runLoadgen(
  binary: string,
  spec: LoadgenSpec,
  o: { onWindow?: (w: LoadgenWindow) => void } = {},
): Promise<LoadgenRun> {
  const child = spawn(binary, ["run"], { stdio: ["pipe", "pipe", "pipe"] });
  trackChild(child);
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-8192)));
  let startUnixMs: number | undefined;
  let result: z.infer<typeof resultSchema> | undefined;
  let bad: string | undefined;
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (text) => {
    if (bad !== undefined) return;
    let parsed: z.infer<typeof lineSchema>;
    try {
      parsed = lineSchema.parse(JSON.parse(text));
    } catch (err) {
      bad = `an output line it should not print (${(err as Error).message.slice(0, 300)}): ${text.slice(0, 200)}`;
      child.kill("SIGKILL");
      return;
    }
    if (parsed.type === "ready") startUnixMs = parsed.startUnixMs;
    else if (parsed.type === "result") result = parsed;
    else o.onWindow?.({ ...parsed, hist: LatencyHistogram.decode(parsed.hist, `soak window ${parsed.index}`) });
  });
  child.stdin.on("error", () => undefined);
  child.stdin.end(JSON.stringify(spec));
  return new Promise((resolve, reject) => {
    child.on("error", (err) =>
      reject(new LoadgenError(`the load generator ${binary} could not start: ${err.message}`, null)),
    );
    child.on("close", (code, signal) => {
      const why = redact(stderr.trim().split("\n").slice(-5).join(" | "), spec.password);
      if (bad !== undefined) return reject(new LoadgenError(`the load generator printed ${bad}`, code));
      if (code !== 0 || result === undefined || startUnixMs === undefined)
        return reject(
          new LoadgenError(
            `the load generator ${code === 0 ? "exited without a result" : `failed (${signal ?? `exit ${code}`})`}${why === "" ? "" : `: ${why}`}`,
            code,
          ),
        );
      try {
        resolve(toRun(result, startUnixMs));
      } catch (err) {
        reject(new LoadgenError(`the load generator's result: ${(err as Error).message}`, code));
      }
    });
  });
}
