#!/bin/sh
# The log of a container hook (included by `# @include lib-hook-log.sh`, see pod/shell-file.ts):
# `log` writes "prestop: <line>" to stderr and appends "<UTC time, ms> prestop: <line>" to every
# file the hook was given as an argument. The kubelet keeps no output of a hook, and deletes the
# container's log with an evicted pod; the pods pass their container's own stderr (/proc/1/fd/2:
# the server's, so `kubectl logs` shows the hook's lines among the server's while it runs) and a
# file on the data volume (it outlives the pod: the next pod of the same member shows it); the
# local launches pass the member's data dir's file. A file that cannot be written costs the copy,
# never the hook. A regular file past 800 lines is first cut to its last 400 (a few dozen hooks).
hook_logs="$*"
for f in $hook_logs; do
  if [ -f "$f" ] && [ "$(wc -l <"$f" 2>/dev/null || echo 0)" -gt 800 ]; then
    { tail -n 400 "$f" >"$f.cut" && mv "$f.cut" "$f"; } 2>/dev/null || true
  fi
done
log() {
  echo "prestop: $*" >&2
  [ -n "$hook_logs" ] || return 0
  stamp=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ 2>/dev/null)
  case "$stamp" in *%* | '') stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ) ;; esac
  for f in $hook_logs; do { echo "$stamp prestop: $*" >>"$f"; } 2>/dev/null || true; done
}
