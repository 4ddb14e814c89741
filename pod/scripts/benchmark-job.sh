#!/bin/sh
# The benchmark Job's script (pod/scripts/benchmark-job.sh in valkey-on-eks; rendered by
# components/benchmark/job-script.ts, whose module comment says what each part does and why).
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
set -u
# @values target bin min_duration max_requests max_reruns frame_prefix wait_s run_timeout_s probe_args test_args tests rounds requests pods cli_args start_margin_s barrier_wait_s
# Environment: VALKEY_PASSWORD (a secretKeyRef; may be empty), and with pods > 1 VBENCH_RUN_ID
# (the Job's uid, downward API) and JOB_COMPLETION_INDEX (the Indexed Job's).
TMP=$(mktemp -d 2>/dev/null) || TMP="${TMPDIR:-/tmp}/vbench.$$"
mkdir -p "$TMP" || exit 1
trap 'rm -rf "$TMP"' EXIT
say() { printf '%s%s\n' "$frame_prefix" "$*"; }
# The last lines of a file, each as a `stderr` frame.
stderr_frames() { tail -n "$2" "$1" | tr -d '\r' | while IFS= read -r l; do say "stderr $l"; done; }
# Milliseconds: GNU/busybox `date +%s%N`; else /proc/uptime at 10 ms; else whole seconds.
now_ms() {
  n=$(date +%s%N 2>/dev/null) || n=''
  case "$n" in
    ''|*[!0-9]*) ;;
    *) if [ ${#n} -gt 12 ]; then echo "${n%??????}"; return; fi ;;
  esac
  if [ -r /proc/uptime ]; then awk '{ printf "%.0f\n", $1 * 1000 }' /proc/uptime; return; fi
  echo "$(( $(date +%s) * 1000 ))"
}
bounded() {
  secs=$1; shift
  if command -v timeout >/dev/null 2>&1; then timeout "$secs" "$@"; else "$@"; fi
}

# --- the password from the environment; `-a` only when the client refuses that (NOAUTH) ---------
method=none
if [ -n "${VALKEY_PASSWORD:-}" ]; then
  method="env"
  VALKEYCLI_AUTH="$VALKEY_PASSWORD"; REDISCLI_AUTH="$VALKEY_PASSWORD"; export VALKEYCLI_AUTH REDISCLI_AUTH
fi
# Word splitting of the rendered argument lists is intended: the renderer refuses an argument
# holding a space or a glob character (components/benchmark/job-script.ts).
set -f
bench() {
  secs=$1; shift
  if [ "$method" = argv ]; then bounded "$secs" "$bin" -a "$VALKEY_PASSWORD" "$@"; else bounded "$secs" "$bin" "$@"; fi
}
say "version client=$("$bin" --version 2>&1 | head -n 1)"
AUTH_RE='NOAUTH|WRONGPASS|Authentication required|invalid password|invalid username-password'
deadline=$(( $(date +%s) + wait_s ))
while :; do
  # shellcheck disable=SC2086 # an argument list (above)
  bench 15 $probe_args >"$TMP/probe.out" 2>"$TMP/probe.err"
  rc=$?
  if grep -qiE "$AUTH_RE" "$TMP/probe.out" "$TMP/probe.err"; then
    if [ "$method" = env ]; then method=argv; continue; fi
    say "error authentication to $target failed (auth method $method)"
    stderr_frames "$TMP/probe.err" 5
    say "done status=3"
    exit 3
  fi
  if [ "$rc" -eq 0 ] && grep -q PING "$TMP/probe.out"; then break; fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    say "error $target did not answer PING within $wait_s s (last exit $rc)"
    stderr_frames "$TMP/probe.err" 5
    say "done status=2"
    exit 2
  fi
  sleep 2
done
say "auth method=$method"

# --- the CPUs the pod may use (its affinity) and its cgroup CPU quota (v2 cpu.max, else v1) ------
q=max; p=100000
if [ -r /sys/fs/cgroup/cpu.max ]; then read -r q p </sys/fs/cgroup/cpu.max
elif [ -r /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then q=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us); p=$(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us); fi
say "cpus nproc=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0) quota=${q:-max} period=${p:-100000}"

# --- with several client pods: every test starts behind a barrier they meet at on the target -----
cli() {
  # shellcheck disable=SC2086 # an argument list (above)
  bounded 15 $cli_args "$@"
}
barrier() {
  key="vbench:barrier:${VBENCH_RUN_ID:?VBENCH_RUN_ID is not set}:$1"
  if ! cli INCR "$key:ready" >/dev/null || ! cli EXPIRE "$key:ready" 3600 >/dev/null; then
    say "error barrier $1: INCR failed"; return 1
  fi
  until_t=$(( $(date +%s) + barrier_wait_s ))
  while :; do
    n=$(cli GET "$key:ready" | tr -dc '0-9')
    [ "${n:-0}" -ge "$pods" ] && break
    if [ "$(date +%s)" -ge "$until_t" ]; then say "error barrier $1: ${n:-0} of $pods client pods ready after $barrier_wait_s s"; return 1; fi
    sleep 1
  done
  cli SET "$key:start" "$(( $(date +%s) + start_margin_s ))" NX EX 3600 >/dev/null
  start=$(cli GET "$key:start" | tr -dc '0-9')
  say "barrier test=$1 pods=$pods index=${JOB_COMPLETION_INDEX:-?} start=$start"
  while [ "$(date +%s)" -lt "${start:-0}" ]; do sleep 1; done
}

# --- one framed, timed run of a test, and the re-run rule ----------------------------------------
# Two `times` outputs (line 2 of each: the children's user and system time as XmY.YYYs, in dash,
# bash and busybox ash alike): the CPU ms between them.
# shellcheck disable=SC2016 # an awk program: its $ are awk's
CPU_MS_AWK='
  FNR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub(/s$/, "", a[2]); t += a[1] * 60 + a[2] } v[++n] = t }
  END { if (n == 2) printf "%.0f\n", (v[2] - v[1]) * 1000 }'
# The re-run rule (benchmarks/run/rerun-rule.ts rerunStep, in awk): the next run's requests, or
# nothing to stop. Reads the run's --csv output.
# shellcheck disable=SC2016 # an awk program: its $ are awk's
NEXT_REQUESTS_AWK='
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
    printf "%.0f\n", nxt
  }'
# A test's arguments: its line of test_args ("<test> <arg> ..."), without the request count.
args_of() { printf '%s\n' "$test_args" | sed -n "s/^$1 //p"; }
run_once() {
  test=$1; run=$2; req=$3
  say "begin test=$test round=$round run=$run requests=$req"
  t0=$(now_ms)
  times >"$TMP/cpu0"
  args=$(args_of "$test")
  if [ -n "$args" ]; then
    # shellcheck disable=SC2086 # an argument list (above)
    bench "$run_timeout_s" $args -n "$req"
  else
    echo "unknown test $test" >&2; false
  fi >"$TMP/out" 2>"$TMP/err"
  rc=$?
  times >"$TMP/cpu1"
  t1=$(now_ms)
  cpu_ms=$(awk "$CPU_MS_AWK" "$TMP/cpu0" "$TMP/cpu1")
  cat "$TMP/out"
  say "end test=$test round=$round run=$run exit=$rc wall_ms=$((t1 - t0)) cpu_ms=${cpu_ms:-}"
  stderr_frames "$TMP/err" 20
  return "$rc"
}
next_requests() {
  awk -F, -v req="$1" -v wall_ms="$2" -v min="$min_duration" -v max="$max_requests" "$NEXT_REQUESTS_AWK" "$TMP/out"
}

# --- every test once per round (tests interleaved across the rounds), each re-run while the rule asks
status=0
round=1
while [ "$round" -le "$rounds" ]; do
  for test in $tests; do
    if [ "$pods" -gt 1 ] && ! barrier "$test-$round"; then status=1; continue; fi
    run=1; req=$requests
    if ! run_once "$test" "$run" "$req"; then status=1; continue; fi
    while [ "$run" -le "$max_reruns" ]; do
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
