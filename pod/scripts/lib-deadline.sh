#!/bin/sh
# The deadline of the background scripts (heal, rejoin; included by `# @include lib-deadline.sh`,
# see pod/shell-file.ts): `expired` (seconds since these lines ran >= $deadline) and
# `server_alive` (the pid in $server_pid still runs; always true when it is empty).
# shellcheck disable=SC2154 # set by the including script's # @values (pod/shell-file.ts)
started=$(date +%s)
expired() { [ $(( $(date +%s) - started )) -ge "$deadline" ]; }
server_alive() { [ -z "$server_pid" ] || kill -0 "$server_pid" 2>/dev/null; }
