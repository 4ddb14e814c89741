#!/bin/sh
# AZ failback loop of a Valkey cluster member (pod/scripts/cluster-failback.sh in valkey-on-eks). Usage: failback.sh [server-pid]
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
set -u
# zone_file is empty when the zone is not kept in a file.
# @values port local_host interval confirm cooldown max_lag zone_file cli_timeout
server_pid="${1:-}"
log() { echo "failback: $*" >&2; }
# @include lib-cli.sh
server_alive() { [ -z "$server_pid" ] || kill -0 "$server_pid" 2>/dev/null; }
# keep_zone writes the server's availability-zone to $zone_file when it changed.
keep_zone() {
  [ -n "$zone_file" ] || return 0
  z=$(local_cli config get availability-zone 2>/dev/null | sed -n 2p) || return 0
  [ -n "$z" ] || return 0
  [ "$(head -n 1 "$zone_file" 2>/dev/null)" != "$z" ] || return 0
  if printf '%s\n' "$z" > "$zone_file.tmp" && mv -f "$zone_file.tmp" "$zone_file"; then log "availability-zone $z kept in $zone_file"; fi
}
# shellcheck disable=SC2016 # an awk program: its $ fields are awk's, not the shell's
decide_awk='
# @include failback-decision.awk
'
seen=0
last=""
while server_alive; do
  sleep "$interval"
  keep_zone
  case "$(local_cli cluster info 2>/dev/null)" in *cluster_state:ok*) ;; *) seen=0; continue ;; esac
  me=$(local_cli cluster myid 2>/dev/null) || continue
  shards=$(local_cli cluster shards 2>/dev/null) || continue
  decision=$(printf '%s\n' "$shards" | awk -v me="$me" -v maxlag="$max_lag" "$decide_awk")
  if [ "$decision" != act ]; then
    [ "$decision" = "$last" ] || log "$decision"
    last=$decision
    seen=0
    continue
  fi
  seen=$((seen + 1))
  last=act
  [ "$seen" -ge "$confirm" ] || continue
  seen=0
  case "$(local_cli info replication 2>/dev/null)" in *master_link_status:up*) ;; *) log "my replication link is not up; not failing back"; continue ;; esac
  answer=$(local_cli cluster failover 2>&1) || true
  log "a zone held a primary majority; CLUSTER FAILOVER on $me answered: $answer"
  sleep "$cooldown"
done
