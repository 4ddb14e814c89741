#!/bin/sh
# preStop hook of a replication member under Sentinel (pod/scripts/replication-prestop.sh in valkey-on-eks).
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
set -u
# @values port local_host timeout_s catch_up_s failover_retry_s master_name sentinels cli_timeout
self_host="${VALKEY_ANNOUNCE_HOST:-}"
log() { echo "prestop: $*" >&2; }
# @include lib-cli.sh
now_s() { date +%s; }
# A tenth of a second where sleep takes fractions (coreutils, busybox), else a second.
nap() { sleep 0.1 2>/dev/null || sleep 1; }
deadline=$(($(now_s) + timeout_s))

role=$(local_cli --raw role 2>/dev/null | head -n 1)
[ "$role" = master ] || { log "not the primary (role: ${role:-unknown}); stopping"; exit 0; }
is_me() { [ "${1#* }" = "$port" ] && { [ "${1% *}" = "$self_host" ] || [ "${1% *}" = "${VALKEY_ANNOUNCE_IP:-}" ] || [ "${1% *}" = "$local_host" ]; }; }
# The primary a Sentinel names ("host port"), empty when it does not answer.
named_by() { cli -h "${1%:*}" -p "${1##*:}" --raw SENTINEL GET-MASTER-ADDR-BY-NAME "$master_name" 2>/dev/null | tr '\n' ' ' | sed 's/ *$//'; }

# 1. Pause writes until the deadline at most; released on every way out.
paused=""
# shellcheck disable=SC2317 # the EXIT trap below runs it
release() {
  [ -n "$paused" ] || return 0
  paused=""
  r=$(local_cli CLIENT UNPAUSE 2>&1) || true
  log "writes unpaused ($r)"
}
trap release EXIT
trap 'exit 1' INT TERM HUP
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
  saved_timeout=$cli_timeout; cli_timeout=1
  theirs=$(cli -h "$r_ip" -p "$r_port" --raw INFO replication 2>/dev/null | tr -d '\r' | sed -n 's/^slave_repl_offset://p')
  cli_timeout=$saved_timeout
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
#    see a replica up yet), for failover_retry_s at most and never past the deadline.
asked=""
retry_until=$(($(now_s) + failover_retry_s))
[ "$retry_until" -le "$deadline" ] || retry_until=$deadline
while :; do
  for s in $sentinels; do
    reply=$(cli -h "${s%:*}" -p "${s##*:}" --raw SENTINEL FAILOVER "$master_name" 2>&1) || { log "Sentinel $s did not answer"; continue; }
    log "SENTINEL FAILOVER via $s: $reply"
    case "$reply" in OK*|INPROG*) asked=$s; break ;; esac
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
  nap
done
log "no other member became primary within ${timeout_s}s; stopping anyway"
exit 0
