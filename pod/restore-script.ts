/**
 * restore.sh: before valkey-server starts on a NEW volume, places this member's shard of a backup
 * (pod/backup-script.ts) in the data dir, or fails (non-zero exit, a line naming the fault) so the
 * server never starts empty in its place. Two steps, so each runs in the image that has its tools,
 * as two init containers on the data volume: `restore.sh fetch` (an AWS CLI image: the manifest,
 * the shape and slot checks, the object into `<data>/.restore/`) then `restore.sh place` (the
 * Valkey image: sha256, valkey-check-rdb, the files put in place); `restore.sh` alone does both.
 * Locally: `sh restore.sh fetch && sh restore.sh place && exec valkey-server ...`.
 *
 * Which shard: $RESTORE_SHARD (a number, or `none`), else the ordinal of $POD_NAME: in cluster mode
 * members 0..P-1 restore shards 0..P-1 and the rest start empty (a replica must be empty to attach,
 * it gets the data by full sync from its shard's restored primary); in replication mode every member
 * restores shard 0, so whichever is promoted first holds the data.
 *
 * Steps: data already there (dump.rdb, appendonlydir or nodes.conf: a restart, or a volume that was
 * not new) -> nothing to do; fetch manifest.json (missing -> fail: an incomplete backup); its mode
 * must be this one; its shard count and this shard's slot ranges must equal the new cluster's plan
 * (else fail naming both); fetch shard-<n>.rdb (missing -> fail); its sha256 must equal the
 * manifest's (else fail: corrupted or replaced); valkey-check-rdb, when the image has it, must
 * accept it with the manifest's key count; then dump.rdb AND an AOF made of it (appendonlydir/ with
 * the RDB as its base file and a manifest naming it): with `appendonly yes` and no AOF, Valkey 9
 * starts EMPTY and ignores dump.rdb (seen here: 0 keys), so the AOF base is what a member with AOF
 * on loads; a member with AOF off loads dump.rdb. Finally `restored-from` records the source.
 *
 * A lost volume is not a new stack: before placing anything, `place` asks the release's peers
 * (`$RESTORE_PEERS`, `host:port` words, else every address of `$RESTORE_PEERS_DNS`, the headless
 * Service, on `$RESTORE_PEERS_PORT`); when one of them is already part of a formed topology
 * (cluster mode: it knows other nodes; replication mode: a replica that has been linked to its
 * primary since it started, or a primary with replicas), the snapshot would be older than what the release serves, so nothing is placed: the
 * member starts empty and the lost-volume paths (rejoin.sh, the replication start decision) take it
 * back as a replica. A new stack's members have met nobody before the bootstrap, so they restore.
 * In replication mode the placed data also leaves `restore-pending`: the start decision lets
 * ordinal 0 become the first primary on it as on an empty first start, then removes the marker.
 *
 * Whatever it did, `place` ends by writing one JSON line (pod/restore-message.ts) to its
 * termination message file: the shard's manifest line and the backup id when it placed one, else
 * why not (fetch records its reason for skipping in the stage). The kubelet shows it in the pod's
 * status, where the RestoreCheck step reads the manifest's counts without reaching S3.
 *
 * Environment: RESTORE_FROM (s3://bucket/prefix/<backup id>; unset = no restore), RESTORE_SHARD,
 * POD_NAME, RESTORE_PEERS / RESTORE_PEERS_DNS / RESTORE_PEERS_PORT, AWS_ENDPOINT_URL, AWS_CLI,
 * VALKEY_CHECK_RDB, VALKEYCLI_AUTH (the peers' password), RESTORE_MESSAGE_FILE (the message's
 * file; default the kubelet's /dev/termination-log). AWS credentials: the CLI's own chain
 * (EKS Pod Identity in a pod).
 */
import type { ValkeyMode } from "../config/types.js";
import { BACKUP_FORMAT, MANIFEST_OBJECT } from "./backup-manifest.js";
import { RESTORE_MESSAGE_ENV, TERMINATION_LOG } from "./restore-message.js";
import { s3CliLines } from "./backup-script.js";
import { DATA_DIR } from "./paths.js";
import { boundedCliLines, shQuote } from "./sh-cli.js";

export interface RestoreScriptOptions {
  mode: ValkeyMode;
  /** @default DATA_DIR */
  dataDir?: string;
  /**
   * Cluster mode: the new cluster's slot ranges per shard, in shard order (e.g. [["0-5460"], ...],
   * as splitSlots plans them). The backup must have as many shards, each with the same ranges.
   */
  plannedSlots?: readonly (readonly string[])[];
}

/** The AOF names Valkey uses by default (appenddirname, appendfilename); valkey.conf keeps them. */
export const AOF_DIR = "appendonlydir";
export const AOF_BASE = "appendonly.aof.1.base.rdb";
export const AOF_MANIFEST = "appendonly.aof.manifest";
/** The file a restore leaves in the data dir, naming what it restored. */
export const RESTORED_MARKER = "restored-from";
/** Replication mode: placed data the start decision may make the FIRST primary with (it removes the file). */
export const RESTORE_PENDING_MARKER = "restore-pending";

/**
 * sh lines: a peer's answer holding `field` goes on to the check; one refusing the password stops
 * the restore (return 2: the peers' state is unknown); anything else (not started, unreachable,
 * still loading) is skipped.
 */
function answered(field: string): string[] {
  return [
    `    case "$info" in`,
    `      *${field}*) ;;`,
    `      *NOAUTH*|*WRONGPASS*|*"invalid password"*|*"Authentication required"*) echo "$p answered: $(printf '%s' "$info" | head -n 1)"; return 2 ;;`,
    `      *) continue ;;`,
    `    esac`,
  ];
}

/** sh lines: `formed_peer` prints the first peer already in a formed topology (and why) and returns 0; 1: none; 2: a peer refused the password. */
function formedPeerLines(mode: ValkeyMode): string[] {
  const probe =
    mode === "cluster"
      ? [
          `    info=$(cli -h "\${p%:*}" -p "\${p##*:}" cluster info 2>&1) || true`,
          ...answered("cluster_known_nodes:"),
          `    n=$(printf '%s\\n' "$info" | sed -n 's/^cluster_known_nodes:\\([0-9]*\\).*/\\1/p')`,
          `    [ "\${n:-1}" -gt 1 ] && { echo "$p knows $n cluster nodes"; return 0; }`,
        ]
      : [
          `    info=$(cli -h "\${p%:*}" -p "\${p##*:}" info replication 2>&1) || true`,
          ...answered("role:"),
          // A replica counts only once it was linked (its link up, or down since a time): a new stack's
          // members start as replicas of ordinal 0 as soon as the Sentinels name it (from their first
          // start), so on loaded nodes they can be waiting for it, never linked (master_link_down_since_seconds:-1),
          // before its own restore-place runs; taking them for a formed release placed nothing and the
          // primary started empty (seen on real pods in CI: DBSIZE 0 of 3000).
          `    case "$info" in *role:slave*)`,
          `      case "$info" in *master_link_status:up*) echo "$p is a replica linked to its primary"; return 0 ;; esac`,
          `      since=$(printf '%s\\n' "$info" | sed -n 's/^master_link_down_since_seconds:\\(-\\{0,1\\}[0-9]*\\).*/\\1/p')`,
          `      [ "\${since:--1}" -ge 0 ] && { echo "$p is a replica whose link to its primary is down for \${since}s"; return 0 ;}`,
          `      ;;`,
          `    esac`,
          `    n=$(printf '%s\\n' "$info" | sed -n 's/^connected_slaves:\\([0-9]*\\).*/\\1/p')`,
          `    [ "\${n:-0}" -gt 0 ] && { echo "$p is a primary with $n replica(s)"; return 0; }`,
        ];
  return [
    ...boundedCliLines(2),
    `peers() {`,
    `  if [ -n "\${RESTORE_PEERS:-}" ]; then printf '%s\\n' $RESTORE_PEERS; return; fi`,
    `  [ -n "\${RESTORE_PEERS_DNS:-}" ] || return 0`,
    `  getent ahosts "$RESTORE_PEERS_DNS" 2>/dev/null | awk -v p="\${RESTORE_PEERS_PORT:-6379}" '!seen[$1]++ { print $1 ":" p }'`,
    `}`,
    `formed_peer() {`,
    `  for p in $(peers); do`,
    ...probe,
    `  done`,
    `  return 1`,
    `}`,
  ];
}

/**
 * sh lines: `skip <reason>` (fetch: nothing to fetch, and why, for place to report), `json_str`
 * (the inside of a JSON string: control characters dropped, backslash and quote escaped),
 * `message <json>` (place: its one-line report, pod/restore-message.ts, to $RESTORE_MESSAGE_FILE,
 * else the kubelet's termination log; a file that cannot be written is logged, not fatal: the
 * RestoreCheck then names the member that reported nothing), `earlier` (what an earlier restore
 * left in the data dir, for the reason).
 */
function messageLines(): string[] {
  return [
    `msg_file="\${${RESTORE_MESSAGE_ENV}:-${TERMINATION_LOG}}"`,
    `json_str() { printf '%s' "$1" | tr -d '[:cntrl:]' | sed 's/\\\\/\\\\\\\\/g; s/"/\\\\"/g'; }`,
    `message() { { printf '%s\\n' "$1" > "$msg_file"; } 2>/dev/null || log "cannot write the termination message to $msg_file"; }`,
    `skip() { log "$1"; printf '%s\\n' "$1" > "$stage/skipped"; exit 0; }`,
    `earlier() { [ ! -e "$data/${RESTORED_MARKER}" ] || printf ' (it holds %s)' "$(head -n 1 "$data/${RESTORED_MARKER}" | cut -d' ' -f1)"; }`,
  ];
}

function plannedBlock(o: RestoreScriptOptions): string[] {
  if (o.mode === "replication") return [`planned_shards=1`, `planned_slots() { printf ''; }`];
  const planned = o.plannedSlots ?? [];
  if (planned.length === 0)
    throw new Error("restore script: cluster mode needs plannedSlots (the new cluster's ranges per shard)");
  for (const ranges of planned) {
    if (ranges.length === 0 || ranges.some((r) => !/^\d{1,5}(-\d{1,5})?$/.test(r))) {
      throw new Error(
        `restore script: plannedSlots entries must be slot ranges like 0-5460, got ${JSON.stringify(ranges)}`,
      );
    }
  }
  return [
    `planned_shards=${planned.length}`,
    `planned_slots() {`,
    `  case "$1" in`,
    ...planned.map((ranges, i) => `    ${i}) printf '%s' ${shQuote(ranges.join(","))} ;;`),
    `    *) printf '' ;;`,
    `  esac`,
    `}`,
  ];
}

function shardChoice(mode: ValkeyMode): string[] {
  const fromOrdinal =
    mode === "replication"
      ? [`  shard=0`]
      : [`  if [ "$ordinal" -lt "$planned_shards" ]; then shard=$ordinal; else shard=none; fi`];
  return [
    `shard="\${RESTORE_SHARD:-}"`,
    `if [ -z "$shard" ]; then`,
    `  ordinal="\${POD_NAME##*-}"`,
    `  case "$ordinal" in ''|*[!0-9]*) fail "set RESTORE_SHARD, or POD_NAME ending in an ordinal (got '\${POD_NAME:-}')" ;; esac`,
    ...fromOrdinal,
    `fi`,
    `[ "$shard" != none ] || skip "this member starts empty: it joins as a replica and full-syncs from its shard's restored primary"`,
    `case "$shard" in ''|*[!0-9]*) fail "RESTORE_SHARD must be a shard number or none, got '$shard'" ;; esac`,
  ];
}

export function renderRestoreScript(o: RestoreScriptOptions): string {
  const dataDir = o.dataDir ?? DATA_DIR;
  const lines = [
    `#!/bin/sh`,
    `# Valkey restore (${o.mode} mode), rendered by valkey-on-eks (pod/restore-script.ts). Runs before valkey-server.`,
    `set -eu`,
    ...s3CliLines("restore.sh"),
    `check_bin="\${VALKEY_CHECK_RDB:-valkey-check-rdb}"`,
    `data=${shQuote(dataDir)}`,
    `mode=${o.mode}`,
    ...plannedBlock(o),
    ...formedPeerLines(o.mode),
    ...messageLines(),
    `fetch_step() {`,
    `  from="\${RESTORE_FROM:-}"`,
    `  from="\${from%/}"`,
    `  stage="$data/.restore"`,
    `  rm -rf "$stage"`,
    `  mkdir -p "$stage"`,
    `  json_str "$from" > "$stage/from"`,
    `  [ -n "$from" ] || skip "RESTORE_FROM is not set: nothing to restore"`,
    `  case "$from" in s3://?*) ;; *) fail "RESTORE_FROM must be s3://bucket/prefix/<backup id>, got '$from'" ;; esac`,
    ...shardChoice(o.mode),
    `  for f in dump.rdb ${AOF_DIR} nodes.conf; do`,
    `    if [ -e "$data/$f" ]; then skip "$data/$f exists (a restart, or not a new volume): not restoring$(earlier)"; fi`,
    `  done`,
    `  out=$(aws_cli s3 cp --only-show-errors "$from/${MANIFEST_OBJECT}" "$stage/${MANIFEST_OBJECT}" 2>&1) ||`,
    `    fail "cannot fetch the backup manifest $from/${MANIFEST_OBJECT} (no such backup, an incomplete one, or no access): $out"`,
    `  m="$stage/${MANIFEST_OBJECT}"`,
    `  grep -q '^{"format":"${BACKUP_FORMAT}",' "$m" || fail "$from/${MANIFEST_OBJECT} is not a ${BACKUP_FORMAT} manifest"`,
    `  grep -q "\\"mode\\":\\"$mode\\"" "$m" || fail "$from is a backup of another mode; this member is in $mode mode"`,
    `  shards=$(grep -c '^{"shard":' "$m" || true)`,
    `  [ "$shards" -eq "$planned_shards" ] || fail "the backup has $shards shard(s), the new $mode topology plans $planned_shards: restore into the same shape"`,
    `  line=$(grep "^{\\"shard\\":$shard," "$m" || true)`,
    `  [ -n "$line" ] && [ "$(printf '%s\\n' "$line" | wc -l)" -eq 1 ] || fail "the manifest has no single entry for shard $shard"`,
    `  line="\${line%,}"`,
    `  id=$(sed -n 's/^{"format":"[^"]*","id":"\\([0-9A-Za-z._-]*\\)".*/\\1/p' "$m" | head -n 1)`,
    `  [ -n "$id" ] || fail "$from/${MANIFEST_OBJECT} names no backup id"`,
    `  field() { printf '%s' "$line" | sed -n "s/.*\\"$1\\":\\"\\{0,1\\}\\([^\\",]*\\)\\"\\{0,1\\}[,}].*/\\1/p"; }`,
    `  sum=$(field sha256)`,
    `  keys=$(field keys)`,
    `  case "$sum" in *[!0-9a-f]*|'') fail "shard $shard: the manifest's sha256 is malformed" ;; esac`,
    `  case "$keys" in *[!0-9]*|'') fail "shard $shard: the manifest's key count is malformed" ;; esac`,
    `  have=$(printf '%s' "$line" | sed -n 's/.*"slots":\\[\\([^]]*\\)\\].*/\\1/p' | tr -d '"')`,
    `  want=$(planned_slots "$shard")`,
    `  [ "$have" = "$want" ] || fail "shard $shard: the snapshot holds slots '$have', the new topology plans '$want' for it: refusing (restore into a cluster of the snapshot's shape)"`,
    `  obj="$from/shard-$shard.rdb"`,
    `  out=$(aws_cli s3 cp --only-show-errors "$obj" "$stage/dump.rdb" 2>&1) || fail "shard $shard: cannot fetch $obj (missing object?): $out"`,
    `  printf '%s %s %s %s\\n' "$shard" "$sum" "$keys" "$obj" > "$stage/entry"`,
    `  printf '%s\\n' "$id" > "$stage/backup"`,
    `  printf '%s\\n' "$line" > "$stage/entry.json"`,
    `  touch "$stage/fetched"`,
    `  log "shard $shard: fetched $obj"`,
    `}`,
    `place_step() {`,
    `  stage="$data/.restore"`,
    `  from_json=$(cat "$stage/from" 2>/dev/null || true)`,
    `  none() {`,
    `    log "$1"`,
    `    message "{\\"restore\\":\\"none\\",\\"from\\":\\"$from_json\\",\\"reason\\":\\"$(json_str "$1")\\"}"`,
    `    rm -rf "$stage"; exit 0`,
    `  }`,
    `  [ ! -e "$stage/skipped" ] || none "$(cat "$stage/skipped")"`,
    `  [ -e "$stage/fetched" ] || none "nothing fetched: nothing to place"`,
    `  if [ -e "$data/${AOF_DIR}" ] || [ -e "$data/dump.rdb" ]; then none "already placed (an interrupted earlier run)"; fi`,
    `  set +e; why=$(formed_peer); formed=$?; set -e`,
    `  [ "$formed" -ne 0 ] || none "not restoring: the release is already formed ($why): this is a lost volume, not a new stack; starting empty, to rejoin as a replica"`,
    `  [ "$formed" -eq 1 ] || fail "cannot tell whether the release is already formed ($why): not restoring"`,
    `  read -r shard sum keys obj < "$stage/entry"`,
    `  got=$(sha256sum "$stage/dump.rdb" | cut -d' ' -f1)`,
    `  [ "$got" = "$sum" ] || fail "shard $shard: checksum mismatch: $obj has sha256 $got, the manifest says $sum (corrupted or replaced): not restoring"`,
    `  if command -v "$check_bin" >/dev/null 2>&1; then`,
    `    check=$("$check_bin" "$stage/dump.rdb" 2>&1) || fail "shard $shard: valkey-check-rdb rejects $obj"`,
    `    read_keys=$(printf '%s\\n' "$check" | sed -n 's/^\\[info\\] \\([0-9]*\\) keys read$/\\1/p')`,
    `    [ "$read_keys" = "$keys" ] || fail "shard $shard: $obj holds $read_keys keys, the manifest says $keys"`,
    `  else`,
    `    log "no valkey-check-rdb here: the sha256 check stands for the RDB check"`,
    `  fi`,
    `  rm -rf "$stage/${AOF_DIR}"`,
    `  mkdir "$stage/${AOF_DIR}"`,
    `  ln "$stage/dump.rdb" "$stage/${AOF_DIR}/${AOF_BASE}" 2>/dev/null || cp "$stage/dump.rdb" "$stage/${AOF_DIR}/${AOF_BASE}"`,
    `  printf 'file ${AOF_BASE} seq 1 type b\\n' > "$stage/${AOF_DIR}/${AOF_MANIFEST}"`,
    `  mv "$stage/${AOF_DIR}" "$data/${AOF_DIR}"`,
    `  mv "$stage/dump.rdb" "$data/dump.rdb"`,
    `  printf '%s shard %s sha256 %s keys %s\\n' "$obj" "$shard" "$sum" "$keys" > "$data/${RESTORED_MARKER}"`,
    ...(o.mode === "replication" ? [`  : > "$data/${RESTORE_PENDING_MARKER}"`] : []),
    `  message "{\\"restore\\":\\"placed\\",\\"from\\":\\"$from_json\\",\\"backup\\":\\"$(cat "$stage/backup")\\",\\"entry\\":$(cat "$stage/entry.json")}"`,
    `  rm -rf "$stage"`,
    `  log "shard $shard: restored $keys keys from $obj (sha256 ok)"`,
    `}`,
    `case "\${1:-all}" in`,
    `  fetch) fetch_step ;;`,
    `  place) place_step ;;`,
    // fetch in a subshell: its early \`exit 0\` (nothing to fetch) must still let place report why.
    `  all) (fetch_step); place_step ;;`,
    `  *) fail "usage: restore.sh [fetch|place|all]" ;;`,
    `esac`,
  ];
  return lines.join("\n") + "\n";
}
