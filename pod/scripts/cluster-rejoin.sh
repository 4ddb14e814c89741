#!/bin/sh
# Lost-volume rejoin of a Valkey cluster member (pod/scripts/cluster-rejoin.sh in valkey-on-eks). Usage: rejoin.sh gate | rejoin.sh [server-pid]
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
set -u
set -f
# @values port local_host interval gate_deadline run_deadline cli_timeout
log() { echo "rejoin: $*" >&2; }
# @include lib-cli.sh
me="${VALKEY_ANNOUNCE_HOST:-}"
[ -n "$me" ] || { log "VALKEY_ANNOUNCE_HOST is not set; nothing to do"; exit 0; }
# server_pid is read by server_alive (lib-deadline.sh, included below).
# shellcheck disable=SC2034
if [ "${1:-}" = gate ]; then mode=gate; deadline=$gate_deadline; server_pid=""; else mode=run; deadline=$run_deadline; server_pid="${1:-}"; fi
# My node id, once the server runs (below); none before it starts (the gate), when every entry with my hostname is
# an old one. Unset, `set -u` ended each of the gate's lookups, and the gate let every member start at once.
myid=
# @include lib-deadline.sh
# "ip port" of every peer: $VALKEY_HEAL_HOSTS_FILE (tests) or the headless Service's addresses.
peers() {
  if [ -n "${VALKEY_HEAL_HOSTS_FILE:-}" ]; then
    while read -r p_ip p_name p_port _; do [ "$p_name" = "$me" ] || echo "$p_ip ${p_port:-$port}"; done < "$VALKEY_HEAL_HOSTS_FILE"
  else
    getent ahosts "${me#*.}" | awk -v p="$port" '!seen[$1]++ { print $1, p }'
  fi
}
# Sets view, seed_ip, seed_port and old ("id flags slots|noslots replicas addr") from the first peer that lists my hostname.
find_old() {
  old=""
  for pp in $(peers | tr ' ' ':'); do
    s_ip=${pp%:*}; s_port=${pp##*:}
    view=$(cli -h "$s_ip" -p "$s_port" cluster nodes 2>/dev/null) || continue
    old=$(printf '%s\n' "$view" | awk -v me="$me" -v myid="$myid" '
{ split($2, a, ","); host[NR] = a[2]; id[NR] = $1; fl[NR] = $3; addr[NR] = a[1]; ns[NR] = NF; if ($4 != "-" && $3 !~ /(^|,)fail[?]?(,|$)/) reps[$4]++ }
END { for (i = 1; i <= NR; i++) if (host[i] == me && id[i] != myid) { print id[i], fl[i], (ns[i] > 8 ? "slots" : "noslots"), reps[id[i]] + 0, addr[i]; exit } }')
    [ -n "$old" ] && { seed_ip=$s_ip; seed_port=$s_port; return 0; }
  done
  return 1
}
# Whether the old entry may be forgotten now; logs why not (once per reason).
said=""
say() { [ "$said" = "$1" ] || { log "$2"; said=$1; }; }
old_ready() {
  # shellcheck disable=SC2086 # splits a node entry into its fields on purpose (set -f: no globbing)
  set -- $old
  # The flags as ",a,b,": fail and fail? are marks, nofailover (a member held by its heal.sh) is not.
  case "$3:,$2," in
    slots:*,fail,*|slots:*,fail\?,*) if [ "$4" -eq 0 ]; then say lost "my old node id $1 is marked fail and still owns slots with no replica to take them over: THOSE SLOTS ARE LOST (their data was only on the lost volume); not claiming them, an operator must decide"; return 2; fi
                  say takeover "my old node id $1 is marked fail; waiting for its replica to take its slots over"; return 1 ;;
    slots:*) say waitfail "my old node id $1 still owns slots and is not marked fail yet; waiting"; return 1 ;;
    noslots:*,fail,*|noslots:*,fail\?,*) return 0 ;;
    *) say waitfail2 "my old node id $1 is not marked fail yet; waiting"; return 1 ;;
  esac
}

# The zone my old node id announced (a peer's CLUSTER SHARDS still lists it), taken when I have none: without the
# pod's zone label (Kubernetes < 1.35) the zone lived only on the lost volume, and a member without one is never
# chosen to fail back (failback-decision.awk), so its zone would keep a primary majority. The replacement pod lands in
# the zone it left (the StatefulSet's zone spread); the bootstrap's next run corrects it if not.
adopt_zone() {
  z=$(local_cli config get availability-zone 2>/dev/null | sed -n 2p)
  [ -z "$z" ] || return 0
  z=$(cli -h "$seed_ip" -p "$seed_port" cluster shards 2>/dev/null | awk -v id="$1" '
{ sub(/\r$/, "") }
want == "id" { cur = $0; want = ""; next }
want == "zone" { if (cur == id && $0 != "") { print; exit } want = ""; next }
$0 == "id" { want = "id"; next }
$0 == "availability-zone" { want = "zone"; next }')
  [ -n "$z" ] || { log "no zone of my own and none known for my old node id $1"; return 0; }
  log "availability-zone $z, my old node id's (I had none): $(local_cli config set availability-zone "$z" 2>&1)"
}

if [ "$mode" = gate ]; then
  while ! expired; do
    find_old || exit 0
    # shellcheck disable=SC2086 # splits a node entry into its fields on purpose (set -f: no globbing)
    set -- $old
    [ "$3" = noslots ] && exit 0
    old_ready; [ $? -eq 2 ] && exit 0
    sleep "$interval"
  done
  log "my old node id still owns slots after ${deadline}s; starting the server anyway (slot-less)"
  exit 0
fi

# @include lib-wait-ping.sh
myid=$(local_cli cluster myid 2>/dev/null) || exit 0
known() { local_cli cluster nodes 2>/dev/null | grep -c . ; }
[ "$(known)" -le 1 ] || exit 0
met=""
while :; do
  server_alive || exit 0
  expired && { log "not rejoined after ${deadline}s; giving up"; exit 0; }
  if [ -z "$met" ]; then
    [ "$(known)" -le 1 ] || { log "introduced by someone else; leaving it to them"; exit 0; }
    if find_old && old_ready; then
      # shellcheck disable=SC2086 # splits a node entry into its fields on purpose (set -f: no globbing)
      set -- $old
      old_id=$1
      adopt_zone "$old_id"
      forgot=1
      for line in $(printf '%s\n' "$view" | awk -v o="$old_id" '$1 != o && $3 !~ /handshake|noaddr|(^|,)fail[?]?(,|$)/ { split($2, a, ","); split(a[1], b, "@"); print $1 "@" b[1] }'); do
        p_id=${line%%@*}; p_addr=${line#*@}; p_ip=${p_addr%:*}; p_port=${p_addr##*:}
        [ "$(cli -h "$p_ip" -p "$p_port" cluster myid 2>/dev/null)" = "$p_id" ] || { log "$p_addr is not node $p_id; not forgetting through it"; forgot=""; continue; }
        answer=$(cli -h "$p_ip" -p "$p_port" cluster forget "$old_id" 2>&1)
        case "$answer" in OK|*"nknown node"*) ;; *) log "CLUSTER FORGET $old_id on $p_addr answered: $answer"; forgot="" ;; esac
      done
      if [ -n "$forgot" ]; then
        seed_bus=$(printf '%s\n' "$view" | awk '$3 ~ /myself/ { split($2, a, "@"); split(a[2], b, ","); print b[1] }')
        if [ "$(local_cli cluster meet "$seed_ip" "$seed_port" "$seed_bus" 2>&1)" = OK ]; then
          log "forgot my old node id $old_id on every peer; met $seed_ip:$seed_port as $myid"
          met=$old_id
        fi
      fi
    fi
  else
    nodes=$(local_cli cluster nodes 2>/dev/null) || nodes=""
    case "$nodes" in *"$met"*) local_cli cluster forget "$met" >/dev/null 2>&1 ;; esac
    if printf '%s\n' "$nodes" | grep -q 'myself,slave'; then log "rejoined as a replica"; exit 0; fi
    # Who replicates whom, as the peer I met sees it, not as I do: a node that has just met the cluster learns
    # each replica's primary by gossip, a few nodes per ping, and counting in its own view could take a shard
    # whose replica it has not heard of yet for one without a replica (Valkey's replica migration then moves
    # that replica to the shard really lacking one, its zone unseen: primary and replica in one zone).
    seen=$(cli -h "$seed_ip" -p "$seed_port" cluster nodes 2>/dev/null) || seen=""
    if [ -n "$seen" ] && ! printf '%s\n' "$nodes" | grep -q handshake; then
      myzone=$(local_cli config get availability-zone 2>/dev/null | sed -n 2p)
      target=""
      fewest=""
      for cand in $(printf '%s\n' "$seen" | awk '
$3 ~ /master/ && $3 !~ /(^|,)fail[?]?(,|$)/ && NF > 8 { split($2, a, ","); m[$1] = a[1] }
$4 != "-" && $3 !~ /(^|,)fail[?]?(,|$)/ { r[$4]++ }
END { for (i in m) print r[i] + 0, i, m[i] }' | sort -n | tr ' ' '/'); do
        c_n=${cand%%/*}; rest=${cand#*/}; c_id=${rest%%/*}; c_addr=${rest#*/}; c_addr=${c_addr%%@*}
        [ -z "$fewest" ] && fewest=$c_n
        [ "$c_n" = "$fewest" ] || break
        [ -z "$target" ] && target="$c_id $c_addr"
        c_zone=$(cli -h "${c_addr%:*}" -p "${c_addr##*:}" config get availability-zone 2>/dev/null | sed -n 2p)
        if [ -z "$myzone" ] || [ "$c_zone" != "$myzone" ]; then target="$c_id $c_addr"; break; fi
      done
      if [ -n "$target" ]; then
        # shellcheck disable=SC2086 # splits a node entry into its fields on purpose (set -f: no globbing)
        set -- $target
        answer=$(local_cli cluster replicate "$1" 2>&1)
        if [ "$answer" = OK ]; then log "replicating $1 ($2), a primary with $fewest replica(s)"; else log "CLUSTER REPLICATE $1 answered: $answer"; fi
      fi
    fi
  fi
  sleep "$interval"
done
