/**
 * The POSIX sh script the benchmark Job's container runs (dash, busybox ash and bash all run
 * it): pod/scripts/benchmark-job.sh, rendered here (pod/shell-file.ts) with this Job's values.
 * Every benchmark flag comes from the core's buildBenchmarkArgs, as one line per test of
 * `test_args` (the request count left out: the script adds `-n` per run); the script only adds:
 *
 * - a bounded wait until the target answers a one-request PING run (the core's buildProbeArgs);
 * - the password, at runtime only: it arrives in $VALKEY_PASSWORD (a secretKeyRef, never in the
 *   Job spec). The script first exports it as VALKEYCLI_AUTH / REDISCLI_AUTH, which clients that
 *   read their password from the environment use. valkey-benchmark ≤ 9 and redis-benchmark 7 do
 *   not: they only take `-a`, so when the probe answers NOAUTH the script falls back to
 *   `-a "$VALKEY_PASSWORD"`, expanded inside the pod. That argv is visible only inside the pod's
 *   own PID namespace (one container, no shareProcessNamespace) and to root on the node; it is
 *   never part of the manifest, the Pulumi state or the log. `### vbench-auth method=...` says
 *   which way was used.
 * - wall time of each run in ms (GNU/busybox `date +%s%N`; else /proc/uptime at 10 ms; else
 *   whole seconds) and the core's re-run rule (benchmarks/run/rerun-rule.ts rerunStep, written
 *   again in awk because it runs in the pod): a run whose window min(wall, requests / rps) is
 *   shorter than minDurationSeconds is re-run with ceil(rate × min × 1.1) requests, capped at
 *   maxRequests, at most MAX_RERUNS times. The log parser replays rerunStep over the logged
 *   runs and fails if the script decided differently.
 * - `workload.repeat` rounds (runsOf): every test once per round, the tests interleaved across the
 *   rounds (set get incr set get incr …), each run's frames naming its round; the parser turns
 *   the rounds into medians with min–max (run-spread.ts).
 * - the client's CPU: the shell's `times` (its waited-for children's user + system time, the
 *   children's rusage) before and after each run, in the end frame as `cpu_ms`; and once, the
 *   CPUs the pod may use (`nproc`, its affinity) and its cgroup CPU quota (`cpus` frame), so the
 *   parser can say how busy the client was (client-cpu.ts).
 * - the framing of benchmarks/run/log-frames.ts around every run; exit status 1 when any run failed, 2 when the
 *   target never answered, 3 when authentication failed.
 */
import { buildBenchmarkArgs, buildProbeArgs, type BenchmarkTarget } from "../../benchmarks/run/benchmark-args.js";
import { MAX_RERUNS } from "../../benchmarks/run/rerun-rule.js";
import { runsOf, type Workload } from "../../vocabulary/workload.js";
import { FRAME_PREFIX, PASSWORD_ENV } from "../../benchmarks/run/log-frames.js";
import { renderShellFile, shellFile } from "../../pod/shell-file.js";

/** The script's file in pod/scripts. */
const SCRIPT = "benchmark-job.sh";

export interface BenchmarkScriptOptions {
  workload: Workload;
  mode: "cluster" | "replication";
  /** Replication: the primary Service; cluster: the client Service (the client follows MOVED via --cluster). */
  target: { host: string; port: number };
  /** The benchmark client executable. @default "valkey-benchmark" (the server image's) */
  client?: string;
  /** Give up when the target has not answered a PING run for this long. @default 300 */
  waitSeconds?: number;
  /** Kill one benchmark run after this long (uses `timeout` when the image has it). @default 3600 */
  runTimeoutSeconds?: number;
  /**
   * Client pods of the Indexed Job running this script. Above 1 every test starts behind a
   * barrier (the script's `barrier`: each pod INCRs `vbench:barrier:<job uid>:<test>:ready` on
   * the target and polls it until it equals the pod count; then the first pod to
   * `SET ... :start <now + margin> NX` fixes the start time every pod reads back and sleeps
   * until. No RBAC: the pods cannot read the Job, but they all reach the target. Node clocks are
   * NTP-synced (Amazon Time Sync on EKS), so the pods start within clock skew plus up to a second
   * of polling. Two keys per test, expiring after an hour, land in the keyspace under test.
   * Re-runs of a short test are not re-synchronised). @default 1
   */
  clientPods?: number;
  /** The CLI the barrier uses (the server image's). @default "valkey-cli" */
  cli?: string;
  /** Seconds between the last pod arriving at a barrier and the shared start. @default 3 */
  startMarginSeconds?: number;
  /** Give up when not every pod arrived at a barrier within this long. @default 600 */
  barrierWaitSeconds?: number;
}

/** Env var carrying the Job's uid (downward API: the pod's `batch.kubernetes.io/controller-uid` label). */
export const RUN_ID_ENV = "VBENCH_RUN_ID";

function positive(name: string, v: number): number {
  if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${name} must be a whole number ≥ 1 (got ${v})`);
  return v;
}

/**
 * An argument list the script splits on spaces (with globbing off): refused when an argument is
 * empty or holds a space, a quote, a glob or another character sh would read (a host name, a
 * port, a flag, a number never does).
 */
function argList(what: string, args: readonly string[]): string {
  for (const a of args) {
    if (!/^[A-Za-z0-9_.:,/@+=-]+$/.test(a)) {
      throw new RangeError(`${what}: argument '${a}' must be non-empty and hold no space, quote or shell character`);
    }
  }
  return args.join(" ");
}

/** One line per test: the test and the core's argv for it without `-n <requests>` (the script adds it per run). */
function testArgs(w: Workload, target: BenchmarkTarget): string {
  return w.tests
    .map((test) => {
      const args = buildBenchmarkArgs(w, target, test, w.requests);
      const n = args.indexOf("-n");
      return `${test} ${argList(`benchmark arguments of ${test}`, [...args.slice(0, n), ...args.slice(n + 2)])}`;
    })
    .join("\n");
}

/** The environment variables the script reads, named in it: a rename on either side fails here, not in a pod. */
function checkScriptEnv(): void {
  const text = shellFile(SCRIPT);
  for (const name of [PASSWORD_ENV, RUN_ID_ENV]) {
    if (!text.includes(`\${${name}`)) throw new Error(`pod/scripts/${SCRIPT} does not read $${name}`);
  }
}

/** Builds the script; throws RangeError for a workload or target the core would reject. */
export function buildBenchmarkScript(o: BenchmarkScriptOptions): string {
  const w = o.workload;
  if (w.tests.length === 0) throw new RangeError("the workload has no tests");
  if (!(w.minDurationSeconds >= 0) || !Number.isFinite(w.minDurationSeconds)) {
    throw new RangeError(`minDurationSeconds must be a finite number ≥ 0 (got ${w.minDurationSeconds})`);
  }
  checkScriptEnv();
  const target: BenchmarkTarget = { host: o.target.host, port: o.target.port, cluster: o.mode === "cluster" };
  const cli = [o.cli ?? "valkey-cli", "-h", target.host, "-p", String(target.port), ...(target.cluster ? ["-c"] : [])];
  return renderShellFile(SCRIPT, {
    target: `${o.target.host}:${o.target.port}`,
    bin: o.client ?? "valkey-benchmark",
    min_duration: String(w.minDurationSeconds),
    max_requests: positive("maxRequests", w.maxRequests),
    max_reruns: MAX_RERUNS,
    frame_prefix: FRAME_PREFIX,
    wait_s: positive("waitSeconds", o.waitSeconds ?? 300),
    run_timeout_s: positive("runTimeoutSeconds", o.runTimeoutSeconds ?? 3600),
    probe_args: argList("probe arguments", buildProbeArgs(target)),
    test_args: testArgs(w, target),
    tests: w.tests.join(" "),
    rounds: positive("repeat", runsOf(w)),
    requests: positive("requests", w.requests),
    pods: positive("clientPods", o.clientPods ?? 1),
    cli_args: argList("barrier cli arguments", cli),
    start_margin_s: positive("startMarginSeconds", o.startMarginSeconds ?? 3),
    barrier_wait_s: positive("barrierWaitSeconds", o.barrierWaitSeconds ?? 600),
  });
}
