#!/bin/sh
# Readiness probe of a Valkey pod (pod/scripts/readiness.sh in valkey-on-eks). Exit 0 = ready.
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
set -u
# @values mode restore port local_host cli_timeout
not_ready() { echo "not ready: $*" >&2; exit 1; }
# @include lib-cli.sh
answer=$(local_cli ping 2>&1) || not_ready "PING failed: $answer"
[ "$answer" = PONG ] || not_ready "PING answered: $answer"
repl=$(local_cli info replication 2>&1) || not_ready "INFO replication failed"
case "$repl" in
  *role:slave*)
    case "$repl" in *master_link_status:up*) ;; *) not_ready "replica whose link to its primary is down" ;; esac
    case "$repl" in *master_sync_in_progress:1*) not_ready "replica still in its initial sync" ;; esac
    ;;
esac
[ "$mode" = cluster ] || exit 0
info=$(local_cli cluster info 2>&1) || not_ready "CLUSTER INFO failed"
case "$info" in *cluster_state:ok*) exit 0 ;; esac
# Not bootstrapped yet: no slot assigned anywhere this node knows of; with a restore, also a node
# that has met nobody (a new stack's restored member claimed its snapshot's slots by itself).
if [ "$restore" = yes ]; then
  case "$info" in *"cluster_known_nodes:1"[!0-9]*) exit 0 ;; esac
fi
case "$info" in *"cluster_slots_assigned:0"[!0-9]*) exit 0 ;; esac
not_ready "cluster_state is not ok"
