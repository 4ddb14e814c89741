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
# keep_zone writes the server's availability-zone ($1, read this round) to $zone_file when it changed.
keep_zone() {
  [ -n "$zone_file" ] && [ -n "$1" ] || return 0
  kept=
  [ ! -r "$zone_file" ] || read -r kept < "$zone_file" || :
  [ "$kept" != "$1" ] || return 0
  if printf '%s\n' "$1" > "$zone_file.tmp" && mv -f "$zone_file.tmp" "$zone_file"; then log "availability-zone $1 kept in $zone_file"; fi
}
# A round's questions to the local server in one client process, the answers in order, each after a marker the server
# echoes (failback-round.awk splits them): one client process a round, not one per question (200 members on one host
# started 80 timeout + client pairs a second, every 10 s).
questions='config get availability-zone
echo failback-state
cluster info
echo failback-myid
cluster myid
echo failback-shards
cluster shards
echo failback-end'
# shellcheck disable=SC2016 # an awk program: its $ fields are awk's, not the shell's
round_awk='
# @include failback-round.awk
# @include failback-decision.awk
'
seen=0
last=""
while server_alive; do
  sleep "$interval"
  { read -r _ zone; read -r _ me; read -r decision; } <<EOF
$(printf '%s\n' "$questions" | local_cli_batch 2>/dev/null | awk -v maxlag="$max_lag" "$round_awk")
EOF
  keep_zone "$zone"
  [ "$decision" != unsettled ] || { seen=0; continue; }
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
