/**
 * The POSIX sh script the benchmark Job's container runs (dash, busybox ash and bash all run
 * it). Every benchmark flag comes from the core's buildBenchmarkArgs; the script only adds:
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
   * barrier ({@link barrierScript}). @default 1
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

/**
 * The barrier before each test when several client pods run (sh). No RBAC: the pods cannot read
 * the Job, but they all reach the target, so they meet there. Each pod INCRs
 * `vbench:barrier:<job uid>:<test>:ready` and polls it until it equals the pod count; then the
 * first pod to `SET ... :start <now + margin> NX` fixes the start time (unix seconds) every pod
 * reads back and sleeps until. Node clocks are NTP-synced (Amazon Time Sync on EKS), so the pods
 * start within clock skew plus up to a second of polling. Two keys per test, expiring after an
 * hour, land in the keyspace under test. Re-runs of a short test are not re-synchronised.
 */
function barrierScript(o: BenchmarkScriptOptions, target: BenchmarkTarget, pods: number): string {
  const conn = [o.cli ?? "valkey-cli", "-h", target.host, "-p", String(target.port), ...(target.cluster ? ["-c"] : [])]
    .map(shellQuote)
    .join(" ");
  const margin = positive("startMarginSeconds", o.startMarginSeconds ?? 3);
  const wait = positive("barrierWaitSeconds", o.barrierWaitSeconds ?? 600);
  return `PODS=${pods}
cli() { bounded 15 ${conn} "$@"; }
barrier() {
  key="vbench:barrier:\${${RUN_ID_ENV}:?${RUN_ID_ENV} is not set}:$1"
  cli INCR "$key:ready" >/dev/null && cli EXPIRE "$key:ready" 3600 >/dev/null || { say "error barrier $1: INCR failed"; return 1; }
  until_t=$(( $(date +%s) + ${wait} ))
  while :; do
    n=$(cli GET "$key:ready" | tr -dc '0-9')
    [ "\${n:-0}" -ge "$PODS" ] && break
    if [ "$(date +%s)" -ge "$until_t" ]; then say "error barrier $1: \${n:-0} of $PODS client pods ready after ${wait} s"; return 1; fi
    sleep 1
  done
  cli SET "$key:start" "$(( $(date +%s) + ${margin} ))" NX EX 3600 >/dev/null
  start=$(cli GET "$key:start" | tr -dc '0-9')
  say "barrier test=$1 pods=$PODS index=\${JOB_COMPLETION_INDEX:-?} start=$start"
  while [ "$(date +%s)" -lt "\${start:-0}" ]; do sleep 1; done
}
`;
}

/** `'…'` with embedded single quotes escaped: safe for any string in POSIX sh. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function positive(name: string, v: number): number {
  if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${name} must be a whole number ≥ 1 (got ${v})`);
  return v;
}

/** One test's argv from the core, with the request count replaced by the script's "$req". */
function testCommand(o: BenchmarkScriptOptions, target: BenchmarkTarget, test: Workload["tests"][number]): string {
  const args = buildBenchmarkArgs(o.workload, target, test, o.workload.requests);
  const n = args.indexOf("-n");
  return args.map((a, i) => (i === n + 1 ? '"$req"' : shellQuote(a))).join(" ");
}

/** The awk form of rerunStep: prints the next run's requests, or nothing to stop. */
const NEXT_REQUESTS_AWK = `
  $0 ~ /^"?test"?,/ { next }
  !found && NF >= 8 && $1 ~ /^"[A-Z]/ { v = $2; gsub(/"/, "", v); rps = v; found = 1 }
  END {
    wall = wall_ms / 1000
    finite = (found && rps != "inf")
    r = finite ? rps + 0 : 0
    tw = (finite && r > 0) ? req / r : 0
    win = (tw < wall) ? tw : wall
    if (!(win < min)) exit
    if (finite) rate = r; else if (wall > 0) rate = req / wall; else rate = max * 10 + 1
    wanted = rate * min * 1.1
    c = int(wanted); if (c < wanted) c = c + 1
    nxt = (c > max) ? max : c
    if (nxt <= req) exit
    printf "%.0f\\n", nxt
  }`;

/**
 * The awk that turns two `times` outputs (before, after; line 2 of each: the children's user and
 * system time as `XmY.YYYs`, in dash, bash and busybox ash alike) into the CPU ms between them.
 */
const CHILD_CPU_MS_AWK = `
  FNR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub(/s$/, "", a[2]); t += a[1] * 60 + a[2] } v[++n] = t }
  END { if (n == 2) printf "%.0f\\n", (v[2] - v[1]) * 1000 }`;

/** The CPUs the pod may use (its affinity) and its cgroup CPU quota (v2 cpu.max, else v1), as the `cpus` frame. */
const CPUS_FRAME = `q=max; p=100000
if [ -r /sys/fs/cgroup/cpu.max ]; then read -r q p </sys/fs/cgroup/cpu.max
elif [ -r /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then q=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us); p=$(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us); fi
say "cpus nproc=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0) quota=\${q:-max} period=\${p:-100000}"`;

/** The header, the settings and the helpers every part of the script uses (say, now_ms, bounded). */
function preambleScript(o: BenchmarkScriptOptions, client: string, maxRequests: number): string {
  const w = o.workload;
  return `#!/bin/sh
# valkey-on-eks benchmark Job script (generated by components/benchmark/job-script.ts).
# ${o.mode} target ${o.target.host}:${o.target.port}; workload ${JSON.stringify(w.name)}.
set -u
BIN=${shellQuote(client)}
MIN=${shellQuote(String(w.minDurationSeconds))}
MAXREQ=${shellQuote(String(maxRequests))}
MAX_RERUNS=${MAX_RERUNS}
TMP=$(mktemp -d 2>/dev/null) || TMP="\${TMPDIR:-/tmp}/vbench.$$"
mkdir -p "$TMP" || exit 1
trap 'rm -rf "$TMP"' EXIT
say() { printf '${FRAME_PREFIX}%s\\n' "$*"; }
now_ms() {
  n=$(date +%s%N 2>/dev/null) || n=''
  case "$n" in
    ''|*[!0-9]*) ;;
    *) if [ \${#n} -gt 12 ]; then echo "\${n%??????}"; return; fi ;;
  esac
  if [ -r /proc/uptime ]; then awk '{ printf "%.0f\\n", $1 * 1000 }' /proc/uptime; return; fi
  echo "$(( $(date +%s) * 1000 ))"
}
bounded() {
  secs=$1; shift
  if command -v timeout >/dev/null 2>&1; then timeout "$secs" "$@"; else "$@"; fi
}
`;
}

/**
 * The password from the environment (then `-a` when the client refuses it: NOAUTH), the client's
 * version, and the bounded wait until the target answers the probe (exit 3: auth failed, 2: no answer).
 */
function authAndProbeScript(o: BenchmarkScriptOptions, probe: string, wait: number): string {
  const pw = PASSWORD_ENV;
  return `method=none
if [ -n "\${${pw}:-}" ]; then
  method=env
  VALKEYCLI_AUTH="$${pw}"; REDISCLI_AUTH="$${pw}"; export VALKEYCLI_AUTH REDISCLI_AUTH
fi
bench() {
  secs=$1; shift
  if [ "$method" = argv ]; then bounded "$secs" "$BIN" -a "$${pw}" "$@"; else bounded "$secs" "$BIN" "$@"; fi
}
say "version client=$("$BIN" --version 2>&1 | head -n 1)"
AUTH_RE='NOAUTH|WRONGPASS|Authentication required|invalid password|invalid username-password'
deadline=$(( $(date +%s) + ${wait} ))
while :; do
  bench 15 ${probe} >"$TMP/probe.out" 2>"$TMP/probe.err"
  rc=$?
  if grep -qiE "$AUTH_RE" "$TMP/probe.out" "$TMP/probe.err"; then
    if [ "$method" = env ]; then method=argv; continue; fi
    say "error authentication to ${o.target.host}:${o.target.port} failed (auth method $method)"
    tail -n 5 "$TMP/probe.err" | sed 's/^/${FRAME_PREFIX}stderr /'
    say "done status=3"
    exit 3
  fi
  if [ "$rc" -eq 0 ] && grep -q PING "$TMP/probe.out"; then break; fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    say "error ${o.target.host}:${o.target.port} did not answer PING within ${wait} s (last exit $rc)"
    tail -n 5 "$TMP/probe.err" | sed 's/^/${FRAME_PREFIX}stderr /'
    say "done status=2"
    exit 2
  fi
  sleep 2
done
say "auth method=$method"
`;
}

/** run_once (one framed, timed run of a test: `cases` picks its command) and next_requests (the re-run rule). */
function runFunctionsScript(cases: string): string {
  return `run_once() {
  test=$1; run=$2; req=$3
  say "begin test=$test round=$round run=$run requests=$req"
  t0=$(now_ms)
  times >"$TMP/cpu0"
  case "$test" in
${cases}
    *) echo "unknown test $test" >"$TMP/err"; false ;;
  esac >"$TMP/out" 2>"$TMP/err"
  rc=$?
  times >"$TMP/cpu1"
  t1=$(now_ms)
  cpu_ms=$(awk '${CHILD_CPU_MS_AWK}' "$TMP/cpu0" "$TMP/cpu1")
  cat "$TMP/out"
  say "end test=$test round=$round run=$run exit=$rc wall_ms=$((t1 - t0)) cpu_ms=\${cpu_ms:-}"
  tail -n 20 "$TMP/err" | tr -d '\\r' | sed 's/^/${FRAME_PREFIX}stderr /'
  return "$rc"
}
next_requests() {
  awk -F, -v req="$1" -v wall_ms="$2" -v min="$MIN" -v max="$MAXREQ" '${NEXT_REQUESTS_AWK}' "$TMP/out"
}
`;
}

/** Every test once per round (behind the barrier with `meet`), each re-run while the rule asks; the exit status. */
function roundsScript(tests: Workload["tests"], rounds: number, meet: string, requests: number): string {
  return `status=0
round=1
while [ "$round" -le ${rounds} ]; do
for test in ${tests.join(" ")}; do
${meet}  run=1; req=${requests}
  if ! run_once "$test" "$run" "$req"; then status=1; continue; fi
  while [ "$run" -le "$MAX_RERUNS" ]; do
    nxt=$(next_requests "$req" "$((t1 - t0))")
    [ -n "$nxt" ] || break
    run=$((run + 1)); req=$nxt
    if ! run_once "$test" "$run" "$req"; then status=1; break; fi
  done
done
round=$((round + 1))
done
say "done status=$status"
exit "$status"
`;
}

/** Builds the script; throws RangeError for a workload or target the core would reject. */
export function buildBenchmarkScript(o: BenchmarkScriptOptions): string {
  const w = o.workload;
  if (w.tests.length === 0) throw new RangeError("the workload has no tests");
  if (!(w.minDurationSeconds >= 0) || !Number.isFinite(w.minDurationSeconds)) {
    throw new RangeError(`minDurationSeconds must be a finite number ≥ 0 (got ${w.minDurationSeconds})`);
  }
  const target: BenchmarkTarget = { host: o.target.host, port: o.target.port, cluster: o.mode === "cluster" };
  const client = o.client ?? "valkey-benchmark";
  const wait = positive("waitSeconds", o.waitSeconds ?? 300);
  const runTimeout = positive("runTimeoutSeconds", o.runTimeoutSeconds ?? 3600);
  const probe = buildProbeArgs(target).map(shellQuote).join(" ");
  const cases = w.tests.map((t) => `    ${t}) bench ${runTimeout} ${testCommand(o, target, t)} ;;`).join("\n");
  const pods = positive("clientPods", o.clientPods ?? 1);
  const barrier = pods > 1 ? barrierScript(o, target, pods) : "";
  const meet = pods > 1 ? `  if ! barrier "$test-$round"; then status=1; continue; fi\n` : "";
  const rounds = positive("repeat", runsOf(w));
  // Checked in the order the script names them: maxRequests in its settings, requests in its loop.
  const maxRequests = positive("maxRequests", w.maxRequests);
  const requests = positive("requests", w.requests);
  return (
    preambleScript(o, client, maxRequests) +
    authAndProbeScript(o, probe, wait) +
    `${CPUS_FRAME}\n${barrier}` +
    runFunctionsScript(cases) +
    roundsScript(w.tests, rounds, meet, requests)
  );
}
