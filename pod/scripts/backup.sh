#!/bin/sh
# Valkey backup (pod/scripts/backup.sh in valkey-on-eks; see pod/backup-script.ts). Usage: backup.sh snapshot|upload|all ...
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
set -eu
# shellcheck disable=SC2034 # read by fail and log (lib-s3.sh, included next)
script_name=backup.sh
# @include lib-s3.sh
# shellcheck disable=SC2034 # read by cli (lib-cli.sh, included next)
cli_timeout=3
# @include lib-cli.sh
# The targets, chosen live from a seed: plan_cluster HOST PORT and plan_replication HOST PORT.
# @include lib-backup-plan.sh
check_bin="${VALKEY_CHECK_RDB:-valkey-check-rdb}"
work="${BACKUP_WORK_DIR:?BACKUP_WORK_DIR (where the RDB files are kept) is not set}"
# @values transfer_timeout manifest_object backup_format
need_uri() {
  case "${BACKUP_URI:-}" in s3://?*) ;; *) fail "BACKUP_URI must be s3://bucket[/prefix], got '${BACKUP_URI:-}'" ;; esac
}
digits() { case "$2" in ''|*[!0-9]*) fail "$1 is not a whole number: '$2'" ;; esac; }

snapshot_one() {
  IFS=/ read -r shard host port ranges <<EOF
$1
EOF
  digits "target $1: shard" "$shard"
  digits "target $1: port" "$port"
  case "$host" in ''|*[!A-Za-z0-9.:-]*) fail "target $1: bad host '$host'" ;; esac
  case "$ranges" in *[!0-9,-]*) fail "target $1: slot ranges must look like 0-5460,6000, got '$ranges'" ;; esac
  rdb="$work/shard-$shard.rdb"
  rm -f "$rdb.part" "$rdb" "$work/shard-$shard.json"
  started=$(date +%s)
  out=$(timeout "$transfer_timeout" "$cli_bin" -h "$host" -p "$port" --rdb "$rdb.part" </dev/null 2>&1) ||
    fail "shard $shard: the RDB transfer from $host:$port failed: $(printf '%s' "$out" | tail -n 2 | tr '\n' ' ')"
  [ -s "$rdb.part" ] || fail "shard $shard: the RDB from $host:$port is empty"
  check=$("$check_bin" "$rdb.part" 2>&1) || fail "shard $shard: valkey-check-rdb rejects the RDB from $host:$port: $(printf '%s' "$check" | grep -v '^\[offset [0-9]*\] AUX' | tail -n 4 | tr '\n' ' ')"
  printf '%s\n' "$check" | grep -q 'RDB looks OK' || fail "shard $shard: valkey-check-rdb did not say the RDB looks OK"
  keys=$(printf '%s\n' "$check" | sed -n 's/^\[info\] \([0-9]*\) keys read$/\1/p')
  expires=$(printf '%s\n' "$check" | sed -n 's/^\[info\] \([0-9]*\) expires$/\1/p')
  version=$(printf '%s\n' "$check" | sed -n "s/.*AUX FIELD [a-z]*-ver = '\([0-9][0-9.]*\)'.*/\1/p" | head -n 1)
  offset=$(printf '%s\n' "$check" | sed -n "s/.*AUX FIELD repl-offset = '\([0-9]*\)'.*/\1/p" | head -n 1)
  digits "shard $shard: key count" "$keys"
  digits "shard $shard: expires" "$expires"
  digits "shard $shard: repl-offset" "${offset:-0}"
  case "$version" in [0-9]*.[0-9]*.[0-9]*) ;; *) fail "shard $shard: no server version in the RDB" ;; esac
  bytes=$(wc -c < "$rdb.part" | tr -d ' ')
  sum=$(sha256sum "$rdb.part" | cut -d' ' -f1)
  mv -f "$rdb.part" "$rdb"
  slots=""
  if [ -n "$ranges" ]; then slots="\"$(printf '%s' "$ranges" | sed 's/,/","/g')\""; fi
  printf '{"shard":%s,"member":"%s:%s","slots":[%s],"object":"shard-%s.rdb","bytes":%s,"sha256":"%s","keys":%s,"expires":%s,"offset":%s,"version":"%s"}\n' \
    "$shard" "$host" "$port" "$slots" "$shard" "$bytes" "$sum" "$keys" "$expires" "${offset:-0}" "$version" > "$work/shard-$shard.json"
  log "shard $shard: $keys keys, $bytes bytes from $host:$port in $(( $(date +%s) - started ))s, sha256 $sum"
}

snapshot() {
  [ $# -ge 1 ] || fail "snapshot: no targets (<shard>/<host>/<port>/<slot ranges>)"
  mkdir -p "$work"
  rm -f "$work"/shard-*.json "$work"/shard-*.rdb
  for t in "$@"; do snapshot_one "$t"; done
}

upload() {
  mode="$1"
  case "$mode" in cluster|replication) ;; *) fail "upload: MODE must be cluster or replication, got '$mode'" ;; esac
  need_uri
  id="${BACKUP_ID:-$(date -u +%Y%m%dT%H%M%SZ)}"
  case "$id" in ''|*[!0-9A-Za-z._-]*) fail "BACKUP_ID may hold letters, digits, . _ - only, got '$id'" ;; esac
  dest="${BACKUP_URI%/}/$id"
  n=0
  while [ -e "$work/shard-$n.json" ]; do n=$((n + 1)); done
  [ "$n" -ge 1 ] || fail "upload: no shard-0.json in $work (run snapshot first)"
  # shellcheck disable=SC2010 # counts the script's own shard-<n>.json files, whose names it chose
  total=$(ls "$work" | grep -c '^shard-[0-9]*\.json$' || true)
  [ "$total" -eq "$n" ] || fail "upload: the shard files in $work are not numbered 0..$((n - 1)) ($total found)"
  i=0
  while [ "$i" -lt "$n" ]; do
    out=$(aws_cli s3 cp --only-show-errors "$work/shard-$i.rdb" "$dest/shard-$i.rdb" 2>&1) || fail "uploading shard $i to $dest/shard-$i.rdb: $out"
    i=$((i + 1))
  done
  manifest="$work/$manifest_object"
  {
    printf '{"format":"%s","id":"%s","createdAt":"%s","mode":"%s","shards":[\n' "$backup_format" "$id" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$mode"
    i=0
    while [ "$i" -lt "$n" ]; do
      [ "$i" -eq $((n - 1)) ] && sep="" || sep=","
      printf '%s%s\n' "$(cat "$work/shard-$i.json")" "$sep"
      i=$((i + 1))
    done
    printf ']}\n'
  } > "$manifest"
  out=$(aws_cli s3 cp --only-show-errors --content-type application/json "$manifest" "$dest/$manifest_object" 2>&1) || fail "uploading the manifest to $dest/$manifest_object: $out"
  log "backup $id: $n shard(s) uploaded to $dest/"
  printf '%s/\n' "$dest"
}

plan() {
  [ $# -eq 3 ] || fail "usage: backup.sh plan MODE HOST PORT"
  case "$1" in cluster) plan_cluster "$2" "$3" ;; replication) plan_replication "$2" "$3" ;; *) fail "MODE must be cluster or replication, got '$1'" ;; esac
}
snapshot_from() {
  targets=$(plan "$@")
  [ -n "$targets" ] || fail "the plan found no shard to snapshot"
  log "plan: $(printf '%s' "$targets" | tr '\n' ' ')"
  # shellcheck disable=SC2086 # one word per target
  snapshot $targets
}

[ $# -ge 1 ] || fail "usage: backup.sh snapshot TARGET... | upload MODE | all MODE TARGET... | plan|snapshot-from|all-from MODE HOST PORT"
step="$1"
shift
case "$step" in
  snapshot) snapshot "$@" ;;
  upload) [ $# -eq 1 ] || fail "usage: backup.sh upload MODE"; upload "$1" ;;
  all) [ $# -ge 2 ] || fail "usage: backup.sh all MODE TARGET..."; mode="$1"; shift; snapshot "$@"; upload "$mode" ;;
  plan) plan "$@" ;;
  snapshot-from) snapshot_from "$@" ;;
  all-from) [ $# -eq 3 ] || fail "usage: backup.sh all-from MODE HOST PORT"; snapshot_from "$@"; upload "$1" ;;
  *) fail "unknown step '$step' (snapshot, upload, all, plan, snapshot-from, all-from)" ;;
esac
