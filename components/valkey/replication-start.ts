/**
 * The replication member's start decision, as a POSIX sh fragment of the entrypoint
 * (start-script.ts includes it when Sentinel is on). The same rendered text runs in the pods
 * and, under `sh`, in local mode (benchmarks/local/sentinel-topology.ts), with the per-member
 * values in environment variables:
 *
 *   VALKEY_SENTINELS      `host:port` list (space or comma separated); default rendered in
 *   VALKEY_ANNOUNCE_HOST  this member's stable name/address (what Sentinel reports for it)
 *   VALKEY_ANNOUNCE_IP    optional second identity Sentinel may report (an IP)
 *   VALKEY_PORT           this member's port (default rendered in)
 *   POD_NAME / VALKEY_ORDINAL  the ordinal (`<statefulset>-<n>` or n)
 *   VALKEY_CLI            the cli binary (default valkey-cli; redis-cli speaks the same)
 *   REDISCLI_AUTH         set by the script from the password file: the Sentinels' password
 *                         reaches the cli through the environment, never argv
 *
 * Decision (written to the replication include as `replicaof <host> <port>`, or left empty):
 * 1. Ask every Sentinel `SENTINEL GET-MASTER-ADDR-BY-NAME`, with a connect timeout. While the
 *    reachable ones disagree (a failover in flight), ask again, up to the agreement wait; then
 *    the most frequent answer wins.
 * 2. A known primary that is not me: start as its replica. A restarted old primary therefore
 *    always rejoins as a replica of the promoted one.
 * 3. The Sentinels name ME: with data in my data dir, start as primary (a restart faster than
 *    down-after-milliseconds). With an EMPTY data dir (lost volume) while the Sentinels know a
 *    live replica: never start as primary (the replicas would full-sync my empty dataset and
 *    drop theirs). Ask ONE Sentinel at a time for `SENTINEL FAILOVER` (the first that answers
 *    OK or INPROG; re-asked only after the retry interval, so two Sentinels never run two
 *    manual failovers at once), wait until the Sentinels name another member, then start as
 *    its replica; past the wait, fail with a clear message (the pod restarts and tries again,
 *    and meanwhile the Sentinels see this member down and fail over by themselves). With no
 *    live replica known there is nothing to protect: start as primary.
 * 4. No reachable Sentinel knows a primary: only ordinal 0 with an empty data dir (the very
 *    first start) becomes primary, after a short grace for the Sentinels to come up, and only
 *    if no Sentinel answered with an error (a NOAUTH Sentinel may know a primary). Everyone
 *    else (ordinal > 0, or ordinal 0 holding data, which may be a primary demoted while the
 *    Sentinels were away) waits and fails after the bounded wait.
 */
import { shQuote } from "./start-script.js";

/** The Sentinel master name the stack uses unless told otherwise. */
export const DEFAULT_MASTER_NAME = "valkey-primary";

export interface ReplicationStartOptions {
  masterName?: string;
  /** Default for $VALKEY_SENTINELS (`host:port` each). */
  sentinels?: readonly string[];
  /** Default for $VALKEY_PORT. @default 6379 */
  port?: number;
  /** The data directory checked for an existing dataset. */
  dataDir: string;
  /** The include file the decision is written to. */
  includeFile: string;
  /** Seconds to wait for a Sentinel answer / a failover away from an empty primary. @default 120 */
  waitSeconds?: number;
  /** Seconds ordinal 0 waits for a Sentinel before taking the first-start primary role. @default 15 */
  firstStartGraceSeconds?: number;
  /** Seconds reachable Sentinels may disagree before the most frequent answer is taken. @default 10 */
  agreementSeconds?: number;
  /** Seconds between two SENTINEL FAILOVER requests for an empty primary. @default 60 */
  failoverRetrySeconds?: number;
  /** Seconds the cli may take per Sentinel (connect + reply). @default 3 */
  cliTimeoutSeconds?: number;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`replication start: ${name} must be a whole number ≥ 1 (got ${value})`);
  return value;
}

/** The sh lines; expects `fail`, `nl` and (with auth) `$password_file` from the surrounding script. */
export function renderReplicationStartBlock(o: ReplicationStartOptions): string[] {
  const masterName = o.masterName ?? DEFAULT_MASTER_NAME;
  if (!/^[A-Za-z0-9._-]+$/.test(masterName)) throw new Error(`replication start: masterName '${masterName}' must match [A-Za-z0-9._-]+`);
  for (const s of o.sentinels ?? []) {
    if (!/^[^\s,:]+:\d+$/.test(s)) throw new Error(`replication start: sentinel '${s}' is not host:port`);
  }
  const wait = positiveInt("waitSeconds", o.waitSeconds ?? 120);
  const grace = positiveInt("firstStartGraceSeconds", o.firstStartGraceSeconds ?? 15);
  const agree = positiveInt("agreementSeconds", o.agreementSeconds ?? 10);
  const retry = positiveInt("failoverRetrySeconds", o.failoverRetrySeconds ?? 60);
  const cliTimeout = positiveInt("cliTimeoutSeconds", o.cliTimeoutSeconds ?? 3);
  return [
    `# --- replication member: ask the Sentinels who the primary is (see replication-start.ts) ---`,
    `master_name=${shQuote(masterName)}`,
    `sentinels=$(printf '%s' "\${VALKEY_SENTINELS:-${(o.sentinels ?? []).join(" ")}}" | tr ',' ' ')`,
    `[ -n "$sentinels" ] || fail "VALKEY_SENTINELS (the Sentinels' host:port list) is empty"`,
    `self_host="\${VALKEY_ANNOUNCE_HOST:-}"`,
    `[ -n "$self_host" ] || fail "VALKEY_ANNOUNCE_HOST (this member's stable name) is not set"`,
    `self_port="\${VALKEY_PORT:-${o.port ?? 6379}}"`,
    `ordinal="\${VALKEY_ORDINAL:-}"`,
    `if [ -z "$ordinal" ]; then pod_name="\${POD_NAME:-}"; ordinal="\${pod_name##*-}"; fi`,
    `case "$ordinal" in ''|*[!0-9]*) fail "cannot tell this member's ordinal: set POD_NAME (<statefulset>-<n>) or VALKEY_ORDINAL" ;; esac`,
    `cli_bin="\${VALKEY_CLI:-valkey-cli}"`,
    `data_dir=${shQuote(o.dataDir)}`,
    `repl_include=${shQuote(o.includeFile)}`,
    `if [ -n "\${password_file:-}" ]; then REDISCLI_AUTH=$(cat "$password_file"); export REDISCLI_AUTH; fi`,
    `say() { echo "start.sh: $*" >&2; }`,
    `now() { date +%s; }`,
    `scli() { h=$1; p=$2; shift 2`,
    `  if command -v timeout >/dev/null 2>&1; then timeout ${cliTimeout} "$cli_bin" -h "$h" -p "$p" --raw "$@" 2>/dev/null`,
    `  else "$cli_bin" -h "$h" -p "$p" --raw "$@" 2>/dev/null; fi; }`,
    `# Sets reachable (Sentinels that answered), answers ("host port" lines, one per Sentinel that knows a`,
    `# primary) and errors (error replies, e.g. NOAUTH: such a Sentinel may know a primary we cannot see).`,
    `ask_sentinels() {`,
    `  reachable=0; answers=""; errors=""`,
    `  for s in $sentinels; do`,
    `    out=$(scli "\${s%:*}" "\${s##*:}" SENTINEL GET-MASTER-ADDR-BY-NAME "$master_name") || continue`,
    `    reachable=$((reachable + 1))`,
    `    set -- $out`,
    `    if [ $# -eq 0 ]; then continue; fi`,
    `    case "$#:\${2:-x}" in 2:*[!0-9]*) ;; 2:*) answers="$answers$1 $2$nl"; continue ;; esac`,
    `    errors="$errors $s: $(printf '%s' "$out" | tr '\n' ' ');"`,
    `  done`,
    `}`,
    `distinct() { printf '%s' "$answers" | sed '/^$/d' | sort -u | wc -l | tr -d ' '; }`,
    `most_frequent() { printf '%s' "$answers" | sed '/^$/d' | sort | uniq -c | sort -rn | head -n 1 | awk '{print $2" "$3}'; }`,
    `is_me() { [ "\${1#* }" = "$self_port" ] && { [ "\${1% *}" = "$self_host" ] || [ "\${1% *}" = "\${VALKEY_ANNOUNCE_IP:-}" ]; }; }`,
    `has_data() { [ -s "$data_dir/dump.rdb" ] || [ -s "$data_dir/appendonly.aof" ] || [ -n "$(ls -A "$data_dir/appendonlydir" 2>/dev/null)" ]; }`,
    `# Replicas the Sentinels know that are up (not s_down/o_down/disconnected): the most any reachable Sentinel reports.`,
    `live_replicas() {`,
    `  best=0`,
    `  for s in $sentinels; do`,
    `    n=$(scli "\${s%:*}" "\${s##*:}" SENTINEL REPLICAS "$master_name" | awk 'NR % 2 == 1 { key = $0; next } key == "flags" && $0 !~ /s_down|o_down|disconnected/ { n++ } END { print n + 0 }') || continue`,
    `    [ "$n" -gt "$best" ] && best=$n`,
    `  done`,
    `  echo "$best"`,
    `}`,
    `started=$(now)`,
    `primary=""`,
    `while :; do`,
    `  ask_sentinels`,
    `  elapsed=$(( $(now) - started ))`,
    `  if [ -n "$answers" ]; then`,
    `    if [ "$(distinct)" -eq 1 ] || [ "$elapsed" -ge ${agree} ]; then primary=$(most_frequent); break; fi`,
    `    say "the Sentinels disagree on the primary ($(printf '%s' "$answers" | sed '/^$/d' | tr '\\n' ';')): asking again"`,
    `  elif [ "$ordinal" -eq 0 ] && [ -z "$errors" ] && ! has_data && [ "$elapsed" -ge ${grace} ]; then`,
    `    say "no Sentinel of [$sentinels] knows a primary for $master_name ($reachable reachable) and this is ordinal 0 with an empty data dir: first start, becoming the primary"`,
    `    break`,
    `  fi`,
    `  [ "$elapsed" -lt ${wait} ] || fail "no Sentinel of [$sentinels] named a primary for $master_name within ${wait}s ($reachable reachable\${errors:+; errors:$errors}); only ordinal 0 with an empty data dir may become the first primary"`,
    `  sleep 1`,
    `done`,
    `if [ -n "$primary" ] && is_me "$primary" && ! has_data; then`,
    `  live=$(live_replicas)`,
    `  if [ "$live" -gt 0 ]; then`,
    `    say "the Sentinels still name this member ($primary) the primary, but its data dir is empty and $live live replica(s) hold the data: asking a Sentinel for SENTINEL FAILOVER first, never serving an empty primary"`,
    `    asked=0`,
    `    while is_me "$primary"; do`,
    `      [ $(( $(now) - started )) -lt ${wait} ] || fail "the Sentinels still name this empty member ($primary) the primary after ${wait}s and no failover happened; refusing to start as an empty primary over replicas that hold the data"`,
    `      if [ "$asked" -eq 0 ] || [ $(( $(now) - asked )) -ge ${retry} ]; then`,
    `        for s in $sentinels; do`,
    `          reply=$(scli "\${s%:*}" "\${s##*:}" SENTINEL FAILOVER "$master_name") || continue`,
    `          say "SENTINEL FAILOVER via $s: $reply"`,
    `          case "$reply" in OK*|INPROG*) asked=$(now); break ;; esac`,
    `        done`,
    `      fi`,
    `      sleep 1`,
    `      ask_sentinels`,
    `      if [ -n "$answers" ]; then primary=$(most_frequent); fi`,
    `    done`,
    `  else`,
    `    say "the Sentinels name this member the primary; its data dir is empty but no live replica is known: starting as primary"`,
    `  fi`,
    `fi`,
    `if [ -n "$primary" ] && ! is_me "$primary"; then`,
    `  say "primary of $master_name is $primary: starting as its replica"`,
    `  printf 'replicaof %s %s\\n' "\${primary% *}" "\${primary#* }" > "$repl_include.tmp"`,
    `else`,
    `  say "starting as the primary of $master_name"`,
    `  : > "$repl_include.tmp"`,
    `fi`,
    `mv -f "$repl_include.tmp" "$repl_include"`,
    `unset REDISCLI_AUTH`,
  ];
}
