#!/bin/sh
# Waits until the local server answers PING; exits 0 when it is gone or past the deadline
# (included by `# @include lib-wait-ping.sh` after lib-cli.sh and lib-deadline.sh, see
# pod/shell-file.ts).
# shellcheck disable=SC2154 # set by the including script's # @values (pod/shell-file.ts)
while :; do
  server_alive || exit 0
  expired && { log "the server did not answer PING within ${deadline}s; giving up"; exit 0; }
  [ "$(local_cli ping 2>/dev/null)" = PONG ] && break
  sleep 1
done
