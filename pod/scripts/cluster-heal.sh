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

# start.sh starts a restarted member with cluster-replica-no-failover yes (pod/start-script.ts holdFailover): a
# replica restarted with its primary, once synced from it, could be elected over it while the others still flag it
# fail, and the writes the primary acknowledged in between would be lost. Released at every exit below, or earlier
# when the primary it had reached since its start is gone again (that failover is Valkey's to make). While held, a
# replica whose primary is flagged fail but whose link to it is up takes over without losing a write (hand_over).
held=1
release_failover() {
  [ "$held" = 1 ] || return 0
  tries=0
  until [ "$(local_cli config set cluster-replica-no-failover no 2>&1)" = OK ]; do
    server_alive || return 0
    tries=$((tries + 1))
    [ "$tries" -lt 30 ] || { log "CONFIG SET cluster-replica-no-failover no did not answer OK in 30 tries"; return 0; }
    sleep 1
  done
  held=0
}
# The primary this member replicates, if the local view flags it fail (not fail?): its node ID, else nothing.
failed_primary() {
  printf '%s\n' "$1" | awk '$3 ~ /(^|,)myself(,|$)/ && $3 ~ /(^|,)slave(,|$)/ { p = $4 } { f[$1] = $3 } END { if (p != "" && f[p] ~ /(^|,)fail(,|$)/) print p }'
}
takeover_round=0
# The primary ($1, "ip:port") pauses its writes (CLIENT PAUSE 3000 WRITE); once this replica's offset has reached the
# primary's, CLUSTER FAILOVER FORCE (Valkey refuses the coordinated CLUSTER FAILOVER while its primary is flagged fail):
# what the coordinated one does, by hand. Not caught up within the pause: nothing taken over, the primary resumes.
hand_over() {
  h_ip=${1%:*}
  h_port=${1##*:}
  h_ans=$(cli -h "$h_ip" -p "$h_port" client pause 3000 write 2>&1)
  [ "$h_ans" = OK ] || { echo "CLIENT PAUSE on $1 answered: ${h_ans:-nothing}"; return 0; }
  h_want=$(cli -h "$h_ip" -p "$h_port" info replication 2>/dev/null | awk -F: '$1 == "master_repl_offset" { print $2 + 0 }')
  [ -n "$h_want" ] || { echo "no master_repl_offset from $1"; return 0; }
  h_tries=0
  while :; do
    h_have=$(local_cli info replication 2>/dev/null | awk -F: '$1 == "slave_repl_offset" { print $2 + 0 }')
    [ "${h_have:-0}" -lt "$h_want" ] || break
    h_tries=$((h_tries + 1))
    [ "$h_tries" -lt 20 ] || { echo "my offset ${h_have:-?} did not reach the primary's $h_want within the pause"; return 0; }
    sleep 0.1 2>/dev/null || sleep 1
  done
  echo "caught up at offset $h_want; CLUSTER FAILOVER FORCE answered: $(local_cli cluster failover force 2>&1)"
}

# The bound of a round's calls to the local server (its state, its MEETs). Not cli_timeout: that bounds a call to a
# peer that may be a dead address; the local server is never one, and without it there is nothing to do. On a host
# too busy to get a call through in cli_timeout, a round cut before its end did nothing while its call added to the
# load: in the 80 s after a full restart of 200 members on one host, 1,180 of their 1,436 rounds read no CLUSTER NODES
# (2026-12-04, docs/measurements.md).
local_bound=$((cli_timeout * 4))
while :; do
  server_alive || exit 0
  expired && { log "cluster_state is still not ok after ${deadline}s; giving up"; release_failover; exit 0; }
  # CLUSTER NODES and CLUSTER INFO in one client process, the state after a marker the local server echoes (a call cut
  # before it has no nodes to read). Read with case patterns and %%: ${round#*marker} is quadratic in dash (lib-proven.sh).
  round=$(printf 'cluster nodes\necho heal-state\ncluster info\necho heal-repl\ninfo replication\n' | local_cli_batch_within "$local_bound" 2>/dev/null)
  nodes=
  settled=
  case "$round" in *"${nl}heal-state${nl}"*) nodes=${round%%"${nl}heal-state${nl}"*} ;; esac
  case "$round" in *"${nl}heal-state${nl}"*cluster_state:ok*"${nl}heal-repl${nl}"*) settled=1 ;; esac
  if [ "$held" = 1 ] && [ -n "$nodes" ] && gone=$(failed_primary "$nodes") && [ -n "$gone" ]; then
    case "$round" in
      *"${nl}heal-repl${nl}"*master_link_status:up*)
        takeover_round=$((takeover_round + 1))
        if [ "$takeover_round" -eq 1 ]; then
          at=$(printf '%s\n' "$nodes" | awk -v id="$gone" '$1 == id { a = $2; sub(/@.*/, "", a); print a }')
          log "my primary $gone ($at) is flagged fail but my link to it is up: taking over, its writes paused: $(hand_over "$at")"
        fi
        [ "$takeover_round" -lt 3 ] || takeover_round=0
        ;;
      *"${nl}heal-repl${nl}"*master_link_down_since_seconds:-1*) ;;
      *"${nl}heal-repl${nl}"*master_link_down_since_seconds:*)
        log "my primary $gone is flagged fail and gone again since it answered: automatic failover released"
        release_failover
        ;;
    esac
  fi
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
      release_failover
      exit 0
    fi
    # Under cli_timeout: the MEETs of the peers it proves go out this round, the rest are asked the next.
    [ -z "$to_ask" ] || ask_myids "$to_ask"
    # This round's MEETs, to the moved peers that answered at their new address, sent to the local server in one
    # call: the commands, and "name id ip:port old-ip" lines in the same order for the log.
    meets=
    meet_log=
    meet_count=0
    while read -r m_id m_ip m_port m_bus m_name m_was; do
      [ -n "$m_id" ] || continue
      is_proven "$m_id" "$m_ip" "$m_port" || continue
      meet_count=$((meet_count + 1))
      meets="${meets}cluster meet $m_ip $m_port $m_bus$nl"
      meet_log="$meet_log$m_name $m_id $m_ip:$m_port $m_was$nl"
    done <<EOF
$moved
EOF
    if [ -n "$meets" ]; then
      # One reply line per MEET, in order (an error reply is followed by an empty line: dropped). Its bound grows with
      # the MEETs, a tenth of a second each: with 12 s for up to 199 MEETs, 200 members on one host logged 31,602 of their
      # MEETs unanswered and 2,266 made (the ones sent before the cut were made, but not known to be).
      answers=$(printf '%s' "$meets" | local_cli_batch_within "$((local_bound + meet_count / 10))" 2>&1 | grep -v '^$')$nl
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
      unproven_count=0
      while read -r l_id l_ip l_port l_name; do
        [ -n "$l_id" ] || continue
        is_proven "$l_id" "$l_ip" "$l_port" && continue
        forget "$l_id"
        unproven_count=$((unproven_count + 1))
        unproven="$unproven$l_id $l_ip $l_port $l_name$nl"
      done <<EOF
$linked
EOF
      # The last proofs, under a bound that grows with them (a tenth of a second each): under cli_timeout a round on a
      # host too busy for many proved 15-20 of 199, and 200 members' proofs ended 170 s after the cluster was whole
      # (2026-12-04, docs/measurements.md). A peer that hangs costs one bound, once: it is asked last from then on.
      [ -z "$unproven" ] || ask_myids "$unproven" "$((cli_timeout + unproven_count / 10))"
      while read -r l_id l_ip l_port _; do
        [ -n "$l_id" ] || continue
        is_proven "$l_id" "$l_ip" "$l_port" && continue
        down=$((down + 1))
        break
      done <<EOF
$unproven
EOF
      [ "$down" -eq 0 ] && {
        release_failover
        log "cluster_state:ok with all $peers peers connected, each answering at its address"
        exit 0
      }
    fi
  fi
  sleep "$interval"
done
