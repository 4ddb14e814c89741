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
# The first address of a name from the system resolver.
resolve() {
  getent hosts "$1" | { read -r r_ip _ && echo "$r_ip"; }
}
# CLUSTER NODES lines, each with the address its hostname resolves to put first: from $VALKEY_HEAL_HOSTS_FILE (lines
# `ip name`, tests) in one read of it per round ("-": not listed), else "?" (resolved per peer, above). Reading the
# file once per peer was N reads of N lines per member and round: 800,000 read calls a round for one of 200 members.
with_addresses() {
  if [ -n "${VALKEY_HEAL_HOSTS_FILE:-}" ]; then
    awk -v f="$VALKEY_HEAL_HOSTS_FILE" '
      BEGIN { while ((getline l < f) > 0) if (split(l, a, " ") >= 2 && !(a[2] in ip)) ip[a[2]] = a[1] }
      {
        name = ""
        i = index($2, ",")
        if (i) { name = substr($2, i + 1); j = index(name, ","); if (j) name = substr(name, 1, j - 1) }
        print ((name in ip) ? ip[name] : "-") " " $0
      }'
  else
    sed 's/^/? /'
  fi
}

# @include lib-wait-ping.sh

# @include lib-proven.sh
# shellcheck disable=SC2016,SC2034 # an awk program (its $ fields are awk's), read by ask_myids (lib-ask-myids.sh)
answers_awk='
# @include myid-answers.awk
'
# @include lib-ask-myids.sh

while :; do
  server_alive || exit 0
  expired && { log "cluster_state is still not ok after ${deadline}s; giving up"; exit 0; }
  # CLUSTER NODES and CLUSTER INFO in one client process, the state after a marker the local server echoes (a call cut
  # before it has no nodes to read). Read with case patterns and %%: ${round#*marker} is quadratic in dash (lib-proven.sh).
  round=$(printf 'cluster nodes\necho heal-state\ncluster info\n' | local_cli_batch 2>/dev/null)
  nodes=
  settled=
  case "$round" in *"${nl}heal-state${nl}"*) nodes=${round%%"${nl}heal-state${nl}"*} ;; esac
  case "$round" in *"${nl}heal-state${nl}"*cluster_state:ok*) settled=1 ;; esac
  if [ -n "$nodes" ]; then
    peers=0
    down=0
    # Peers whose link reads connected: "id ip port name" lines, proven by asking them (below).
    linked=
    # Peers whose name gives another address than the one on record: "id new-ip port bus name old-ip" lines; and
    # those of them not proven there yet, "id ip port name", asked all at once after this loop.
    moved=
    to_ask=
    while IFS= read -r line; do
      # shellcheck disable=SC2086 # splits a CLUSTER NODES line into its fields on purpose (set -f: no globbing)
      set -- $line
      listed=$1
      shift
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
      case "$listed" in
        -) ;;
        \?) [ -z "$name" ] || new_ip=$(resolve "$name") || new_ip= ;;
        *) [ -z "$name" ] || new_ip=$listed ;;
      esac
      if [ -z "$new_ip" ] || [ "$new_ip" = "$old_ip" ]; then
        # Nothing to re-meet (no name, not resolvable yet, or DNS still gives the address on record).
        if [ "$link" = connected ]; then
          linked="$linked$id $old_ip $peer_port ${name:--}$nl"
        else
          forget "$id"
          down=$((down + 1))
        fi
        continue
      fi
      down=$((down + 1))
      moved="$moved$id $new_ip $peer_port $bus $name $old_ip$nl"
      is_proven "$id" "$new_ip" "$peer_port" || { forget "$id"; to_ask="$to_ask$id $new_ip $peer_port $name$nl"; }
    done <<EOF
$(printf '%s\n' "$nodes" | with_addresses)
EOF
    if [ "$peers" -eq 0 ]; then
      log "no peers in nodes.conf: a new member, the bootstrap introduces it"
      exit 0
    fi
    [ -z "$to_ask" ] || ask_myids "$to_ask"
    # This round's MEETs, to the moved peers that answered at their new address, sent to the local server in one
    # call: the commands, and "name id ip:port old-ip" lines in the same order for the log.
    meets=
    meet_log=
    while read -r m_id m_ip m_port m_bus m_name m_was; do
      [ -n "$m_id" ] || continue
      is_proven "$m_id" "$m_ip" "$m_port" || continue
      meets="${meets}cluster meet $m_ip $m_port $m_bus$nl"
      meet_log="$meet_log$m_name $m_id $m_ip:$m_port $m_was$nl"
    done <<EOF
$moved
EOF
    if [ -n "$meets" ]; then
      # One reply line per MEET, in order (an error reply is followed by an empty line: dropped).
      answers=$(printf '%s' "$meets" | local_cli_batch 2>&1 | grep -v '^$')$nl
      while read -r m_name m_id m_at m_was; do
        [ -n "$m_id" ] || continue
        answer=${answers%%"$nl"*}
        answers=${answers#*"$nl"}
        if [ "$answer" = OK ]; then
          log "met $m_name ($m_id) at its new address $m_at (was $m_was)"
        else
          log "CLUSTER MEET ${m_at%:*} ${m_at##*:} answered: ${answer:-nothing}"
        fi
      done <<EOF
$meet_log
EOF
    fi
    [ -n "$settled" ] || down=$((down + 1))
    # "connected" and cluster_state:ok are not proof right after a start: a peer loaded from nodes.conf reads
    # "connected" while the bus still dials its old address (a deleted pod's IP hangs), and cluster_state is the state
    # saved before the restart. Every linked peer must have answered CLUSTER MYID with its node ID at the address on
    # record (asked here, or before its MEET at that address), all in one call (in the first seconds after a full
    # restart every peer may be at a dead address: one bound a round, not one a peer).
    if [ "$down" -eq 0 ]; then
      unproven=
      while read -r l_id l_ip l_port l_name; do
        [ -n "$l_id" ] || continue
        is_proven "$l_id" "$l_ip" "$l_port" && continue
        forget "$l_id"
        unproven="$unproven$l_id $l_ip $l_port $l_name$nl"
      done <<EOF
$linked
EOF
      [ -z "$unproven" ] || ask_myids "$unproven"
      while read -r l_id l_ip l_port _; do
        [ -n "$l_id" ] || continue
        is_proven "$l_id" "$l_ip" "$l_port" && continue
        down=$((down + 1))
        break
      done <<EOF
$unproven
EOF
      [ "$down" -eq 0 ] && { log "cluster_state:ok with all $peers peers connected, each answering at its address"; exit 0; }
    fi
  fi
  sleep "$interval"
done
