#!/bin/sh
# preStop hook of a replication member under Sentinel (pod/scripts/replication-prestop.sh in valkey-on-eks).
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
set -u
# @values port local_host timeout_s catch_up_s failover_retry_s master_name sentinels cli_timeout aim_lead_ms
self_host="${VALKEY_ANNOUNCE_HOST:-}"
# @include lib-hook-log.sh
# @include lib-cli.sh
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
# The primary a Sentinel names ("host port"), empty when it does not answer.
named_by() { cli -h "${1%:*}" -p "${1##*:}" --raw SENTINEL GET-MASTER-ADDR-BY-NAME "$master_name" 2>/dev/null | tr '\n' ' ' | sed 's/ *$//'; }

# 0. Aim (writes still flow). The Sentinel that runs the failover names the promoted replica only
#    once its next INFO of that replica shows role:master: once a second (sentinel-start.sh sets the
#    period; during a failover it is 1 s whatever is set). Sent at a random moment, the failover
#    waits 0-1 s for that INFO. So learn when the Sentinel asked first next reads each replica's
#    INFO (its command link's bytes out jump by the INFO reply: CLIENT LIST, tot-net-out), then
#    pause so that SENTINEL FAILOVER goes out aim_lead_ms before the first of those reads: its
#    REPLICAOF NO ONE (2-3 Sentinel ticks) then precedes every replica's next INFO on that link.
#    Bounded: at most 3 s of looking, then until the first read that fits (the next or one of the
#    next three), all before any write is paused; without a ms clock, a Sentinel id or a read seen,
#    nothing is aimed.
leader=""
aim_id=""
aim_at=""
if [ "$aim_lead_ms" -gt 0 ] && [ -n "$(now_ms)" ]; then
  for s in $sentinels; do
    id=$(cli -h "${s%:*}" -p "${s##*:}" --raw SENTINEL MYID 2>/dev/null) || continue
    case "$id" in ????????*) leader=$s; aim_id=$(printf '%.8s' "$id"); break ;; esac
  done
fi
# Bytes the aimed Sentinel's command links have received from replica $1 ("host port"), summed
# (a link it replaced may linger); empty when the replica does not answer within 1 s (frozen, cut
# off: then it is not looked at again) or has no such link.
link_out() {
  cli_within 1 -h "${1% *}" -p "${1#* }" CLIENT LIST 2>/dev/null | tr -d '\r' \
    | sed -n "s/.* name=sentinel-${aim_id}-cmd .* tot-net-out=\([0-9]*\) .*/\1/p" \
    | awk '{ sum += $1; n++ } END { if (n) print sum }'
}
# The aimed Sentinel's coming reads of each replica's INFO, as ms times in $reads (unsorted), from
# watching the replicas of $reps for at most 3 s. Each replica is watched for two reads: their
# interval is the Sentinel's period as it runs (1 s once the last reply is in, plus up to one of
# its ticks, 10-19 a second, plus the reply's time: 1.0-1.1 s on idle processes, up to 1.3 s on
# loaded pods); one seen read once only is given 1.05 s ($once lists those, $watched the replicas
# with the Sentinel's link, $period the last period measured, $seen_at each replica's reads in ms
# after the watch began and $rounds the rounds of CLIENT LIST calls, for the log).
watch_reads() {
  reads=""
  once=""
  period=""
  pending=""
  seen_at=""
  rounds=0
  watch_from=$(now_ms)
  for r in $reps; do
    bytes=$(link_out "${r%:*} ${r##*:}")
    [ -z "$bytes" ] || pending="$pending ${r%:*}_${r##*:}/$bytes/"
  done
  watched=$pending
  # Entries "host_port/bytes/first read (ms, empty until seen)".
  while [ -n "${pending# }" ] && [ $(($(now_ms) - watch_from)) -lt 3000 ]; do
    left=""
    rounds=$((rounds + 1))
    for p in $pending; do
      r=${p%%/*}
      first=${p##*/}
      before=${p#*/}
      before=${before%/*}
      bytes=$(link_out "${r%_*} ${r##*_}")
      if [ -z "$bytes" ]; then
        continue
      elif [ $((bytes - before)) -le 1000 ]; then
        left="$left $r/$bytes/$first"
      elif [ -z "$first" ]; then
        left="$left $r/$bytes/$(now_ms)"
      else
        seen=$(now_ms)
        period=$((seen - first))
        seen_at="$seen_at $r:$((first - watch_from)),$((seen - watch_from))"
        [ "$period" -ge 800 ] && [ "$period" -le 2000 ] || period=1050
        reads="$reads $((seen + period)) $((seen + 2 * period)) $((seen + 3 * period))"
      fi
    done
    pending=$left
  done
  for p in $pending; do
    first=${p##*/}
    [ -n "$first" ] || continue
    once="$once ${p%%/*}"
    seen_at="$seen_at ${p%%/*}:$((first - watch_from))"
    reads="$reads $((first + 1050)) $((first + 2100)) $((first + 3150)) $((first + 4200))"
  done
}
# When to pause ($aim_at, empty when no read fits): `window` before the first coming read such that
# no read of any replica falls inside the window (one would see the replica before its promotion,
# and the next comes a second later).
pick_pause() {
  window=$((aim_lead_ms + 100))
  earliest=$(($(now_ms) + window))
  prev=""
  for t in $(echo "$reads" | tr ' ' '\n' | sort -n); do
    if [ "$t" -ge "$earliest" ] && { [ -z "$prev" ] || [ "$prev" -le $((t - window)) ]; }; then
      aim_at=$((t - window))
      return
    fi
    prev=$t
  done
}
if [ -n "$aim_id" ]; then
  reps=$(local_cli --raw INFO replication 2>/dev/null | tr -d '\r' \
    | sed -n 's/^slave[0-9]*:ip=\([^,]*\),port=\([0-9]*\),.*/\1:\2/p')
  watch_reads
  pick_pause
  if [ -n "$aim_at" ]; then
    log "aim: Sentinel $leader reads a replica's INFO next in $((aim_at + window - $(now_ms))) ms (period ${period:-1050} ms; $(echo "$once" | wc -w) of $(echo "$reps" | wc -w) replicas seen read once only; reads seen at$seen_at ms in $rounds rounds); pausing in $((aim_at - $(now_ms))) ms"
    while [ "$(now_ms)" -lt "$aim_at" ]; do short_nap; done
  else
    log "aim: no INFO read by Sentinel $leader seen within 3 s ($(echo "$reps" | wc -w) replicas, $(echo "$watched" | wc -w) with its link, $(echo "$once" | wc -w) read once; reads seen at${seen_at:- none} ms in $rounds rounds); not aimed"
  fi
fi

# 1. Pause writes until the deadline at most; released on every way out. The pause does not stop
#    this primary's replication PING (every repl-ping-replica-period, 10 s by default; Valkey skips
#    it only inside its own FAILOVER command and a cluster's manual failover). One PING after the
#    promoted replica left puts this server and every replica still attached to it 14 bytes past
#    the promotion point, and each then needs a FULL resync from the new primary ("Partial
#    resynchronization not accepted: Requested offset for second ID was N+14, but I can reply up
#    to N"), during which min-replicas-to-write refuses every write (NOREPLICAS). So the PING is
#    held off for the switchover (period 3600 s) and its period given back on every way out.
paused=""
ping_period=""
# shellcheck disable=SC2317 # the EXIT trap below runs it
release() {
  if [ -n "$paused" ]; then
    paused=""
    r=$(local_cli CLIENT UNPAUSE 2>&1) || true
    log "writes unpaused ($r)"
  fi
  if [ -n "$ping_period" ]; then
    r=$(local_cli CONFIG SET repl-ping-replica-period "$ping_period" 2>&1) || true
    ping_period=""
    log "replication PING period given back ($r)"
  fi
}
trap release EXIT
trap 'exit 1' INT TERM HUP
held=$(local_cli --raw CONFIG GET repl-ping-replica-period 2>/dev/null | sed -n 2p)
case "$held" in
  '' | *[!0-9]*) log "repl-ping-replica-period not read ($held); the replication PING is not held off" ;;
  *)
    r=$(local_cli CONFIG SET repl-ping-replica-period 3600 2>&1) || true
    if [ "$r" = OK ]; then ping_period=$held; else log "replication PING not held off ($r)"; fi
    ;;
esac
pause_ms=$(((deadline - $(now_s)) * 1000))
r=$(local_cli CLIENT PAUSE "$pause_ms" WRITE 2>&1) || true
case "$r" in
  OK*) paused=1; log "writes paused for at most ${pause_ms} ms" ;;
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
if [ -n "$paused" ]; then
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

# 3. Ask one Sentinel at a time; again every second while none accepts (NOGOODSLAVE: it does not
#    see a replica up yet; INPROG: a failover is running already, e.g. the one that made this
#    member primary a moment ago, still reconfiguring its replicas: it is taken as this hand-over
#    only once that Sentinel names another member), for failover_retry_s at most and never past the
#    deadline.
asked=""
retry_until=$(($(now_s) + failover_retry_s))
[ "$retry_until" -le "$deadline" ] || retry_until=$deadline
while :; do
  for s in $leader $sentinels; do
    reply=$(cli -h "${s%:*}" -p "${s##*:}" --raw SENTINEL FAILOVER "$master_name" 2>&1) || { log "Sentinel $s did not answer"; continue; }
    log "SENTINEL FAILOVER via $s: $reply${aim_at:+ ($(($(now_ms) - aim_at)) ms after the aimed pause)}"
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
done
[ -n "$asked" ] || { log "no Sentinel accepted the failover; stopping (the Sentinels fail over after down-after-milliseconds)"; exit 0; }

# 4. Once another member is primary: follow it, then release the held writes (READONLY now).
while [ "$(now_s)" -lt "$deadline" ]; do
  for s in $asked $sentinels; do
    now=$(named_by "$s")
    case "$now" in *" "[0-9]*) ;; *) continue ;; esac
    is_me "$now" && continue
    log "switchover done: $s names $now the primary"
    r=$(local_cli REPLICAOF "${now% *}" "${now#* }" 2>&1) || true
    log "REPLICAOF ${now% *} ${now#* }: $r"
    exit 0
  done
  short_nap
done
log "no other member became primary within ${timeout_s}s; stopping anyway"
exit 0
