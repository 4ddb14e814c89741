#!/bin/sh
# preStop hook of a replication member under Sentinel (pod/scripts/replication-prestop.sh in valkey-on-eks).
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
# shellcheck disable=SC2030,SC2031 # cli_within (lib-cli.sh) sets cli_timeout in its subshell on purpose; named_by reads the script's
set -u
# @values port local_host timeout_s catch_up_s failover_retry_s master_name sentinels cli_timeout aim_lead_ms info_period_ms
self_host="${VALKEY_ANNOUNCE_HOST:-}"
# @include lib-hook-log.sh
# @include lib-cli.sh
# @include lib-flat-field.sh
now_s() { date +%s; }
# A tenth of a second where sleep takes fractions (coreutils, busybox), else a second.
nap() { sleep 0.1 2>/dev/null || sleep 1; }
# A fiftieth of a second (or a second): the look for the switch, each one a call per Sentinel.
short_nap() { sleep 0.02 2>/dev/null || sleep 1; }
# Milliseconds (GNU date); empty where date has no %N (busybox), and then nothing is aimed.
now_ms() { d=$(date +%s%3N 2>/dev/null) || return 0; case "$d" in *[!0-9]*) ;; *) echo "$d" ;; esac; }
deadline=$(($(now_s) + timeout_s))

role=$(local_cli --raw role 2>/dev/null | head -n 1)
[ "$role" = master ] || { log "not the primary (role: ${role:-unknown}); stopping"; exit 0; }
is_me() { [ "${1#* }" = "$port" ] && { [ "${1% *}" = "$self_host" ] || [ "${1% *}" = "${VALKEY_ANNOUNCE_IP:-}" ] || [ "${1% *}" = "$local_host" ]; }; }
# The primary Sentinel $1 names ("host port"), empty when it does not answer within $2 s (cli_timeout).
named_by() { cli_within "${2:-$cli_timeout}" -h "${1%:*}" -p "${1##*:}" --raw SENTINEL GET-MASTER-ADDR-BY-NAME "$master_name" 2>/dev/null | tr '\n' ' ' | sed 's/ *$//'; }

# Every way out releases what the steps below hold: the pause, the PING period, the aim's priority.
paused=""
ping_period=""
aim_target=""
aim_priority=""
hello_teller=""
hello_period=""
# shellcheck disable=SC2317 # the EXIT trap below runs it
release() {
  if [ -n "$paused" ]; then
    paused=""
    r=$(local_cli CLIENT UNPAUSE 2>&1) || true
    log "writes unpaused ($r)"
  fi
  if [ -n "$aim_priority" ]; then
    r=$(cli_within 1 -h "${aim_target% *}" -p "${aim_target#* }" CONFIG SET replica-priority "$aim_priority" 2>&1) || true
    log "replica-priority of $aim_target given back ($aim_priority: $r)"
    aim_priority=""
  fi
  if [ -n "$ping_period" ]; then
    r=$(local_cli CONFIG SET repl-ping-replica-period "$ping_period" 2>&1) || true
    ping_period=""
    log "replication PING period given back ($r)"
  fi
  if [ -n "$hello_period" ]; then
    r=$(cli_within 1 -h "${hello_teller%:*}" -p "${hello_teller##*:}" SENTINEL DEBUG publish-period "$hello_period" 2>&1) || true
    log "publish-period of Sentinel $hello_teller given back ($hello_period ms: $r)"
    hello_period=""
  fi
}
trap release EXIT
trap 'exit 1' INT TERM HUP

# The Sentinels in TILT (INFO sentinel: sentinel_tilt:1), read before any write is paused and again
# before each retry of step 3: one in TILT answers SENTINEL FAILOVER with OK and acts on it only once
# out of TILT (30 s or more; its timer ran late, as on a starved node), so it is neither the aim's
# Sentinel nor asked, while another answers out of TILT. When every one that answers is in TILT, they
# are asked anyway (the failover then starts as one leaves TILT).
tilted=""
read_tilt() {
  tilted=""
  calm=0
  for s in $sentinels; do
    case "$(cli_within 1 -h "${s%:*}" -p "${s##*:}" --raw INFO sentinel 2>/dev/null)" in
      *sentinel_tilt:1*) tilted="$tilted $s" ;;
      *sentinel_tilt:0*) calm=$((calm + 1)) ;;
    esac
  done
  [ -n "$tilted" ] || return 0
  if [ "$calm" -gt 0 ]; then
    log "Sentinel(s)$tilted in TILT (would accept a failover and act on it only once out of TILT): not asked"
  else
    log "every Sentinel that answers is in TILT (${tilted# }): asked anyway (the failover starts as one leaves TILT)"
    tilted=""
  fi
}
in_tilt() {
  case "$tilted " in *" $1 "*) return 0 ;; esac
  return 1
}
# The Sentinels that name another member the primary, read with the TILT states (before the pause and
# before each retry of step 3): SENTINEL FAILOVER fails over the primary the asked Sentinel names, so
# one whose view is behind (right after a switchover, before its hello arrives) would fail over the
# previous primary, a replica now, in a new epoch, instead of this member. Such a Sentinel is neither
# aimed with nor asked. One that does not answer is left to the ask (which names it silent). When
# every one that answers names another member, there is nothing to hand over: this member follows
# theirs at once (step 4), as they would have it do, rather than take writes nobody follows.
elsewhere=""
named_me=0
read_views() {
  elsewhere=""
  named_me=0
  for s in $sentinels; do
    n=$(named_by "$s" 1)
    case "$n" in *" "[0-9]*) if is_me "$n"; then named_me=$((named_me + 1)); else elsewhere="$elsewhere $s=${n% *}:${n#* }"; fi ;; esac
  done
  [ -z "$elsewhere" ] || log "Sentinel(s) naming another member the primary:$elsewhere; not asked (it would fail over that member)"
}
# Whether every Sentinel that answers names another member (nothing to hand over: follow theirs).
follow_only() { [ -n "$elsewhere" ] && [ "$named_me" -eq 0 ]; }
names_another() {
  case "$elsewhere " in *" $1="*) return 0 ;; esac
  return 1
}
read_tilt
read_views

# First, hold off the replication PING, so that nothing but the pause is left to do at the aimed
#    instant (step 0). The pause (step 1) does not stop this primary's replication PING (every
#    repl-ping-replica-period, 10 s by default; Valkey skips it only inside its own FAILOVER command
#    and a cluster's manual failover). One PING after the promoted replica left puts this server
#    and every replica still attached to it 14 bytes past the promotion point, and each then needs
#    a FULL resync from the new primary ("Partial resynchronization not accepted: Requested offset
#    for second ID was N+14, but I can reply up to N"), during which min-replicas-to-write refuses
#    every write (NOREPLICAS). So the PING is held off for the switchover (period 3600 s; the
#    writes still flowing meanwhile keep the link busy) and its period given back on every way out.
held=$(local_cli --raw CONFIG GET repl-ping-replica-period 2>/dev/null | sed -n 2p)
case "$held" in
  '' | *[!0-9]*) log "repl-ping-replica-period not read ($held); the replication PING is not held off" ;;
  *)
    r=$(local_cli CONFIG SET repl-ping-replica-period 3600 2>&1) || true
    if [ "$r" = OK ]; then ping_period=$held; else log "replication PING not held off ($r)"; fi
    ;;
esac
# 0. Aim (writes still flow). The Sentinel running the failover names the promoted replica only once
#    its next INFO of that replica shows role:master, and it reads each replica's INFO once a period
#    (1 s: sentinel-start.sh sets it; during a failover 1 s whatever is set), each at its own phase.
#    Unaimed, the failover waits 0-1 s for that read. Two things make the wait short: which replica
#    it promotes, and when. Which: the Sentinel picks the lowest replica-priority, then the largest
#    replication offset it last read (under writes, the replica it read last), so one replica (the
#    target) is given replica-priority 1 (the others keep theirs, all above 1) until the preStop
#    ends, and the pick no longer depends on read phases. When: once the first Sentinel has read the
#    target with that priority (its SENTINEL REPLICAS view), its view's info-refresh says when it
#    read the target last, so the next read goes out no sooner than a period after: the pause starts
#    aim_lead_ms before that, so its REPLICAOF NO ONE (the catch-up, then 2-3 Sentinel ticks) lands
#    first and that read confirms it. Bounded: at most 3 s watching for the view, then less than a
#    period waiting, all before any write is paused. Nothing is aimed (and the log says why) without
#    a ms clock, a Sentinel's view, or a target whose priority could be set.
leader=""
aim_at=""
steered=""
# The replicas in Sentinel $1's view, a line each: "ip port flags info-refresh slave-priority".
sentinel_view() {
  cli_within 1 -h "${1%:*}" -p "${1##*:}" --raw SENTINEL REPLICAS "$master_name" 2>/dev/null | tr -d '\r' | awk '
    function out() { if (ip != "") print ip, port, flags, refresh, prio }
    NR % 2 == 1 { k = $0; next }
    k == "name" { out(); ip = ""; port = ""; flags = ""; refresh = ""; prio = "" }
    k == "ip" { ip = $0 }
    k == "port" { port = $0 }
    k == "flags" { flags = $0 }
    k == "info-refresh" { refresh = $0 }
    k == "slave-priority" { prio = $0 }
    END { out() }'
}
# The target: the first replica the Sentinel sees up ("slave" alone in its flags) and promotable,
# when every other one it sees has a priority above 1 (or 0: never promoted).
pick_target() {
  printf '%s\n' "$1" | awk '
    $3 == "slave" && $5 > 0 && t == "" { t = $1 " " $2; next }
    $5 == 1 { low = 1 }
    END { if (t != "" && !low) print t }'
}
if [ "$aim_lead_ms" -gt 0 ] && [ -n "$(now_ms)" ] && ! follow_only; then
  for s in $sentinels; do
    in_tilt "$s" && continue
    names_another "$s" && continue
    view=$(sentinel_view "$s")
    [ -n "$view" ] || continue
    leader=$s
    aim_target=$(pick_target "$view")
    break
  done
  if [ -z "$leader" ]; then
    log "aim: no Sentinel answered SENTINEL REPLICAS; not aimed"
  elif [ -z "$aim_target" ]; then
    log "aim: no replica to steer the pick to (Sentinel $leader sees: $(printf '%s' "$view" | tr '\n' ';')); not aimed"
  else
    was=$(cli_within 1 -h "${aim_target% *}" -p "${aim_target#* }" --raw CONFIG GET replica-priority 2>/dev/null | sed -n 2p)
    case "$was" in
      '' | *[!0-9]*) log "aim: replica-priority of $aim_target not read ('$was'); not aimed" ;;
      *)
        # Given back on every way out, even when the set's answer is lost.
        aim_priority=$was
        r=$(cli_within 1 -h "${aim_target% *}" -p "${aim_target#* }" CONFIG SET replica-priority 1 2>&1)
        if [ "$r" = OK ]; then steered=1; else log "aim: replica-priority of $aim_target not set ($r); not aimed"; fi
        ;;
    esac
  fi
fi
# The lead grows with how slow this pod's own calls are: after the pause come 3-4 of them (the
# pause, the catch-up's INFO, SENTINEL FAILOVER) before the promotion, so on a starved node
# (measured on CI pods: each call 100-300 ms, the promotion sent 660 ms after a 500 ms lead) the
# lead is aim_lead_ms + 3 x the slowest SENTINEL REPLICAS call seen while watching, at most a period.
slowest=0
if [ -n "$steered" ]; then
  seen=""
  watch_until=$(($(now_ms) + 3000))
  while [ "$(now_ms)" -lt "$watch_until" ]; do
    # The ms since its last read of the target, once that read showed priority 1.
    t0=$(now_ms)
    refresh=$(sentinel_view "$leader" | awk -v ip="${aim_target% *}" -v port="${aim_target#* }" '$1 == ip && $2 == port && $5 == 1 { print $4 }')
    at=$(now_ms)
    [ $((at - t0)) -le "$slowest" ] || slowest=$((at - t0))
    case "$refresh" in '' | *[!0-9]*) ;; *) seen=$((at - refresh)) && break ;; esac
    short_nap
  done
  if [ -n "$seen" ]; then
    lead=$((aim_lead_ms + 3 * slowest))
    [ "$lead" -le "$info_period_ms" ] || lead=$info_period_ms
    next=$((seen + info_period_ms))
    while [ $((next - lead)) -le "$(now_ms)" ]; do next=$((next + info_period_ms)); done
    aim_at=$((next - lead))
    log "aim: Sentinel $leader sees $aim_target with replica-priority 1 (was $aim_priority) and so promotes it; read it $((at - seen)) ms ago, reads it next no sooner than in $((next - $(now_ms))) ms; pausing in $((aim_at - $(now_ms))) ms (lead $lead ms: $aim_lead_ms + 3 x the slowest SENTINEL REPLICAS call, $slowest ms)"
    # Most of the wait in one sleep (a loop of short naps on a starved node oversleeps), the rest in naps.
    rest=$((aim_at - $(now_ms) - 40))
    [ "$rest" -le 0 ] || sleep "$((rest / 1000)).$(printf '%03d' $((rest % 1000)))" 2>/dev/null || true
    while [ "$(now_ms)" -lt "$aim_at" ]; do short_nap; done
  else
    log "aim: Sentinel $leader did not read $aim_target's replica-priority 1 within 3 s; not aimed"
  fi
fi

# 1. Pause writes until the deadline at most; released on every way out (the replication PING
#    is held off already, before step 0).
pause_ms=$(((deadline - $(now_s)) * 1000))
r=$(local_cli CLIENT PAUSE "$pause_ms" WRITE 2>&1) || true
case "$r" in
  OK*) paused=1; log "writes paused for at most ${pause_ms} ms${aim_at:+ ($(($(now_ms) - aim_at)) ms after the aimed instant)}" ;;
  *) log "CLIENT PAUSE failed ($r); failing over without the pause (writes in flight may be lost)" ;;
esac

# 2. Until every replica holds this primary's final offset (bounded). The primary learns a replica's
#    offset from its acknowledgements, once a second, and while writes are paused it does not ask
#    sooner (WAIT sends no REPLCONF GETACK under CLIENT PAUSE WRITE: measured, WAIT 1 returned after
#    0.77-0.85 s, against ~1 ms unpaused). So each replica the primary still lists behind is asked
#    itself what it applied (INFO replication, slave_repl_offset), which it knows at once.
lagging="unknown"
# Whether the replica of an INFO replication slaveN line ("ip=...,port=...,state=...,offset=...")
# applied $offset, asked itself with a 1 s bound; one that does not answer is not asked again (a
# frozen or cut-off replica would otherwise hold every look for the cli timeout): the primary's
# view of it (its acks) still counts.
silent=""
applied() {
  r_ip=$(printf '%s' "$1" | sed -n 's/.*[:,]ip=\([^,]*\),.*/\1/p')
  r_port=$(printf '%s' "$1" | sed -n 's/.*,port=\([0-9]*\),.*/\1/p')
  [ -n "$r_ip" ] && [ -n "$r_port" ] || return 1
  case " $silent " in *" $r_ip:$r_port "*) return 1 ;; esac
  theirs=$(cli_within 1 -h "$r_ip" -p "$r_port" --raw INFO replication 2>/dev/null | tr -d '\r' | sed -n 's/^slave_repl_offset://p')
  [ -n "$theirs" ] || { silent="$silent $r_ip:$r_port"; return 1; }
  [ "$theirs" -ge "$offset" ]
}
if [ -n "$paused" ] && ! follow_only; then
  looks=0
  catch_up_until=$(($(now_s) + catch_up_s))
  [ "$catch_up_until" -le "$deadline" ] || catch_up_until=$deadline
  while [ "$(now_s)" -lt "$catch_up_until" ]; do
    looks=$((looks + 1))
    info=$(local_cli --raw INFO replication 2>/dev/null | tr -d '\r')
    offset=$(printf '%s\n' "$info" | sed -n 's/^master_repl_offset://p')
    replicas=$(printf '%s\n' "$info" | grep -c '^slave[0-9]*:')
    lagging=0
    if [ -n "$offset" ]; then
      for line in $(printf '%s\n' "$info" | grep '^slave[0-9]*:' | grep -v ",offset=$offset,"); do
        applied "$line" || lagging=$((lagging + 1))
      done
    fi
    if [ -n "$offset" ] && [ "$replicas" -gt 0 ] && [ "$lagging" -eq 0 ]; then
      log "all $replicas replicas at offset $offset (look $looks, a tenth of a second apart)"
      break
    fi
    nap
  done
  [ "$lagging" = 0 ] || log "replicas not all at the final offset after ${catch_up_s}s ($lagging behind of ${replicas:-?}); failing over anyway"
fi

# 3. Ask one Sentinel at a time (one naming this member the primary, read_views); again every second
#    while none accepts (NOGOODSLAVE: it does not
#    see a replica up yet; INPROG: a failover is running already, e.g. the one that made this
#    member primary a moment ago, still reconfiguring its replicas: it is taken as this hand-over
#    only once that Sentinel names another member), for failover_retry_s at most and never past the
#    deadline.
# A failover asked after the aimed read is confirmed a period later: said so, with the lead that
# missed (the log then tells a slow switchover from a slow Sentinel).
late() { [ "$((next - $(now_ms)))" -ge 0 ] || printf '; late: the promotion waits for the read after, lead %s ms' "$lead"; }
asked=""
retry_until=$(($(now_s) + failover_retry_s))
[ "$retry_until" -le "$deadline" ] || retry_until=$deadline
while :; do
  follow_only && break
  for s in $leader $sentinels; do
    in_tilt "$s" && continue
    names_another "$s" && continue
    reply=$(cli -h "${s%:*}" -p "${s##*:}" --raw SENTINEL FAILOVER "$master_name" 2>&1) || { log "Sentinel $s did not answer"; continue; }
    log "SENTINEL FAILOVER via $s: $reply${aim_at:+ ($(($(now_ms) - aim_at)) ms after the aimed pause, $((next - $(now_ms))) ms before the aimed read$(late))}"
    case "$reply" in
      OK*) asked=$s; break ;;
      INPROG*)
        now=$(named_by "$s")
        case "$now" in *" "[0-9]*) is_me "$now" || { asked=$s; break; } ;; esac
        ;;
    esac
  done
  if [ -n "$asked" ] || [ "$(now_s)" -ge "$retry_until" ]; then break; fi
  sleep 1
  read_tilt
  read_views
done
if [ -z "$asked" ] && follow_only; then
  log "no Sentinel that answers names this member the primary: following theirs"
elif [ -z "$asked" ]; then
  log "no Sentinel accepted the failover; stopping (the Sentinels fail over after down-after-milliseconds)"
  exit 0
fi

# 5. Every other Sentinel names the new primary too (the write endpoint follows a Sentinel
#    majority). The Sentinel that promoted tells the others with a hello it forces at the promotion
#    (they follow within ~0.1 s), but Valkey drops that forced hello when the reply to a hello sent
#    just before arrives after the promotion (sentinelPublishReplyCallback sets last_pub_time anew),
#    and the others then learn only at its next hello, publish-period (2 s) later (seen on real pods:
#    1 failover in 35, the write endpoint 2.8 s). So a Sentinel still naming this member 300 ms after
#    the teller named $2 gets the teller's publish-period lowered to 100 ms (SENTINEL DEBUG) until
#    it names the new primary (1 s at most); the period is given back on every way out.
# The Sentinels (other than $1, not in TILT) that still name this member, each asked with a 1 s
# bound; one that does not answer is not asked again (quiet: kept by the caller, not this subshell).
quiet=""
naming_me() {
  out=""
  for x in $sentinels; do
    [ "$x" != "$1" ] || continue
    in_tilt "$x" && continue
    case " $quiet " in *" $x "*) continue ;; esac
    n=$(named_by "$x" 1)
    case "$n" in
      '') out="$out -$x" ;;
      *) is_me "$n" && out="$out $x" ;;
    esac
  done
  printf '%s' "$out"
}
# Whether naming_me's answer $1 still lists a Sentinel naming this member (and notes the silent ones).
still_lag() {
  for x in $1; do case "$x" in -*) quiet="$quiet ${x#-}" ;; esac; done
  lag=$(printf '%s\n' "$1" | tr ' ' '\n' | grep -v '^-' | tr '\n' ' ' | sed 's/ *$//')
  [ -n "$lag" ]
}
spread_switch() {
  [ -n "$(now_ms)" ] || return 0
  until_ms=$(($(now_ms) + 300))
  while still_lag "$(naming_me "$1")" && [ "$(now_ms)" -lt "$until_ms" ] && [ "$(now_s)" -lt "$deadline" ]; do short_nap; done
  [ -n "$lag" ] || return 0
  was=$(cli_within 1 -h "${1%:*}" -p "${1##*:}" --raw SENTINEL DEBUG 2>/dev/null | flat_field PUBLISH-PERIOD)
  case "$was" in '' | *[!0-9]*) log "Sentinel(s) $lag still name this member; publish-period of $1 not read ('$was')" && return 0 ;; esac
  hello_teller=$1
  hello_period=$was
  r=$(cli_within 1 -h "${1%:*}" -p "${1##*:}" SENTINEL DEBUG publish-period 100 2>&1)
  [ "$r" = OK ] || { log "Sentinel(s) $lag still name this member; publish-period of $1 not lowered ($r)" && return 0; }
  log "Sentinel(s) $lag still name this member 300 ms after $1 named $2: its hellos every 100 ms (was $was ms) until they follow"
  until_ms=$(($(now_ms) + 1000))
  while still_lag "$(naming_me "$1")" && [ "$(now_ms)" -lt "$until_ms" ] && [ "$(now_s)" -lt "$deadline" ]; do short_nap; done
  if [ -n "$lag" ]; then log "Sentinel(s) $lag still name this member 1 s later"; else log "every Sentinel not in TILT that answers names $2"; fi
}

# 4. Once another member is primary: follow it, then release the held writes (READONLY now), then
#    step 5.
while [ "$(now_s)" -lt "$deadline" ]; do
  for s in $asked $sentinels; do
    now=$(named_by "$s")
    case "$now" in *" "[0-9]*) ;; *) continue ;; esac
    is_me "$now" && continue
    log "switchover done: $s names $now the primary${aim_target:+ (aimed at $aim_target)}"
    r=$(local_cli REPLICAOF "${now% *}" "${now#* }" 2>&1) || true
    log "REPLICAOF ${now% *} ${now#* }: $r"
    release
    spread_switch "$s" "$now"
    exit 0
  done
  short_nap
done
log "no other member became primary within ${timeout_s}s; stopping anyway"
exit 0
