#!/bin/sh
# Valkey restore (pod/scripts/restore.sh in valkey-on-eks; see pod/restore-script.ts). Runs before
# valkey-server. Usage: restore.sh [fetch|place|all]
# shellcheck disable=SC2154 # set by the # @values line; the render drops this line (pod/shell-file.ts)
set -eu
# shellcheck disable=SC2034 # read by fail and log (lib-s3.sh, included next)
script_name=restore.sh
# @include lib-s3.sh
check_bin="${VALKEY_CHECK_RDB:-valkey-check-rdb}"
# planned_slots: the new topology's slot ranges per shard, in shard order, space-separated (each a
# comma-separated list); empty in replication mode.
# @values mode data planned_shards planned_slots aof_dir aof_base aof_manifest restored_marker pending_marker manifest_object backup_format msg_file_default
# The slot ranges planned for shard $1 (empty when none are).
shard_slots() {
  i=0
  for r in $planned_slots; do
    if [ "$i" = "$1" ]; then printf '%s' "$r"; return 0; fi
    i=$((i + 1))
  done
  printf ''
}
# shellcheck disable=SC2034 # read by cli (lib-cli.sh, included next)
cli_timeout=2
# @include lib-cli.sh
peers() {
  # shellcheck disable=SC2086 # RESTORE_PEERS holds several host:port words: one per line on purpose
  if [ -n "${RESTORE_PEERS:-}" ]; then printf '%s\n' $RESTORE_PEERS; return; fi
  [ -n "${RESTORE_PEERS_DNS:-}" ] || return 0
  getent ahosts "$RESTORE_PEERS_DNS" 2>/dev/null | awk -v p="${RESTORE_PEERS_PORT:-6379}" '!seen[$1]++ { print $1 ":" p }'
}
formed_peer() {
  for p in $(peers); do
    if [ "$mode" = cluster ]; then
      info=$(cli -h "${p%:*}" -p "${p##*:}" cluster info 2>&1) || true
      field=cluster_known_nodes:
    else
      info=$(cli -h "${p%:*}" -p "${p##*:}" info replication 2>&1) || true
      field=role:
    fi
    # An answer holding the field goes on to the check; one refusing the password stops the restore
    # (return 2: the peers' state is unknown); anything else (not started, unreachable, loading) is skipped.
    case "$info" in
      *"$field"*) ;;
      *NOAUTH*|*WRONGPASS*|*"invalid password"*|*"Authentication required"*) echo "$p answered: $(printf '%s' "$info" | head -n 1)"; return 2 ;;
      *) continue ;;
    esac
    if [ "$mode" = cluster ]; then
      n=$(printf '%s\n' "$info" | sed -n 's/^cluster_known_nodes:\([0-9]*\).*/\1/p')
      [ "${n:-1}" -gt 1 ] && { echo "$p knows $n cluster nodes"; return 0; }
      continue
    fi
    # A replica counts only once it was linked (its link up, or down since a time): a new stack's
    # members start as replicas of ordinal 0 as soon as the Sentinels name it, so on loaded nodes
    # they can be waiting for it, never linked (master_link_down_since_seconds:-1), before its own
    # restore-place runs; taking them for a formed release placed nothing and the primary started
    # empty (seen on real pods in CI: DBSIZE 0 of 3000).
    case "$info" in *role:slave*)
      case "$info" in *master_link_status:up*) echo "$p is a replica linked to its primary"; return 0 ;; esac
      since=$(printf '%s\n' "$info" | sed -n 's/^master_link_down_since_seconds:\(-\{0,1\}[0-9]*\).*/\1/p')
      [ "${since:--1}" -ge 0 ] && { echo "$p is a replica whose link to its primary is down for ${since}s"; return 0 ;}
      ;;
    esac
    n=$(printf '%s\n' "$info" | sed -n 's/^connected_slaves:\([0-9]*\).*/\1/p')
    [ "${n:-0}" -gt 0 ] && { echo "$p is a primary with $n replica(s)"; return 0; }
  done
  return 1
}
msg_file="${RESTORE_MESSAGE_FILE:-$msg_file_default}"
json_str() { printf '%s' "$1" | tr -d '[:cntrl:]' | sed 's/\\/\\\\/g; s/"/\\"/g'; }
message() { { printf '%s\n' "$1" > "$msg_file"; } 2>/dev/null || log "cannot write the termination message to $msg_file"; }
skip() { log "$1"; printf '%s\n' "$1" > "$stage/skipped"; exit 0; }
earlier() { [ ! -e "$data/$restored_marker" ] || printf ' (it holds %s)' "$(head -n 1 "$data/$restored_marker" | cut -d' ' -f1)"; }
fetch_step() {
  from="${RESTORE_FROM:-}"
  from="${from%/}"
  stage="$data/.restore"
  rm -rf "$stage"
  mkdir -p "$stage"
  json_str "$from" > "$stage/from"
  [ -n "$from" ] || skip "RESTORE_FROM is not set: nothing to restore"
  case "$from" in s3://?*) ;; *) fail "RESTORE_FROM must be s3://bucket/prefix/<backup id>, got '$from'" ;; esac
  shard="${RESTORE_SHARD:-}"
  if [ -z "$shard" ]; then
    ordinal="${POD_NAME##*-}"
    case "$ordinal" in ''|*[!0-9]*) fail "set RESTORE_SHARD, or POD_NAME ending in an ordinal (got '${POD_NAME:-}')" ;; esac
    # Replication: every member restores the one shard. Cluster: ordinal n restores shard n; the rest start empty.
    if [ "$mode" = replication ]; then shard=0; elif [ "$ordinal" -lt "$planned_shards" ]; then shard=$ordinal; else shard=none; fi
  fi
  [ "$shard" != none ] || skip "this member starts empty: it joins as a replica and full-syncs from its shard's restored primary"
  case "$shard" in ''|*[!0-9]*) fail "RESTORE_SHARD must be a shard number or none, got '$shard'" ;; esac
  for f in dump.rdb "$aof_dir" nodes.conf; do
    if [ -e "$data/$f" ]; then skip "$data/$f exists (a restart, or not a new volume): not restoring$(earlier)"; fi
  done
  out=$(aws_cli s3 cp --only-show-errors "$from/$manifest_object" "$stage/$manifest_object" 2>&1) ||
    fail "cannot fetch the backup manifest $from/$manifest_object (no such backup, an incomplete one, or no access): $out"
  m="$stage/$manifest_object"
  grep -q "^{\"format\":\"$backup_format\"," "$m" || fail "$from/$manifest_object is not a $backup_format manifest"
  grep -q "\"mode\":\"$mode\"" "$m" || fail "$from is a backup of another mode; this member is in $mode mode"
  shards=$(grep -c '^{"shard":' "$m" || true)
  [ "$shards" -eq "$planned_shards" ] || fail "the backup has $shards shard(s), the new $mode topology plans $planned_shards: restore into the same shape"
  line=$(grep "^{\"shard\":$shard," "$m" || true)
  if [ -z "$line" ] || [ "$(printf '%s\n' "$line" | wc -l)" -ne 1 ]; then fail "the manifest has no single entry for shard $shard"; fi
  line="${line%,}"
  id=$(sed -n 's/^{"format":"[^"]*","id":"\([0-9A-Za-z._-]*\)".*/\1/p' "$m" | head -n 1)
  [ -n "$id" ] || fail "$from/$manifest_object names no backup id"
  field() { printf '%s' "$line" | sed -n "s/.*\"$1\":\"\{0,1\}\([^\",]*\)\"\{0,1\}[,}].*/\1/p"; }
  sum=$(field sha256)
  keys=$(field keys)
  case "$sum" in *[!0-9a-f]*|'') fail "shard $shard: the manifest's sha256 is malformed" ;; esac
  case "$keys" in *[!0-9]*|'') fail "shard $shard: the manifest's key count is malformed" ;; esac
  have=$(printf '%s' "$line" | sed -n 's/.*"slots":\[\([^]]*\)\].*/\1/p' | tr -d '"')
  want=$(shard_slots "$shard")
  [ "$have" = "$want" ] || fail "shard $shard: the snapshot holds slots '$have', the new topology plans '$want' for it: refusing (restore into a cluster of the snapshot's shape)"
  obj="$from/shard-$shard.rdb"
  out=$(aws_cli s3 cp --only-show-errors "$obj" "$stage/dump.rdb" 2>&1) || fail "shard $shard: cannot fetch $obj (missing object?): $out"
  printf '%s %s %s %s\n' "$shard" "$sum" "$keys" "$obj" > "$stage/entry"
  printf '%s\n' "$id" > "$stage/backup"
  printf '%s\n' "$line" > "$stage/entry.json"
  touch "$stage/fetched"
  log "shard $shard: fetched $obj"
}
place_step() {
  stage="$data/.restore"
  from_json=$(cat "$stage/from" 2>/dev/null || true)
  none() {
    log "$1"
    message "{\"restore\":\"none\",\"from\":\"$from_json\",\"reason\":\"$(json_str "$1")\"}"
    rm -rf "$stage"; exit 0
  }
  [ ! -e "$stage/skipped" ] || none "$(cat "$stage/skipped")"
  [ -e "$stage/fetched" ] || none "nothing fetched: nothing to place"
  if [ -e "$data/$aof_dir" ] || [ -e "$data/dump.rdb" ]; then none "already placed (an interrupted earlier run)"; fi
  set +e; why=$(formed_peer); formed=$?; set -e
  [ "$formed" -ne 0 ] || none "not restoring: the release is already formed ($why): this is a lost volume, not a new stack; starting empty, to rejoin as a replica"
  [ "$formed" -eq 1 ] || fail "cannot tell whether the release is already formed ($why): not restoring"
  read -r shard sum keys obj < "$stage/entry"
  got=$(sha256sum "$stage/dump.rdb" | cut -d' ' -f1)
  [ "$got" = "$sum" ] || fail "shard $shard: checksum mismatch: $obj has sha256 $got, the manifest says $sum (corrupted or replaced): not restoring"
  if command -v "$check_bin" >/dev/null 2>&1; then
    check=$("$check_bin" "$stage/dump.rdb" 2>&1) || fail "shard $shard: valkey-check-rdb rejects $obj"
    read_keys=$(printf '%s\n' "$check" | sed -n 's/^\[info\] \([0-9]*\) keys read$/\1/p')
    [ "$read_keys" = "$keys" ] || fail "shard $shard: $obj holds $read_keys keys, the manifest says $keys"
  else
    log "no valkey-check-rdb here: the sha256 check stands for the RDB check"
  fi
  rm -rf "${stage:?}/${aof_dir:?}"
  mkdir "$stage/$aof_dir"
  ln "$stage/dump.rdb" "$stage/$aof_dir/$aof_base" 2>/dev/null || cp "$stage/dump.rdb" "$stage/$aof_dir/$aof_base"
  printf 'file %s seq 1 type b\n' "$aof_base" > "$stage/$aof_dir/$aof_manifest"
  mv "$stage/$aof_dir" "$data/$aof_dir"
  mv "$stage/dump.rdb" "$data/dump.rdb"
  printf '%s shard %s sha256 %s keys %s\n' "$obj" "$shard" "$sum" "$keys" > "$data/$restored_marker"
  # Replication: the start decision may make ordinal 0 the first primary on this data (it removes the marker).
  if [ "$mode" = replication ]; then : > "$data/$pending_marker"; fi
  message "{\"restore\":\"placed\",\"from\":\"$from_json\",\"backup\":\"$(cat "$stage/backup")\",\"entry\":$(cat "$stage/entry.json")}"
  rm -rf "$stage"
  log "shard $shard: restored $keys keys from $obj (sha256 ok)"
}
case "${1:-all}" in
  fetch) fetch_step ;;
  place) place_step ;;
  all) (fetch_step); place_step ;;
  *) fail "usage: restore.sh [fetch|place|all]" ;;
esac
