#!/bin/sh
# Sentinel entrypoint (pod/scripts/sentinel-start.sh in valkey-on-eks; see pod/sentinel-start-script.ts).
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
set -eu
umask 077
fail() { echo "sentinel-start.sh: $*" >&2; exit 1; }
say() { echo "sentinel-start.sh: $*" >&2; }
# @include lib-conf-secret.sh
# password_file is empty without auth.
# @values template state master_name password_file resolve_wait info_period local_host port cli_timeout
# @include lib-cli.sh
mkdir -p "$(dirname "$state")"
if [ ! -s "$state" ]; then
  say "first start: writing $state from $template"
  [ -r "$template" ] || fail "$template is not readable"
  [ -n "${VALKEY_ANNOUNCE_HOST:-}" ] || fail "VALKEY_ANNOUNCE_HOST (this Sentinel's stable DNS name) is not set"
  cat "$template" > "$state.tmp"
  printf 'sentinel announce-ip %s\n' "$(conf_quote "$VALKEY_ANNOUNCE_HOST")" >> "$state.tmp"
  if [ -n "$password_file" ]; then
    read_password
    printf 'requirepass %s\nsentinel sentinel-pass %s\nsentinel auth-pass %s %s\n' "$quoted" "$quoted" "$master_name" "$quoted" >> "$state.tmp"
    unset quoted
  fi
  mv -f "$state.tmp" "$state"
else
  say "keeping the Sentinel state in $state"
fi
chmod 600 "$state"
primary=$(awk '$1 == "sentinel" && $2 == "monitor" { print $4; exit }' "$state")
[ -n "$primary" ] || fail "$state monitors no primary"
# An address literal needs no lookup (getent hosts answers "not found" for an IP absent from /etc/hosts).
case "$primary" in *:*) literal=yes ;; *[!0-9.]*) literal=no ;; *) literal=yes ;; esac
if [ "$literal" = no ] && command -v getent >/dev/null 2>&1; then
  waited=0
  until getent hosts "$primary" >/dev/null 2>&1; do
    [ "$waited" -lt "$resolve_wait" ] || { say "$primary does not resolve after ${resolve_wait}s; starting anyway"; break; }
    sleep 1
    waited=$((waited + 1))
  done
fi
# Sentinel reads a primary's and its replicas' INFO every 10 s (every second only while the primary
# is down or a replica's link is): a replica released to a promotable priority, or its link back up,
# stays unknown to it that long. info_period is the period this Sentinel uses instead; `SENTINEL
# DEBUG info-period` is the only way to set it and a restart forgets it, so it is set at every start,
# in the background from before the exec ($$ becomes the server's pid), until it is OK or the server
# is gone (then a zombie under valkey-server, as replication-start.sh's priority release).
set_info_period() {
  tries=0
  while kill -0 "$$" 2>/dev/null && [ "$tries" -lt 120 ]; do
    reply=$(local_cli SENTINEL DEBUG info-period "$info_period" 2>&1) || reply="no answer: $reply"
    [ "$reply" = OK ] && { say "SENTINEL DEBUG info-period $info_period: OK"; return 0; }
    tries=$((tries + 1))
    sleep 0.5 2>/dev/null || sleep 1
  done
  kill -0 "$$" 2>/dev/null && say "SENTINEL DEBUG info-period $info_period not set after $tries tries (last reply: $reply); it reads INFO every 10 s"
  return 0
}
( set_info_period ) </dev/null &
exec valkey-server "$state" --sentinel
