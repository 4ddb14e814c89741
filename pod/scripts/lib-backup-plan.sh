#!/bin/sh
# backup.sh's `plan` step (included by `# @include lib-backup-plan.sh`, see pod/shell-file.ts):
# the sh twin of core/backup/backup-plan.ts, for the CronJob, which has only sh, awk and
# valkey-cli. plan_cluster HOST PORT and plan_replication HOST PORT print one target per shard,
# `<shard>/<host>/<port>/<ranges>`, in slot order, choosing a replica whose link is up with the
# highest replication offset (the least lag: a shard's replicas follow one stream), else, with
# BACKUP_ALLOW_PRIMARY=1, the primary (it forks once), else failing, naming the shard.
# - cluster: CLUSTER NODES from the seed; primaries with slots (not failed), their connected
#   replicas asked for `master_link_status` and `slave_repl_offset`.
# - replication: INFO replication from the seed (followed to its primary when the seed is a
#   replica); the primary's `slaveN:ip=...,port=...,state=online,offset=...` lines.
# Needs cli, fail and log (lib-cli.sh, lib-s3.sh).
pick_primary() {
  [ "${BACKUP_ALLOW_PRIMARY:-0}" = 1 ] || fail "shard $1 (primary $2): no replica with its link up; set BACKUP_ALLOW_PRIMARY=1 (config backup.allowPrimary) to snapshot the primary"
  log "shard $1: no replica with its link up; snapshotting its primary $2 (it forks once)"
}
plan_cluster() {
  nodes=$(cli -h "$1" -p "$2" cluster nodes 2>&1) || fail "CLUSTER NODES on $1:$2: $nodes"
  masters=$(printf '%s\n' "$nodes" | tr -d '\r' | awk '
    $3 ~ /master/ && $3 !~ /(^|,)fail[?]?(,|$)|noaddr|handshake/ {
      r = ""; first = -1
      for (i = 9; i <= NF; i++) if ($i !~ /^\[/) { r = r (r == "" ? "" : ",") $i; if (first < 0) { split($i, p, "-"); first = p[1] + 0 } }
      a = $2; sub(/@.*/, "", a)
      if (r != "") print first, $1, a, r
    }' | sort -n)
  [ -n "$masters" ] || fail "no primary with slots in CLUSTER NODES from $1:$2"
  shard=0
  while read -r _first id hp ranges; do
    best=""
    best_off=-1
    for r in $(printf '%s\n' "$nodes" | tr -d '\r' | awk -v m="$id" '$4 == m && $3 ~ /slave/ && $3 !~ /(^|,)fail[?]?(,|$)|noaddr|handshake/ && $8 == "connected" { a = $2; sub(/@.*/, "", a); print a }'); do
      info=$(cli -h "${r%:*}" -p "${r##*:}" info replication 2>/dev/null | tr -d '\r') || continue
      printf '%s\n' "$info" | grep -q '^master_link_status:up$' || continue
      off=$(printf '%s\n' "$info" | sed -n 's/^slave_repl_offset:\([0-9][0-9]*\)$/\1/p')
      [ -n "$off" ] || continue
      if [ "$off" -gt "$best_off" ]; then best="$r"; best_off=$off; fi
    done
    if [ -z "$best" ]; then pick_primary "$shard" "$hp"; best="$hp"; fi
    printf '%s/%s/%s/%s\n' "$shard" "${best%:*}" "${best##*:}" "$ranges"
    shard=$((shard + 1))
  done <<EOF
$masters
EOF
}
plan_replication() {
  info=$(cli -h "$1" -p "$2" info replication 2>&1 | tr -d '\r') || fail "INFO replication on $1:$2: $info"
  ph="$1"
  pp="$2"
  if printf '%s\n' "$info" | grep -q '^role:slave$'; then
    ph=$(printf '%s\n' "$info" | sed -n 's/^master_host://p')
    pp=$(printf '%s\n' "$info" | sed -n 's/^master_port://p')
    info=$(cli -h "$ph" -p "$pp" info replication 2>&1 | tr -d '\r') || fail "INFO replication on the primary $ph:$pp: $info"
  fi
  best=""
  best_off=-1
  lines=$(printf '%s\n' "$info" | sed -n 's/^slave[0-9][0-9]*:\(.*\)$/\1/p')
  while IFS= read -r l; do
    [ -n "$l" ] || continue
    ip=$(printf '%s' "$l" | sed -n 's/.*ip=\([^,]*\).*/\1/p')
    port=$(printf '%s' "$l" | sed -n 's/.*port=\([0-9]*\).*/\1/p')
    state=$(printf '%s' "$l" | sed -n 's/.*state=\([a-z_]*\).*/\1/p')
    off=$(printf '%s' "$l" | sed -n 's/.*offset=\([0-9]*\).*/\1/p')
    if [ "$state" != online ] || [ -z "$off" ] || [ -z "$ip" ] || [ -z "$port" ]; then continue; fi
    if [ "$off" -gt "$best_off" ]; then best="$ip:$port"; best_off=$off; fi
  done <<EOF
$lines
EOF
  if [ -z "$best" ]; then pick_primary 0 "$ph:$pp"; best="$ph:$pp"; fi
  printf '0/%s/%s/\n' "${best%:*}" "${best##*:}"
}
