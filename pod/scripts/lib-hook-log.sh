#!/bin/sh
# The log of a container hook (included by `# @include lib-hook-log.sh`, see pod/shell-file.ts):
# `log` writes "prestop: <line>" to stderr and, when the hook was given a file as its first
# argument, appends it there too. The kubelet keeps no output of a preStop hook; the pods pass
# their container's own stderr (/proc/1/fd/2: the server's, so `kubectl logs` shows the hook's
# lines among the server's); the local launches run the script without one. A file that cannot be
# written costs the copy, never the hook.
hook_log="${1:-}"
log() {
  echo "prestop: $*" >&2
  [ -z "$hook_log" ] || { echo "prestop: $*" >>"$hook_log"; } 2>/dev/null || true
}
