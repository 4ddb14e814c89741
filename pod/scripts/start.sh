#!/bin/sh
# Valkey entrypoint (pod/scripts/start.sh in valkey-on-eks). Usage: start.sh <valkey.conf>
# Writes the auth and announce includes valkey.conf names, then execs valkey-server.
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
set -eu
fail() { echo "start.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] || fail "usage: start.sh <valkey.conf>"
conf="$1"
# @include lib-conf-secret.sh
umask 077
# password_file is empty without auth; repl_include is empty without the Sentinel decision (cluster
# mode, or replication without Sentinel), and so are the decision's values; rejoin_gate and
# background (paths, space-separated) are empty when not run.
# @values mode run_dir data_dir auth_file announce_file password_file zone_file rejoin_gate background hold_failover repl_include master_name sentinels self_port wait_s grace_s agree_s retry_s handover_slack_s sentinel_cli_timeout addr_wait_s restore restore_marker self_local_host released_priority
mkdir -p "$run_dir" "$data_dir"
auth_tmp="$auth_file.tmp"
announce_tmp="$announce_file.tmp"
if [ -n "$password_file" ]; then
  read_password
  printf 'requirepass %s\nmasterauth %s\n' "$quoted" "$quoted" > "$auth_tmp"
  unset quoted
else
  : > "$auth_tmp"
fi
: > "$announce_tmp"
if [ "$mode" = replication ]; then
  if [ -n "${VALKEY_ANNOUNCE_HOST:-}" ]; then
    printf 'replica-announce-ip %s\n' "$(conf_quote "$VALKEY_ANNOUNCE_HOST")" >> "$announce_tmp"
  fi
else
  [ -n "${VALKEY_ANNOUNCE_HOST:-}" ] || fail "VALKEY_ANNOUNCE_HOST (the pod's stable DNS name) is not set"
  printf 'cluster-announce-hostname %s\n' "$(conf_quote "$VALKEY_ANNOUNCE_HOST")" >> "$announce_tmp"
  if [ -n "${POD_NAME:-}" ]; then
    printf 'cluster-announce-human-nodename %s\n' "$(conf_quote "$POD_NAME")" >> "$announce_tmp"
  fi
  if [ -n "${VALKEY_ANNOUNCE_IP:-}" ]; then
    printf 'cluster-announce-ip %s\n' "$(conf_quote "$VALKEY_ANNOUNCE_IP")" >> "$announce_tmp"
  fi
  # A restart: no automatic failover by this member until heal.sh has re-met the cluster and releases it
  # (pod/start-script.ts holdFailover; cluster-heal.sh release_failover).
  if [ -n "$hold_failover" ] && [ -s "$data_dir/nodes.conf" ]; then
    printf 'cluster-replica-no-failover yes\n' >> "$announce_tmp"
  fi
  # availability-zone (Valkey >= 8.1): the pod's zone label, else the zone a previous run kept.
  zone="${VALKEY_AVAILABILITY_ZONE:-}"
  if [ -z "$zone" ] && [ -r "$zone_file" ]; then zone=$(head -n 1 "$zone_file"); fi
  if [ -n "$zone" ]; then
    v=$(valkey-server --version 2>/dev/null | sed -n 's/.* v=\([0-9]*\)\.\([0-9]*\)\..*/\1 \2/p')
    major=${v%% *}
    minor=${v#* }
    if [ -n "$v" ] && { [ "$major" -gt 8 ] || { [ "$major" -eq 8 ] && [ "$minor" -ge 1 ]; }; }; then
      printf 'availability-zone %s\n' "$(conf_quote "$zone")" >> "$announce_tmp"
    else
      echo "start.sh: this valkey-server (version ${major:-?}.${minor:-?}) predates availability-zone (8.1); not setting it" >&2
    fi
  fi
fi
mv -f "$auth_tmp" "$auth_file"
mv -f "$announce_tmp" "$announce_file"
if [ -n "$repl_include" ]; then
# --- replication member: ask the Sentinels who the primary is (pod/scripts/replication-start.sh) ---
# @include replication-start.sh
  :
fi
if [ -n "$rejoin_gate" ] && [ ! -e "$data_dir/nodes.conf" ]; then sh "$rejoin_gate" gate </dev/null || true; fi
# One background subshell runs the scripts in order, the last one exec'd: after the exec below, $$
# is valkey-server's pid (PID 1 in the container) and each script stops when it is gone. One
# long-lived child, not one per script: valkey-server reaps children only around its own forks.
if [ -n "$background" ]; then
  # shellcheck disable=SC2086 # the scripts' paths, one word each (no whitespace or glob: checked at render)
  ( set -- $background; while [ $# -gt 1 ]; do sh "$1" "$$"; shift; done; exec sh "$1" "$$" ) </dev/null &
fi
exec valkey-server "$conf"
