#!/bin/sh
# Cluster self-heal of a Valkey member (pod/scripts/cluster-heal.sh in valkey-on-eks). Usage: heal.sh [server-pid]
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
# Re-meets peers whose addresses changed (by their stable DNS names) until cluster_state:ok.
set -u
set -f
# @values port local_host interval deadline cli_timeout
# shellcheck disable=SC2034 # read by server_alive (lib-deadline.sh, included below)
server_pid="${1:-}"
log() { echo "heal: $*" >&2; }
nl='
'
# @include lib-cli.sh
# @include lib-deadline.sh
# The first address of a name: $VALKEY_HEAL_HOSTS_FILE (tests) or the system resolver.
resolve() {
  if [ -n "${VALKEY_HEAL_HOSTS_FILE:-}" ]; then
    while read -r r_ip r_name _; do [ "$r_name" = "$1" ] && { echo "$r_ip"; return 0; }; done < "$VALKEY_HEAL_HOSTS_FILE"
    return 1
  fi
  getent hosts "$1" | { read -r r_ip _ && echo "$r_ip"; }
}

# @include lib-wait-ping.sh

while :; do
  server_alive || exit 0
  expired && { log "cluster_state is still not ok after ${deadline}s; giving up"; exit 0; }
  if nodes=$(local_cli cluster nodes 2>/dev/null) && [ -n "$nodes" ]; then
    peers=0
    down=0
    # Peers whose link reads connected: "id ip port" lines, proven by asking them (below).
    linked=
    while IFS= read -r line; do
      # shellcheck disable=SC2086 # splits a CLUSTER NODES line into its fields on purpose (set -f: no globbing)
      set -- $line
      [ $# -ge 8 ] || continue
      case "$3" in *myself*|*handshake*) continue ;; esac
      peers=$((peers + 1))
      id=$1
      link=$8
      # ip:port@cport[,hostname[,aux...]]
      addr=$2
      hostport=${addr%%@*}
      old_ip=${hostport%:*}
      peer_port=${hostport##*:}
      bus=${addr#*@}
      bus=${bus%%,*}
      name=
      case "$addr" in *,*) name=${addr#*,}; name=${name%%,*} ;; esac
      new_ip=
      [ -z "$name" ] || new_ip=$(resolve "$name") || new_ip=
      if [ -z "$new_ip" ] || [ "$new_ip" = "$old_ip" ]; then
        # Nothing to re-meet (no name, not resolvable yet, or DNS still gives the address on record).
        if [ "$link" = connected ]; then linked="$linked$id $old_ip $peer_port$nl"; else down=$((down + 1)); fi
        continue
      fi
      down=$((down + 1))
      their_id=$(cli -h "$new_ip" -p "$peer_port" cluster myid 2>/dev/null) || continue
      [ "$their_id" = "$id" ] || { log "$name at $new_ip is node '$their_id', not $id; not meeting it"; continue; }
      if answer=$(local_cli cluster meet "$new_ip" "$peer_port" "$bus" 2>&1) && [ "$answer" = OK ]; then
        log "met $name ($id) at its new address $new_ip:$peer_port (was $old_ip)"
      else
        log "CLUSTER MEET $new_ip $peer_port $bus answered: $answer"
      fi
    done <<EOF
$nodes
EOF
    if [ "$peers" -eq 0 ]; then
      log "no peers in nodes.conf: a new member, the bootstrap introduces it"
      exit 0
    fi
    case "$(local_cli cluster info 2>/dev/null)" in
      *cluster_state:ok*) ;;
      *) down=$((down + 1)) ;;
    esac
    # "connected" and cluster_state:ok are not proof right after a start (see above): every
    # linked peer must answer CLUSTER MYID with its node ID at the address on record.
    if [ "$down" -eq 0 ]; then
      while read -r l_id l_ip l_port; do
        [ -n "$l_id" ] || continue
        [ "$(cli -h "$l_ip" -p "$l_port" cluster myid 2>/dev/null)" = "$l_id" ] || { down=$((down + 1)); break; }
      done <<EOF
$linked
EOF
      [ "$down" -eq 0 ] && { log "cluster_state:ok with all $peers peers connected, each answering at its address"; exit 0; }
    fi
  fi
  sleep "$interval"
done
