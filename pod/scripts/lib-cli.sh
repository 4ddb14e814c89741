#!/bin/sh
# The bounded valkey-cli call every pod script shares (included by `# @include lib-cli.sh`, see
# pod/shell-file.ts and pod/sh-cli.ts): each call runs under `timeout`, which bounds the connect
# and the command together; the password comes from VALKEYCLI_AUTH / REDISCLI_AUTH in the
# environment, never argv; stdin is /dev/null so a call inside a `while read` loop cannot eat its
# input. Needs cli_timeout, and for local_cli also local_host and port, set before it.
# shellcheck disable=SC2154 # set by the including script's # @values (pod/shell-file.ts)
cli_bin="${VALKEY_CLI:-valkey-cli}"
# cli bounded by $1 seconds instead of cli_timeout.
if command -v timeout >/dev/null 2>&1; then
  cli_within() { w_bound=$1; shift; timeout "$w_bound" "$cli_bin" "$@" </dev/null; }
else
  echo "$0: no timeout command: client calls are unbounded" >&2
  cli_within() { shift; "$cli_bin" "$@" </dev/null; }
fi
cli() { cli_within "$cli_timeout" "$@"; }
local_cli() { cli -h "$local_host" -p "$port" "$@"; }
# Commands from stdin, one per line, to the local server in one client process (its replies one
# per line, in order; an error reply is followed by an empty line); one `timeout` bounds them all.
# shellcheck disable=SC2317 # only some of the including scripts call it
local_cli_batch() { local_cli_batch_within "$cli_timeout"; }
# local_cli_batch bounded by $1 seconds instead of cli_timeout.
# shellcheck disable=SC2317 # only some of the including scripts call it
local_cli_batch_within() {
  if command -v timeout >/dev/null 2>&1; then
    timeout "$1" "$cli_bin" -h "$local_host" -p "$port"
  else
    "$cli_bin" -h "$local_host" -p "$port"
  fi
}
