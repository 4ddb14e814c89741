/**
 * The replication member's start decision, as a POSIX sh fragment of the entrypoint
 * (start-script.ts includes it when Sentinel is on). The same rendered text runs in the pods
 * and, under `sh`, in local mode (benchmarks/local/sentinel-topology.ts). The Sentinels' list and
 * this member's port are rendered in; the per-member values come in environment variables:
 *
 *   VALKEY_ANNOUNCE_HOST  this member's stable name/address (what Sentinel reports for it)
 *   VALKEY_ANNOUNCE_IP    optional second identity Sentinel may report (an IP)
 *   POD_NAME              the ordinal (`<statefulset>-<n>`)
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
 * 3. The Sentinels name ME (a restart faster than their failover finished). Read every reachable
 *    Sentinel's `SENTINEL MASTER` (flags s_down/o_down/failover_in_progress, last-ok-ping-reply,
 *    down-after-milliseconds) and `SENTINEL REPLICAS` (per replica: flags, role-reported,
 *    master-host/-port, master-link-status, as that replica's own INFO last told the Sentinel):
 *
 *    | live replicas¹ | data dir | Sentinel state                                   | decision                          |
 *    |----------------|----------|--------------------------------------------------|-----------------------------------|
 *    | ≥ 1            | any      | any (up, s_down, o_down, failover in progress)   | hand over²: never serve           |
 *    | ≥ 1            | data     | every answer NOGOODSLAVE, none failing over,     | primary (its data is the newest)  |
 *    |                |          | no replica master / linked elsewhere³            |                                   |
 *    | 0              | any      | a failover in progress, or a replica master /    | wait (bounded) for the Sentinels  |
 *    |                |          | linked elsewhere³                                | to name another, or to settle     |
 *    | 0              | any      | otherwise (even s_down/o_down: nobody to promote)| primary                           |
 *
 *    ¹ up in one Sentinel's view: flags without s_down/o_down/disconnected, role-reported slave.
 *    ² the member does not run while it decides, so every Sentinel sees it down after down-after
 *      and their own failover (one elected leader, sentinel.c) promotes a replica. Only when none
 *      has started down-after + handoverSlackSeconds after the script began (no quorum, an aborted
 *      failover) ask ONE Sentinel at a time for `SENTINEL FAILOVER` (the first that answers OK or
 *      INPROG; re-asked only after the retry interval). Sooner when the Sentinels' own failover is
 *      over without a switch: a Sentinel sees this member o_down and none is failing over, at two
 *      looks a second apart (a Sentinel that reaches o_down starts its failover in the same tick;
 *      after `-failover-abort-no-good-slave` or `-failover-abort-not-elected` none starts another
 *      for 2 × failover-timeout, sentinel.c sentinelStartFailoverIfNeeded: measured, the outage
 *      lasted until this script's grace ran out, restart + down-after + 5 s). Forcing at once was measured to race the
 *      Sentinels' own failover: a second replica promoted, two role:master for ~0.2 s. Wait until
 *      the Sentinels name another member, start as its replica; past the wait, fail with a clear
 *      message (the pod restarts and decides again).
 *    ³ role-reported master, or master-link-status ok to a master that is not this member (it is
 *      not running while this runs, so such a link goes elsewhere).
 *    Why a restarted primary with live replicas never serves, however fast it came back: a
 *    Sentinel reconnects to a dropped instance at most once per second (sentinel.c,
 *    sentinelReconnectInstance) and counts it down from its last OK ping (last_avail_time, up to
 *    1 s before the kill), so a restart inside down-after can still be marked s_down, and the
 *    failover then demotes a primary that took writes meanwhile: measured, 144–367 acknowledged
 *    writes lost and two members answering role:master for ~10 s. Handing over costs a failover
 *    (seconds of write stop) and loses at most what the replicas had not yet received at the
 *    kill; an empty data dir (lost volume) must never serve over replicas that hold the data.
 * 4. No reachable Sentinel knows a primary: only ordinal 0 with an empty data dir (the very
 *    first start; or a new stack's data restore.sh placed, marked `restore-pending`, which this
 *    decision removes) becomes primary, after a short grace for the Sentinels to come up, and only
 *    if no Sentinel answered with an error (a NOAUTH Sentinel may know a primary). Everyone
 *    else (ordinal > 0, or ordinal 0 holding data, which may be a primary demoted while the
 *    Sentinels were away) waits and fails after the bounded wait.
 */
import { shQuote } from "./sh-cli.js";
import { RESTORE_PENDING_MARKER } from "./restore-script.js";

/** The Sentinel master name the stack uses unless told otherwise. */
export const DEFAULT_MASTER_NAME = "valkey-primary";

export interface ReplicationStartOptions {
  masterName?: string;
  /** The Sentinels the member asks (`host:port` each); at least one. */
  sentinels?: readonly string[];
  /** This member's port. @default 6379 */
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
  /** Seconds past down-after a named primary waits for the Sentinels' own failover before asking SENTINEL FAILOVER. @default 5 */
  handoverSlackSeconds?: number;
  /** Seconds the cli may take per Sentinel (connect + reply). @default 3 */
  cliTimeoutSeconds?: number;
  /**
   * `restore.from` is set: ordinal 0 may also become the first primary on data restore.sh placed
   * (`restore-pending`), and the decision removes the marker. Off, the rendered text is the same
   * as before the restore existed (a stack without it keeps its ConfigMap). @default false
   */
  restore?: boolean;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`replication start: ${name} must be a whole number ≥ 1 (got ${value})`);
  return value;
}

/** The sh lines; expects `fail`, `nl` and (with auth) `$password_file` from the surrounding script. */
export function renderReplicationStartBlock(o: ReplicationStartOptions): string[] {
  const masterName = o.masterName ?? DEFAULT_MASTER_NAME;
  if (!/^[A-Za-z0-9._-]+$/.test(masterName))
    throw new Error(`replication start: masterName '${masterName}' must match [A-Za-z0-9._-]+`);
  const sentinels = o.sentinels ?? [];
  if (sentinels.length === 0) throw new Error("replication start: sentinels is empty (the Sentinels' host:port list)");
  for (const s of sentinels) {
    if (!/^[^\s,:']+:\d+$/.test(s)) throw new Error(`replication start: sentinel '${s}' is not host:port`);
  }
  const wait = positiveInt("waitSeconds", o.waitSeconds ?? 120);
  const grace = positiveInt("firstStartGraceSeconds", o.firstStartGraceSeconds ?? 15);
  const agree = positiveInt("agreementSeconds", o.agreementSeconds ?? 10);
  const retry = positiveInt("failoverRetrySeconds", o.failoverRetrySeconds ?? 60);
  const cliTimeout = positiveInt("cliTimeoutSeconds", o.cliTimeoutSeconds ?? 3);
  const handoverSlack = positiveInt("handoverSlackSeconds", o.handoverSlackSeconds ?? 5);
  return [
    `# --- replication member: ask the Sentinels who the primary is (see replication-start.ts) ---`,
    `master_name=${shQuote(masterName)}`,
    `sentinels=${shQuote(sentinels.join(" "))}`,
    `self_host="\${VALKEY_ANNOUNCE_HOST:-}"`,
    `[ -n "$self_host" ] || fail "VALKEY_ANNOUNCE_HOST (this member's stable name) is not set"`,
    `self_port=${positiveInt("port", o.port ?? 6379)}`,
    `pod_name="\${POD_NAME:-}"; ordinal="\${pod_name##*-}"`,
    `case "$ordinal" in ''|*[!0-9]*) fail "cannot tell this member's ordinal: set POD_NAME (<statefulset>-<n>)" ;; esac`,
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
    `# The Sentinels' full view of this master (SENTINEL MASTER / SENTINEL REPLICAS, see the header). Sets`,
    `#   live: most replicas one Sentinel reports up (flags without s_down/o_down/disconnected, role-reported slave)`,
    `#   moved: replicas up that report role master, or master-link-status ok to a master that is not this member`,
    `#   inprog: Sentinels whose master flags carry failover_in_progress; down: "sentinel=flags;" of those with s_down/o_down`,
    `#   odown: Sentinels whose master flags carry o_down`,
    `#   last_ok / down_after: the largest last-ok-ping-reply and down-after-milliseconds reported (for the log)`,
    `sentinel_state() {`,
    `  live=0; moved=0; inprog=0; odown=0; down=""; last_ok=0; down_after=0`,
    `  for s in $sentinels; do`,
    `    m=$(scli "\${s%:*}" "\${s##*:}" SENTINEL MASTER "$master_name") || continue`,
    `    set -- $(printf '%s\\n' "$m" | awk 'NR % 2 == 1 { key = $0; next } key == "flags" { f = $0 } key == "last-ok-ping-reply" { l = $0 } key == "down-after-milliseconds" { d = $0 } END { if (f != "") print f, l + 0, d + 0 }')`,
    `    [ $# -eq 3 ] || continue`,
    `    case ",$1," in *,failover_in_progress,*) inprog=$((inprog + 1)) ;; esac`,
    `    case ",$1," in *,o_down,*) odown=$((odown + 1)) ;; esac`,
    `    case ",$1," in *,s_down,*|*,o_down,*) down="$down $s=$1;" ;; esac`,
    `    [ "$2" -gt "$last_ok" ] && last_ok=$2`,
    `    [ "$3" -gt "$down_after" ] && down_after=$3`,
    `    r=$(scli "\${s%:*}" "\${s##*:}" SENTINEL REPLICAS "$master_name") || continue`,
    `    set -- $(printf '%s\\n' "$r" | awk -v h="$self_host" -v ip="\${VALKEY_ANNOUNCE_IP:-}" -v p="$self_port" '`,
    `      function flush() { if (seen && fl !~ /s_down|o_down|disconnected/) { if (role == "slave") n++; if (role == "master" || (ls == "ok" && !((mh == h || mh == ip) && mp == p))) mv++ } seen = 0; fl = ""; role = ""; mh = ""; mp = ""; ls = "" }`,
    `      NR % 2 == 1 { key = $0; if (key == "name") { flush(); seen = 1 } next }`,
    `      key == "flags" { fl = $0 } key == "role-reported" { role = $0 } key == "master-host" { mh = $0 } key == "master-port" { mp = $0 } key == "master-link-status" { ls = $0 }`,
    `      END { flush(); print n + 0, mv + 0 }')`,
    `    [ "$1" -gt "$live" ] && live=$1`,
    `    moved=$((moved + $2))`,
    `  done`,
    `}`,
    `started=$(now)`,
    `primary=""`,
    `while :; do`,
    `  ask_sentinels`,
    `  elapsed=$(( $(now) - started ))`,
    `  if [ -n "$answers" ]; then`,
    `    if [ "$(distinct)" -eq 1 ] || [ "$elapsed" -ge ${agree} ]; then primary=$(most_frequent); break; fi`,
    `    say "the Sentinels disagree on the primary ($(printf '%s' "$answers" | sed '/^$/d' | tr '\\n' ';')): asking again"`,
    ...(o.restore === true
      ? [
          `  elif [ "$ordinal" -eq 0 ] && [ -z "$errors" ] && { ! has_data || [ -e "$data_dir/${RESTORE_PENDING_MARKER}" ]; } && [ "$elapsed" -ge ${grace} ]; then`,
          `    say "no Sentinel of [$sentinels] knows a primary for $master_name ($reachable reachable) and this is ordinal 0 with an empty data dir, or a new stack's restored one: first start, becoming the primary"`,
        ]
      : [
          `  elif [ "$ordinal" -eq 0 ] && [ -z "$errors" ] && ! has_data && [ "$elapsed" -ge ${grace} ]; then`,
          `    say "no Sentinel of [$sentinels] knows a primary for $master_name ($reachable reachable) and this is ordinal 0 with an empty data dir: first start, becoming the primary"`,
        ]),
    `    break`,
    `  fi`,
    `  [ "$elapsed" -lt ${wait} ] || fail "no Sentinel of [$sentinels] named a primary for $master_name within ${wait}s ($reachable reachable\${errors:+; errors:$errors}); only ordinal 0 with an empty data dir may become the first primary"`,
    `  sleep 1`,
    `done`,
    ...(o.restore === true
      ? [
          `# A restore's first start is decided (primary, or a replica of the one the Sentinels name): never again.`,
          `rm -f "$data_dir/${RESTORE_PENDING_MARKER}"`,
        ]
      : []),
    `if [ -n "$primary" ] && is_me "$primary"; then`,
    `  sentinel_state`,
    `  if has_data; then what="its data dir holds data"; else what="its data dir is empty"; fi`,
    `  seen="\${down:+seen down by:$down }$inprog Sentinel(s) failing over, last ok ping \${last_ok}ms ago of down-after \${down_after}ms"`,
    `  if [ "$live" -gt 0 ]; then`,
    `    # Not running, this member is seen down by every Sentinel after down-after: their own failover (one`,
    `    # elected leader) comes first; a forced one beside it could promote a second replica.`,
    `    handover_grace=$(( (down_after + 999) / 1000 + ${handoverSlack} ))`,
    `    if has_data; then`,
    `      say "the Sentinels still name this member ($primary) the primary ($seen), but $live live replica(s) are linked: a restarted primary never serves (the Sentinels may still fail it over); waiting for their failover (SENTINEL FAILOVER if none started within \${handover_grace}s), then rejoining as a replica"`,
    `    else`,
    `      say "the Sentinels still name this member ($primary) the primary, but its data dir is empty and $live live replica(s) hold the data: waiting for their failover (SENTINEL FAILOVER if none started within \${handover_grace}s), never serving an empty primary"`,
    `    fi`,
    `    asked=0; stalled=0`,
    `    while is_me "$primary"; do`,
    `      [ $(( $(now) - started )) -lt ${wait} ] || fail "the Sentinels still name this member ($primary, $what) the primary after ${wait}s and no failover happened; refusing to start as a primary beside $live live replica(s)"`,
    `      # Their own failover is over without a switch, or cannot start: seen o_down and nobody failing over,`,
    `      # twice in a row (a Sentinel that reaches o_down tries at once; after an abort, NOGOODSLAVE or not`,
    `      # elected, none tries again for 2 × failover-timeout). Then ask at once, not at handover_grace.`,
    `      sentinel_state`,
    `      if [ "$odown" -gt 0 ] && [ "$inprog" -eq 0 ]; then stalled=$((stalled + 1)); else stalled=0; fi`,
    `      if { [ $(( $(now) - started )) -ge "$handover_grace" ] || [ "$stalled" -ge 2 ]; } && { [ "$asked" -eq 0 ] || [ $(( $(now) - asked )) -ge ${retry} ]; }; then`,
    `        [ "$stalled" -lt 2 ] || say "the Sentinels see this member o_down but none is failing over (their own failover aborted or held back): asking for one now"`,
    `        nogood=0`,
    `        if [ "$inprog" -eq 0 ]; then`,
    `          for s in $sentinels; do`,
    `            reply=$(scli "\${s%:*}" "\${s##*:}" SENTINEL FAILOVER "$master_name") || continue`,
    `            say "SENTINEL FAILOVER via $s: $reply"`,
    `            case "$reply" in OK*|INPROG*) asked=$(now); break ;; *NOGOODSLAVE*) nogood=$((nogood + 1)) ;; esac`,
    `          done`,
    `        fi`,
    `        if [ "$asked" -eq 0 ] && [ "$nogood" -gt 0 ] && [ "$moved" -eq 0 ] && has_data && [ $(( $(now) - started )) -ge "$handover_grace" ]; then`,
    `          say "no Sentinel finds a replica fit to promote (NOGOODSLAVE), none is failing over and no replica is master or linked to another primary: this member holds the newest data"`,
    `          break`,
    `        fi`,
    `      fi`,
    `      sleep 1`,
    `      ask_sentinels`,
    `      if [ -n "$answers" ]; then primary=$(most_frequent); fi`,
    `    done`,
    `  else`,
    `    while is_me "$primary" && { [ "$inprog" -gt 0 ] || [ "$moved" -gt 0 ]; }; do`,
    `      [ $(( $(now) - started )) -lt ${wait} ] || fail "the Sentinels name this member ($primary) the primary but a failover is still in progress or a replica is master elsewhere after ${wait}s; not starting a second primary"`,
    `      say "no live replica, but $inprog Sentinel(s) report a failover in progress and $moved replica(s) are master or linked to another primary: waiting"`,
    `      sleep 1`,
    `      ask_sentinels`,
    `      if [ -n "$answers" ]; then primary=$(most_frequent); fi`,
    `      sentinel_state`,
    `    done`,
    `    if is_me "$primary"; then say "the Sentinels name this member the primary; $what but no live replica is known ($seen): starting as primary"; fi`,
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
