#!/bin/sh
# preStop hook of a Valkey cluster member (pod/scripts/cluster-prestop.sh in valkey-on-eks).
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
set -u
# @values port local_host timeout max_lag cli_timeout
nl='
'
# @include lib-hook-log.sh
# @include lib-cli.sh
role_of() { cli -h "$1" -p "$2" role 2>/dev/null | { IFS= read -r first || true; echo "$first"; }; }
# The value of an INFO field ($2) in INFO text ($1): letters, digits and _ only.
info_field() {
  v=${1#*"$nl$2":}
  [ "$v" != "$1" ] || return 1
  printf '%s' "${v%%[!0-9A-Za-z_]*}"
}

nodes=$(local_cli cluster nodes 2>/dev/null) || { log "CLUSTER NODES failed; stopping"; exit 0; }
set -f
my_id=""
my_flags=""
my_slots=0
while IFS= read -r line; do
  # shellcheck disable=SC2086 # splits a CLUSTER NODES line into its fields on purpose (set -f: no globbing)
  set -- $line
  [ $# -ge 8 ] || continue
  case "$3" in *myself*) my_id=$1; my_flags=$3; [ $# -ge 9 ] && my_slots=1 ;; esac
done <<EOF
$nodes
EOF
case "$my_flags" in *master*) ;; *) log "not a primary; stopping"; exit 0 ;; esac
[ "$my_slots" -eq 1 ] || { log "primary without slots; stopping"; exit 0; }
my_info=$(local_cli info replication 2>/dev/null) || { log "INFO replication failed; stopping"; exit 0; }
my_offset=$(info_field "$my_info" master_repl_offset) || { log "no master_repl_offset; stopping"; exit 0; }

best_host=""
best_port=""
best_offset=-1
while IFS= read -r line; do
  # shellcheck disable=SC2086 # splits a CLUSTER NODES line into its fields on purpose (set -f: no globbing)
  set -- $line
  [ $# -ge 8 ] || continue
  if [ "$4" != "$my_id" ] || [ "$8" != "connected" ]; then continue; fi
  # *fail* also matches nofailover: a replica that may not be promoted is never chosen.
  case "$3" in *fail*|*handshake*|*noaddr*) continue ;; *slave*) ;; *) continue ;; esac
  # ip:port@cport[,hostname]; connect by IP, or by hostname when no IP is known.
  hostport=${2%%@*}
  rport=${hostport##*:}
  rhost=${hostport%:*}
  case "$2" in *,*) [ -n "$rhost" ] || { rhost=${2#*,}; rhost=${rhost%%,*}; } ;; esac
  rinfo=$(cli -h "$rhost" -p "$rport" info replication 2>/dev/null) || { log "replica $rhost:$rport did not answer; not choosing it"; continue; }
  link=$(info_field "$rinfo" master_link_status) || link=unknown
  [ "$link" = up ] || { log "replica $rhost:$rport has master_link_status:$link; not choosing it"; continue; }
  [ "$(info_field "$rinfo" master_sync_in_progress)" = 0 ] || { log "replica $rhost:$rport is syncing; not choosing it"; continue; }
  roffset=$(info_field "$rinfo" slave_repl_offset) || { log "replica $rhost:$rport reports no offset; not choosing it"; continue; }
  lag=$((my_offset - roffset))
  [ "$lag" -le "$max_lag" ] || { log "replica $rhost:$rport is $lag bytes behind; not choosing it"; continue; }
  if [ "$roffset" -gt "$best_offset" ]; then best_host=$rhost; best_port=$rport; best_offset=$roffset; fi
done <<EOF
$nodes
EOF
[ -n "$best_host" ] || { log "no synced replica of $my_id; stopping without failover"; exit 0; }

log "handing the slots of $my_id to its synced replica $best_host:$best_port (offset $best_offset of $my_offset)"
answer=$(cli -h "$best_host" -p "$best_port" cluster failover 2>&1) || true
case "$answer" in OK*) ;; *) log "CLUSTER FAILOVER answered: $answer"; exit 0 ;; esac

waited=0
while [ "$waited" -lt "$timeout" ]; do
  if [ "$(role_of "$best_host" "$best_port")" = "master" ] && [ "$(role_of "$local_host" "$port")" = "slave" ]; then
    log "failover done: $best_host:$best_port is primary"
    exit 0
  fi
  sleep 1
  waited=$((waited + 1))
done
log "the role switch was not seen within ${timeout}s; stopping anyway"
exit 0
