#!/bin/sh
# Sentinel entrypoint (pod/scripts/sentinel-start.sh in valkey-on-eks; see pod/sentinel-start-script.ts).
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
set -eu
umask 077
fail() { echo "sentinel-start.sh: $*" >&2; exit 1; }
say() { echo "sentinel-start.sh: $*" >&2; }
# @include lib-conf-secret.sh
# password_file is empty without auth.
# @values template state master_name password_file resolve_wait info_period local_host port cli_timeout nudge_retry
# @include lib-cli.sh
# @include lib-flat-field.sh
mkdir -p "$(dirname "$state")"
if [ ! -s "$state" ]; then
  say "first start: writing $state from $template"
  [ -r "$template" ] || fail "$template is not readable"
  [ -n "${VALKEY_ANNOUNCE_HOST:-}" ] || fail "VALKEY_ANNOUNCE_HOST (this Sentinel's stable DNS name) is not set"
  cat "$template" > "$state.tmp"
  printf 'sentinel announce-ip %s\n' "$(conf_quote "$VALKEY_ANNOUNCE_HOST")" >> "$state.tmp"
  if [ -n "$password_file" ]; then
    read_password
    printf 'requirepass %s\nsentinel sentinel-pass %s\nsentinel auth-pass %s %s\n' "$quoted" "$quoted" "$master_name" "$quoted" >> "$state.tmp"
    unset quoted
  fi
  mv -f "$state.tmp" "$state"
else
  say "keeping the Sentinel state in $state"
fi
chmod 600 "$state"
primary=$(awk '$1 == "sentinel" && $2 == "monitor" { print $4; exit }' "$state")
[ -n "$primary" ] || fail "$state monitors no primary"
# An address literal needs no lookup (getent hosts answers "not found" for an IP absent from /etc/hosts).
case "$primary" in *:*) literal=yes ;; *[!0-9.]*) literal=no ;; *) literal=yes ;; esac
if [ "$literal" = no ] && command -v getent >/dev/null 2>&1; then
  waited=0
  until getent hosts "$primary" >/dev/null 2>&1; do
    [ "$waited" -lt "$resolve_wait" ] || { say "$primary does not resolve after ${resolve_wait}s; starting anyway"; break; }
    sleep 1
    waited=$((waited + 1))
  done
fi
# Sentinel reads a primary's and its replicas' INFO every 10 s (every second only while the primary
# is down or a replica's link is): a replica released to a promotable priority, or its link back up,
# stays unknown to it that long. info_period is the period this Sentinel uses instead; `SENTINEL
# DEBUG info-period` is the only way to set it and a restart forgets it, so it is set at every start,
# in the background from before the exec ($$ becomes the server's pid), until it is OK or the server
# is gone (then a zombie under valkey-server, as replication-start.sh's priority release).
set_info_period() {
  tries=0
  while kill -0 "$$" 2>/dev/null && [ "$tries" -lt 120 ]; do
    reply=$(local_cli SENTINEL DEBUG info-period "$info_period" 2>&1) || reply="no answer: $reply"
    [ "$reply" = OK ] && { say "SENTINEL DEBUG info-period $info_period: OK"; return 0; }
    tries=$((tries + 1))
    sleep 0.5 2>/dev/null || sleep 1
  done
  kill -0 "$$" 2>/dev/null && say "SENTINEL DEBUG info-period $info_period not set after $tries tries (last reply: $reply); it reads INFO every 10 s"
  return 0
}
( set_info_period ) </dev/null &
# A failover the Sentinels hold back. After an attempt that did not finish (no replica fit to
# promote, an election nobody won) no Sentinel tries again for 2 x failover-timeout (sentinel.c
# sentinelStartFailoverIfNeeded): on real pods a zone lost within two minutes of an aborted attempt
# waited 27-30 s for its failover, and a split vote costs the election timeout plus that wait. The
# restarted primary's start script asks for one (replication-start.sh), but a pod that does not come
# back (its zone gone) asks nothing. So every second, for as long as the server runs, this Sentinel
# looks at its own view and its peers' (SENTINEL SENTINELS): when it sees the primary o_down (the
# quorum agrees it is down) and no Sentinel it reaches is failing over, twice in a row, it asks for
# the failover itself (SENTINEL FAILOVER: no election, a new epoch every Sentinel follows). Only one
# Sentinel asks: the first, by announced address, of those that answered (each one works that out
# the same way), never one in TILT, and only when its own view holds a replica the failover could
# pick (forced_failover_can_pick, below); it looks again at most every nudge_retry seconds while
# none is picked (e.g. every data member restarting).
master_flags() { cli -h "${1%:*}" -p "${1##*:}" --raw SENTINEL MASTER "$master_name" 2>/dev/null | flat_field flags; }
# Whether a failover this Sentinel is asked for now could pick a replica. SENTINEL FAILOVER
# restarts the asked Sentinel's subjective-down clock (Valkey 9.1.2, measured: 15.2 s before the ask,
# 0 after it), and a Sentinel picks only a replica whose link to the primary has been down less than
# that clock + 10 x down-after. So once the replicas lost the primary longer ago than 10 x
# down-after, the asked failover aborts (-failover-abort-no-good-slave) and that Sentinel never picks
# them for this outage: every later ask answers NOGOODSLAVE. Sentinel's own retry (2 x
# failover-timeout) keeps the clock and picks them. The margin (2 s) covers the INFO the view is
# from (a second old at most, whole seconds) and the state machine's next tick.
forced_failover_can_pick() {
  down_after=$(local_cli --raw SENTINEL MASTER "$master_name" 2>/dev/null | flat_field down-after-milliseconds)
  case "$down_after" in '' | *[!0-9]*) return 1 ;; esac
  local_cli --raw SENTINEL REPLICAS "$master_name" 2>/dev/null | awk -v limit=$((down_after * 10 - 2000)) '
    function judge() { if (seen && flags !~ /s_down|o_down|disconnected/ && prio > 0 && down <= limit) fit = 1 }
    NR % 2 == 1 { k = $0; next }
    k == "name" { judge(); seen = 1; flags = ""; prio = 0; down = 0 }
    k == "flags" { flags = $0 }
    k == "slave-priority" { prio = $0 + 0 }
    k == "master-link-down-time" { down = $0 + 0 }
    END { judge(); exit fit ? 0 : 1 }'
}
# Whether the server ($$ after the exec) still runs: kill -0 alone also succeeds on a zombie, which
# is what a server whose parent exited without reaping it stays where PID 1 reaps nothing.
server_runs() {
  kill -0 "$$" 2>/dev/null || return 1
  [ -r "/proc/$$/stat" ] || return 0
  # Its state, the field after the ") " closing the command name; shell built-ins only (ten times a second).
  IFS= read -r stat <"/proc/$$/stat" 2>/dev/null || return 1
  stat=${stat##*) }
  case "${stat%% *}" in Z | X | '') return 1 ;; esac
}
nudge_stalled_failover() {
  set +e # a failed look is the next second's to retry, never the end of the loop
  me="${VALKEY_ANNOUNCE_HOST:-$local_host}:$port"
  stalled=0
  asked_at=0
  while :; do
    # A second between looks, in tenths, each one checking the server: the loop ends within a
    # tenth of a second of it (a stopped pod or a local run leaves nothing behind).
    i=0
    while [ "$i" -lt 10 ] && server_runs; do
      sleep 0.1 2>/dev/null || sleep 1
      i=$((i + 1))
    done
    server_runs || return 0
    own=$(master_flags "$local_host:$port")
    case ",$own," in *,o_down,*) ;; *) stalled=0 && continue ;; esac
    case "$(local_cli --raw INFO sentinel 2>/dev/null)" in *sentinel_tilt:1*) stalled=0 && continue ;; esac
    busy=""
    case ",$own," in *,failover_in_progress,*) busy=$me ;; esac
    answered=$me
    for peer in $(local_cli --raw SENTINEL SENTINELS "$master_name" 2>/dev/null | awk 'NR % 2 == 1 { k = $0; next } k == "ip" { ip = $0 } k == "port" { print ip ":" $0 }'); do
      flags=$(master_flags "$peer")
      [ -n "$flags" ] || continue
      answered="$answered $peer"
      case ",$flags," in *,failover_in_progress,*) busy=$peer ;; esac
    done
    if [ -n "$busy" ]; then stalled=0 && continue; fi
    stalled=$((stalled + 1))
    [ "$stalled" -ge 2 ] || continue
    first=$(printf '%s\n' "$answered" | tr ' ' '\n' | LC_ALL=C sort | head -n 1)
    [ "$first" = "$me" ] || continue
    [ $(($(date +%s) - asked_at)) -ge "$nudge_retry" ] || continue
    asked_at=$(date +%s)
    if ! forced_failover_can_pick; then
      say "the primary is o_down and no Sentinel of $answered is failing over, but no replica is promotable with its link down less than 10 x down-after-milliseconds ago: not asking (an asked failover would abort and this Sentinel would pick none for this outage); the Sentinels' own retry after 2 x failover-timeout can pick one"
      continue
    fi
    # Looked at again right before asking: the peers' answers and the replicas' view take seconds on a
    # starved node, and a primary back meanwhile must not be failed over (on real pods a restarted
    # primary took writes its replicas confirmed, then this ask promoted one of them and 36
    # WAIT-confirmed writes were lost). Its own flag clears within a tick of the primary answering.
    case ",$(master_flags "$local_host:$port")," in
      *,o_down,*) ;;
      *) stalled=0 && say "the primary answers again: not asking for a failover" && continue ;;
    esac
    reply=$(local_cli --raw SENTINEL FAILOVER "$master_name" 2>&1) || reply="no answer: $reply"
    say "the primary is o_down and no Sentinel of $answered is failing over (an attempt aborted, or held back for 2 x failover-timeout): SENTINEL FAILOVER: $reply"
  done
}
( nudge_stalled_failover ) </dev/null &
exec valkey-server "$state" --sentinel
