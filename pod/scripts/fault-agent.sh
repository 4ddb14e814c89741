#!/bin/sh
# The fault agent of the deployed freeze and partition drills (pod/scripts/fault-agent.sh in
# valkey-on-eks; see pod/fault-agent-script.ts). Run as `sh -c` in a privileged pod on the target's node.
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
# @values host_root
set -u
say() { echo "fault-agent: $*"; }
now() { date +%s%3N; }
case "${FAULT:-}" in freeze|partition) ;; *) say "FAULT must be freeze or partition, got '${FAULT:-}'"; exit 2 ;; esac
case "${HOLD_S:-}" in ''|*[!0-9]*) say "HOLD_S must be whole seconds, got '${HOLD_S:-}'"; exit 2 ;; esac
[ -n "${TARGET_POD_UID:-}" ] || { say "TARGET_POD_UID is not set"; exit 2; }
uid_us=$(printf %s "$TARGET_POD_UID" | tr - _)
pid=
for d in /proc/[0-9]*; do
  [ "$(cat "$d/comm" 2>/dev/null)" = valkey-server ] || continue
  grep -q -e "pod$TARGET_POD_UID" -e "pod$uid_us" "$d/cgroup" 2>/dev/null || continue
  pp=$(sed -n 's/^PPid:[[:space:]]*//p' "$d/status" 2>/dev/null)
  [ "$(cat "/proc/$pp/comm" 2>/dev/null)" = valkey-server ] && continue
  pid=${d#/proc/}
  break
done
[ -n "$pid" ] || { say "no valkey-server of pod $TARGET_POD_UID among this node's processes (is the pod on this node, and hostPID set?)"; exit 2; }
# Never the node's own network namespace (a hostNetwork pod): that would cut the node off.
host_net=$(readlink /proc/1/ns/net 2>/dev/null || true)
if [ "$FAULT" = partition ] && [ -n "$host_net" ] && [ "$(readlink "/proc/$pid/ns/net")" = "$host_net" ]; then
  say "valkey-server $pid shares the node's network namespace (hostNetwork): not cutting the node off"
  exit 2
fi
# rules -I: insert the DROP rules (stops at the first failure); unrules: delete every one, all tried.
rules() {
  for ip in ${PEERS:-}; do
    nsenter -t "$pid" -n -- chroot "$host_root" iptables -w -I INPUT -s "$ip" -j DROP || return 1
    nsenter -t "$pid" -n -- chroot "$host_root" iptables -w -I OUTPUT -d "$ip" -j DROP || return 1
  done
}
unrules() {
  failed=0
  for ip in ${PEERS:-}; do
    nsenter -t "$pid" -n -- chroot "$host_root" iptables -w -D INPUT -s "$ip" -j DROP || failed=1
    nsenter -t "$pid" -n -- chroot "$host_root" iptables -w -D OUTPUT -d "$ip" -j DROP || failed=1
  done
  return "$failed"
}
injected=0
undo() {
  [ "$injected" -eq 1 ] || return 0
  injected=0
  if [ "$FAULT" = freeze ]; then
    kill -CONT "$pid" || { say "cannot SIGCONT valkey-server $pid: it stays stopped"; exit 1; }
  else
    unrules || { say "cannot delete every DROP rule in the network namespace of $pid: it may stay cut off"; exit 1; }
  fi
  say "restored $(now)"
}
sleeper=
trap 'if [ -n "$sleeper" ]; then kill "$sleeper" 2>/dev/null; fi; undo; exit 0' TERM INT
if [ "$FAULT" = freeze ]; then
  injected=1
  kill -STOP "$pid" || { say "cannot SIGSTOP valkey-server $pid"; exit 1; }
  say "injected $(now) valkey-server $pid stopped (SIGSTOP)"
else
  [ -n "${PEERS:-}" ] || { say "PEERS is empty: nothing to cut the primary off from"; exit 2; }
  injected=1
  if ! rules; then
    injected=0
    unrules 2>/dev/null
    say "cannot insert the DROP rules in the network namespace of $pid"
    exit 1
  fi
  say "injected $(now) valkey-server $pid cut off from $PEERS (iptables DROP both ways)"
fi
sleep "$HOLD_S" &
sleeper=$!
wait "$sleeper" || true
undo
