#!/bin/sh
# The replication member's start decision (pod/scripts/replication-start.sh in valkey-on-eks;
# the decision table is in pod/replication-start.ts): asks the Sentinels who the primary is and
# writes `replicaof <host> <port>`, or nothing, into $repl_include. start.sh includes it (`# @include`);
# it uses start.sh's fail, nl, password_file and data_dir, and its values master_name, sentinels,
# self_port, repl_include, wait_s, grace_s, agree_s, retry_s, handover_slack_s,
# sentinel_cli_timeout, addr_wait_s, restore, restore_marker, self_local_host and released_priority.
# shellcheck disable=SC2154 # set by start.sh's # @values (pod/shell-file.ts)
self_host="${VALKEY_ANNOUNCE_HOST:-}"
[ -n "$self_host" ] || fail "VALKEY_ANNOUNCE_HOST (this member's stable name) is not set"
pod_name="${POD_NAME:-}"; ordinal="${pod_name##*-}"
case "$ordinal" in ''|*[!0-9]*) fail "cannot tell this member's ordinal: set POD_NAME (<statefulset>-<n>)" ;; esac
cli_bin="${VALKEY_CLI:-valkey-cli}"
if [ -n "${password_file:-}" ]; then REDISCLI_AUTH=$(cat "$password_file"); export REDISCLI_AUTH; fi
say() { echo "start.sh: $*" >&2; }
now() { date +%s; }
scli() { h=$1; p=$2; shift 2
  if command -v timeout >/dev/null 2>&1; then timeout "$sentinel_cli_timeout" "$cli_bin" -h "$h" -p "$p" --raw "$@" 2>/dev/null
  else "$cli_bin" -h "$h" -p "$p" --raw "$@" 2>/dev/null; fi; }
# Sets reachable (Sentinels that answered), answers ("host port" lines, one per Sentinel that knows a
# primary) and errors (error replies, e.g. NOAUTH: such a Sentinel may know a primary we cannot see).
ask_sentinels() {
  reachable=0; answers=""; errors=""
  for s in $sentinels; do
    out=$(scli "${s%:*}" "${s##*:}" SENTINEL GET-MASTER-ADDR-BY-NAME "$master_name") || continue
    reachable=$((reachable + 1))
    # shellcheck disable=SC2086 # splits a Sentinel's reply into its words on purpose
    set -- $out
    if [ $# -eq 0 ]; then continue; fi
    case "$#:${2:-x}" in 2:*[!0-9]*) ;; 2:*) answers="$answers$1 $2$nl"; continue ;; esac
    errors="$errors $s: $(printf '%s' "$out" | tr '
' ' ');"
  done
}
distinct() { printf '%s' "$answers" | sed '/^$/d' | sort -u | wc -l | tr -d ' '; }
most_frequent() { printf '%s' "$answers" | sed '/^$/d' | sort | uniq -c | sort -rn | head -n 1 | awk '{print $2" "$3}'; }
is_me() { [ "${1#* }" = "$self_port" ] && { [ "${1% *}" = "$self_host" ] || [ "${1% *}" = "${VALKEY_ANNOUNCE_IP:-}" ]; }; }
# With a restore, ordinal 0 may also become the first primary on the data restore.sh placed.
restore_pending() { [ "$restore" = yes ] && [ -e "$data_dir/$restore_marker" ]; }
if [ "$restore" = yes ]; then first_start_data="an empty data dir, or a new stack's restored one"; else first_start_data="an empty data dir"; fi
has_data() { [ -s "$data_dir/dump.rdb" ] || [ -s "$data_dir/appendonly.aof" ] || [ -n "$(ls -A "$data_dir/appendonlydir" 2>/dev/null)" ]; }
# The Sentinels' full view of this master (SENTINEL MASTER / SENTINEL REPLICAS, see the header). Sets
#   live: most replicas one Sentinel reports up (flags without s_down/o_down/disconnected, role-reported slave)
#         and linked to a primary since they started (master-link-down-time >= 0; -1000 is a replica that
#         restarted and never linked: it holds only its own AOF, maybe behind this member's data)
#   moved: replicas up that report role master, or master-link-status ok to a master that is not this member
#   inprog: Sentinels whose master flags carry failover_in_progress; down: "sentinel=flags;" of those with s_down/o_down
#   odown: Sentinels whose master flags carry o_down
#   last_ok / down_after: the largest last-ok-ping-reply and down-after-milliseconds reported (for the log)
#   tilted: Sentinels in TILT (INFO sentinel: sentinel_tilt:1), left out of all of the above: for 30 s
#           such a Sentinel changes no flag, so it can show replicas that died meanwhile up and linked
#   fresh: how many Sentinels not in TILT had their view read
#   fresh_list: which of them name this member the primary, the ones asked for a failover (one in TILT
#           would accept it and act only when it leaves; one naming another member would fail that one
#           over, the serving primary, or a previous one in an epoch another failover already used)
sentinel_state() {
  live=0; moved=0; inprog=0; odown=0; down=""; last_ok=0; down_after=0; tilted=0; fresh=0; fresh_list=""
  for s in $sentinels; do
    i=$(scli "${s%:*}" "${s##*:}" INFO sentinel) || continue
    case "$i" in *sentinel_tilt:1*) tilted=$((tilted + 1)); continue ;; esac
    m=$(scli "${s%:*}" "${s##*:}" SENTINEL MASTER "$master_name") || continue
    # shellcheck disable=SC2046 # splits awk's one-line summary into the positional parameters on purpose
    set -- $(printf '%s\n' "$m" | awk 'NR % 2 == 1 { key = $0; next } key == "flags" { f = $0 } key == "last-ok-ping-reply" { l = $0 } key == "down-after-milliseconds" { d = $0 } key == "ip" { h = $0 } key == "port" { p = $0 } END { if (f != "" && h != "" && p != "") print f, l + 0, d + 0, h, p }')
    [ $# -eq 5 ] || continue
    if is_me "$4 $5"; then names_me=yes; else names_me=""; fi
    case ",$1," in *,failover_in_progress,*) inprog=$((inprog + 1)) ;; esac
    case ",$1," in *,o_down,*) odown=$((odown + 1)) ;; esac
    case ",$1," in *,s_down,*|*,o_down,*) down="$down $s=$1;" ;; esac
    [ "$2" -gt "$last_ok" ] && last_ok=$2
    [ "$3" -gt "$down_after" ] && down_after=$3
    r=$(scli "${s%:*}" "${s##*:}" SENTINEL REPLICAS "$master_name") || continue
    # shellcheck disable=SC2046 # splits awk's one-line summary into the positional parameters on purpose
    set -- $(printf '%s\n' "$r" | awk -v h="$self_host" -v ip="${VALKEY_ANNOUNCE_IP:-}" -v p="$self_port" '
      function flush() { if (seen && fl !~ /s_down|o_down|disconnected/) { if (role == "slave" && ld >= 0) n++; if (role == "master" || (ls == "ok" && !((mh == h || mh == ip) && mp == p))) mv++ } seen = 0; fl = ""; role = ""; mh = ""; mp = ""; ls = ""; ld = 0 }
      NR % 2 == 1 { key = $0; if (key == "name") { flush(); seen = 1 } next }
      key == "flags" { fl = $0 } key == "role-reported" { role = $0 } key == "master-host" { mh = $0 } key == "master-port" { mp = $0 } key == "master-link-status" { ls = $0 } key == "master-link-down-time" { ld = $0 + 0 }
      END { flush(); print n + 0, mv + 0 }')
    [ "$1" -gt "$live" ] && live=$1
    moved=$((moved + $2))
    fresh=$((fresh + 1))
    [ -z "$names_me" ] || fresh_list="$fresh_list $s"
  done
}
# sentinel_state, asked again while every Sentinel whose view was read is in TILT: a decision needs
# at least one view that is not frozen.
settled_state() {
  sentinel_state
  while [ "$fresh" -eq 0 ] && [ "$tilted" -gt 0 ]; do
    [ $(( $(now) - started )) -lt "$wait_s" ] || fail "every Sentinel that answers ($tilted) is still in TILT after ${wait_s}s: their view of the replicas is frozen; not deciding on it"
    say "every Sentinel that answers ($tilted) is in TILT (its view of the replicas is frozen): asking again"
    sleep 1
    sentinel_state
  done
}
# Waits, up to addr_wait_s, while a connect to host:port hangs (the cli's timeout ends it: exit 124). A
# restarted pod's DNS record keeps its old address for the record's TTL; a replica whose first connect
# goes there hangs until repl-timeout (60 s). An answer or a refusal ends the wait at once.
await_address() {
  command -v timeout >/dev/null 2>&1 || return 0
  addr_from=$(now)
  while :; do
    rc=0; timeout "$sentinel_cli_timeout" "$cli_bin" -h "$1" -p "$2" PING >/dev/null 2>&1 || rc=$?
    [ "$rc" -eq 124 ] || return 0
    if [ $(( $(now) - addr_from )) -ge "$addr_wait_s" ]; then
      say "the primary's address $1:$2 still drops connections after ${addr_wait_s}s: starting as its replica anyway"
      return 0
    fi
    say "the primary's address $1:$2 drops connections (no answer or refusal in ${sentinel_cli_timeout}s: its name may still resolve to a restarted pod's old address): asking again"
    sleep 1
  done
}
started=$(now)
primary=""
while :; do
  ask_sentinels
  elapsed=$(( $(now) - started ))
  if [ -n "$answers" ]; then
    if [ "$(distinct)" -eq 1 ] || [ "$elapsed" -ge "$agree_s" ]; then primary=$(most_frequent); break; fi
    say "the Sentinels disagree on the primary ($(printf '%s' "$answers" | sed '/^$/d' | tr '\n' ';')): asking again"
  elif [ "$ordinal" -eq 0 ] && [ -z "$errors" ] && { ! has_data || restore_pending; } && [ "$elapsed" -ge "$grace_s" ]; then
    say "no Sentinel of [$sentinels] knows a primary for $master_name ($reachable reachable) and this is ordinal 0 with $first_start_data: first start, becoming the primary"
    break
  fi
  [ "$elapsed" -lt "$wait_s" ] || fail "no Sentinel of [$sentinels] named a primary for $master_name within ${wait_s}s ($reachable reachable${errors:+; errors:$errors}); only ordinal 0 with an empty data dir may become the first primary"
  sleep 1
done
# A restore's first start is decided (primary, or a replica of the one the Sentinels name): never again.
if [ "$restore" = yes ]; then rm -f "$data_dir/$restore_marker"; fi
if [ -n "$primary" ] && is_me "$primary"; then
  settled_state
  if has_data; then what="its data dir holds data"; else what="its data dir is empty"; fi
  seen="${down:+seen down by:$down }$inprog Sentinel(s) failing over, last ok ping ${last_ok}ms ago of down-after ${down_after}ms"
  [ "$tilted" -eq 0 ] || seen="$seen, $tilted Sentinel(s) in TILT left out"
  if [ "$live" -gt 0 ]; then
    # Not running, this member is seen down by every Sentinel after down-after: their own failover (one
    # elected leader) comes first; a forced one beside it could promote a second replica.
    handover_grace=$(( (down_after + 999) / 1000 + handover_slack_s ))
    if has_data; then
      say "the Sentinels still name this member ($primary) the primary ($seen), but $live live replica(s) are linked: a restarted primary never serves (the Sentinels may still fail it over); waiting for their failover (SENTINEL FAILOVER if none started within ${handover_grace}s), then rejoining as a replica"
    else
      say "the Sentinels still name this member ($primary) the primary, but its data dir is empty and $live live replica(s) hold the data: waiting for their failover (SENTINEL FAILOVER if none started within ${handover_grace}s), never serving an empty primary"
    fi
    asked=0; stalled=0
    while is_me "$primary"; do
      [ $(( $(now) - started )) -lt "$wait_s" ] || fail "the Sentinels still name this member ($primary, $what) the primary after ${wait_s}s and no failover happened; refusing to start as a primary beside $live live replica(s)"
      # Their own failover is over without a switch, or cannot start: seen o_down and nobody failing over,
      # twice in a row (a Sentinel that reaches o_down tries at once; after an abort, NOGOODSLAVE or not
      # elected, none tries again for 2 × failover-timeout). Then ask at once, not at handover_grace.
      settled_state
      # Every replica that was linked when this member went down is gone now, and the ones up restarted
      # too (never linked since: their AOF may be behind this member's data): serve this data, hand over
      # nothing. An empty data dir keeps waiting (those replicas hold the data).
      if [ "$live" -eq 0 ] && [ "$inprog" -eq 0 ] && [ "$moved" -eq 0 ] && has_data; then
        say "no replica linked since its start is up any more (the replicas restarted too; their data may be behind this member's): starting as the primary with this member's data"
        break
      fi
      if [ "$odown" -gt 0 ] && [ "$inprog" -eq 0 ]; then stalled=$((stalled + 1)); else stalled=0; fi
      if { [ $(( $(now) - started )) -ge "$handover_grace" ] || [ "$stalled" -ge 2 ]; } && { [ "$asked" -eq 0 ] || [ $(( $(now) - asked )) -ge "$retry_s" ]; }; then
        [ "$stalled" -lt 2 ] || say "the Sentinels see this member o_down but none is failing over (their own failover aborted or held back): asking for one now"
        nogood=0
        if [ "$inprog" -eq 0 ]; then
          for s in $fresh_list; do
            reply=$(scli "${s%:*}" "${s##*:}" SENTINEL FAILOVER "$master_name") || continue
            say "SENTINEL FAILOVER via $s: $reply"
            case "$reply" in OK*|INPROG*) asked=$(now); break ;; *NOGOODSLAVE*) nogood=$((nogood + 1)) ;; esac
          done
        fi
        if [ "$asked" -eq 0 ] && [ "$nogood" -gt 0 ] && [ "$moved" -eq 0 ] && has_data && [ $(( $(now) - started )) -ge "$handover_grace" ]; then
          say "no Sentinel finds a replica fit to promote (NOGOODSLAVE), none is failing over and no replica is master or linked to another primary: this member holds the newest data"
          break
        fi
      fi
      sleep 1
      ask_sentinels
      if [ -n "$answers" ]; then primary=$(most_frequent); fi
    done
  else
    while is_me "$primary" && { [ "$inprog" -gt 0 ] || [ "$moved" -gt 0 ]; }; do
      [ $(( $(now) - started )) -lt "$wait_s" ] || fail "the Sentinels name this member ($primary) the primary but a failover is still in progress or a replica is master elsewhere after ${wait_s}s; not starting a second primary"
      say "no live replica, but $inprog Sentinel(s) report a failover in progress and $moved replica(s) are master or linked to another primary: waiting"
      sleep 1
      ask_sentinels
      if [ -n "$answers" ]; then primary=$(most_frequent); fi
      settled_state
    done
    if is_me "$primary"; then say "the Sentinels name this member the primary; $what but no live replica is known ($seen): starting as primary"; fi
  fi
fi
# A replica runs with replica-priority 0 (no Sentinel promotes it, SENTINEL FAILOVER included) until
# its first sync since this start is done: before that it holds only its own AOF, which can be behind
# the primary's data (every member crashed; it came back first). Then it takes released_priority.
# Run in the background from before the exec ($$ becomes valkey-server's pid); it ends once it has
# set the priority or the server is gone (it then waits as a zombie for valkey-server, PID 1 in the
# container, which reaps children around its own forks: one entry, no process; a loop that outlived
# its server was left behind by interrupted local runs).
release_priority() {
  while kill -0 "$$" 2>/dev/null; do
    r=$(scli "$self_local_host" "$self_port" INFO replication) || r=""
    case "$r" in
      *role:master*) break ;;
      *master_link_status:up*) case "$r" in *master_sync_in_progress:1*) ;; *) break ;; esac ;;
    esac
    # A fraction where sleep takes one (coreutils, busybox): a Sentinel that reads this member's INFO
    # between its link and the release sees it unpromotable until its next read (its INFO period,
    # sentinel-start.sh: 1 s, Valkey's own 10 s).
    sleep 0.2 2>/dev/null || sleep 1
  done
  if kill -0 "$$" 2>/dev/null; then
    reply=$(scli "$self_local_host" "$self_port" CONFIG SET replica-priority "$released_priority") || reply="no answer"
    say "first sync since this start done: CONFIG SET replica-priority $released_priority (a failover may pick this member now): $reply"
  fi
}
if [ -n "$primary" ] && ! is_me "$primary"; then
  await_address "${primary% *}" "${primary#* }"
  say "primary of $master_name is $primary: starting as its replica, with replica-priority 0 until its first sync"
  printf 'replicaof %s %s\nreplica-priority 0\n' "${primary% *}" "${primary#* }" > "$repl_include.tmp"
  mv -f "$repl_include.tmp" "$repl_include"
  ( release_priority ) </dev/null &
else
  say "starting as the primary of $master_name"
  : > "$repl_include.tmp"
  mv -f "$repl_include.tmp" "$repl_include"
fi
unset REDISCLI_AUTH
