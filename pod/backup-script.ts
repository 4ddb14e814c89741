/**
 * backup.sh: takes one consistent snapshot per shard and uploads it with its manifest
 * (pod/backup-manifest.ts) to S3. Two steps, so each can run in the image that has its tools (the
 * CronJob runs `snapshot` in the Valkey image, which has valkey-cli and valkey-check-rdb, and
 * `upload` in an AWS CLI image, over a shared emptyDir); a local run does both (`all`).
 *
 *   backup.sh snapshot TARGET...   TARGET = <shard>/<host>/<port>/<slot ranges, comma-separated>
 *   backup.sh upload MODE          MODE = cluster | replication
 *   backup.sh all MODE TARGET...
 *   backup.sh plan MODE HOST PORT            the targets, chosen live from a seed (backup-plan-sh.ts)
 *   backup.sh snapshot-from MODE HOST PORT   plan, then snapshot (the CronJob's first step)
 *   backup.sh all-from MODE HOST PORT        plan, snapshot, upload
 *
 * snapshot, per target (which member: benchmarks/backup/backup-plan.ts, a linked replica with the
 * least lag): `valkey-cli --rdb` (the replication stream's RDB: the member forks once, as for a
 * replica's full sync; nothing is written on its disk), then valkey-check-rdb on the file (it must
 * say "RDB looks OK"; its key count, expiry count, the producing version and the replication offset
 * at fork time go into the manifest line), then sha256. upload: each shard-<n>.rdb with `aws s3 cp`,
 * then manifest.json LAST: a backup without a manifest is incomplete and restore refuses it.
 *
 * Environment: BACKUP_WORK_DIR (the files), BACKUP_URI (s3://bucket/prefix), BACKUP_ID (default:
 * the UTC time, e.g. 20261125T061200Z), AWS_ENDPOINT_URL (an S3-compatible server; passed as
 * --endpoint-url, which older CLIs need), VALKEY_CLI, VALKEY_CHECK_RDB, AWS_CLI (the binaries);
 * the password in VALKEYCLI_AUTH / REDISCLI_AUTH, never argv. AWS credentials come from the CLI's
 * own chain: EKS Pod Identity's container credentials endpoint in a pod, no static keys.
 */
import { BACKUP_FORMAT, MANIFEST_OBJECT } from "./backup-manifest.js";
import { backupPlanLines } from "./backup-plan-sh.js";
import { boundedCliLines } from "./sh-cli.js";

export interface BackupScriptOptions {
  /** Upper bound of one shard's RDB transfer, in seconds. @default 3600 */
  transferTimeoutSeconds?: number;
}

function wholeSeconds(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1) throw new Error(`backup script: ${name} must be a whole number >= 1, got ${v}`);
  return v;
}

/** sh lines shared by backup.sh and restore.sh: `fail`, `log`, `aws_cli` (with the endpoint). */
export function s3CliLines(script: string): string[] {
  return [
    `fail() { echo "${script}: error: $*" >&2; exit 1; }`,
    `log() { echo "${script}: $*" >&2; }`,
    `aws_bin="\${AWS_CLI:-aws}"`,
    `aws_cli() {`,
    `  if [ -n "\${AWS_ENDPOINT_URL:-}" ]; then "$aws_bin" --endpoint-url "$AWS_ENDPOINT_URL" "$@" </dev/null`,
    `  else "$aws_bin" "$@" </dev/null; fi`,
    `}`,
    `need_uri() {`,
    `  case "\${BACKUP_URI:-}" in s3://?*) ;; *) fail "BACKUP_URI must be s3://bucket[/prefix], got '\${BACKUP_URI:-}'" ;; esac`,
    `}`,
  ];
}

export function renderBackupScript(o: BackupScriptOptions = {}): string {
  const transfer = wholeSeconds("transferTimeoutSeconds", o.transferTimeoutSeconds ?? 3600);
  const lines = [
    `#!/bin/sh`,
    `# Valkey backup, rendered by valkey-on-eks (pod/backup-script.ts). Usage: backup.sh snapshot|upload|all ...`,
    `set -eu`,
    ...s3CliLines("backup.sh"),
    ...boundedCliLines(),
    ...backupPlanLines(),
    `check_bin="\${VALKEY_CHECK_RDB:-valkey-check-rdb}"`,
    `work="\${BACKUP_WORK_DIR:?BACKUP_WORK_DIR (where the RDB files are kept) is not set}"`,
    `transfer_timeout=${transfer}`,
    `digits() { case "$2" in ''|*[!0-9]*) fail "$1 is not a whole number: '$2'" ;; esac; }`,
    ``,
    `snapshot_one() {`,
    `  IFS=/ read -r shard host port ranges <<EOF`,
    `$1`,
    `EOF`,
    `  digits "target $1: shard" "$shard"`,
    `  digits "target $1: port" "$port"`,
    `  case "$host" in ''|*[!A-Za-z0-9.:-]*) fail "target $1: bad host '$host'" ;; esac`,
    `  case "$ranges" in *[!0-9,-]*) fail "target $1: slot ranges must look like 0-5460,6000, got '$ranges'" ;; esac`,
    `  rdb="$work/shard-$shard.rdb"`,
    `  rm -f "$rdb.part" "$rdb" "$work/shard-$shard.json"`,
    `  started=$(date +%s)`,
    `  out=$(timeout "$transfer_timeout" "$cli_bin" -h "$host" -p "$port" --rdb "$rdb.part" </dev/null 2>&1) ||`,
    `    fail "shard $shard: the RDB transfer from $host:$port failed: $(printf '%s' "$out" | tail -n 2 | tr '\\n' ' ')"`,
    `  [ -s "$rdb.part" ] || fail "shard $shard: the RDB from $host:$port is empty"`,
    `  check=$("$check_bin" "$rdb.part" 2>&1) || fail "shard $shard: valkey-check-rdb rejects the RDB from $host:$port: $(printf '%s' "$check" | grep -v '^\\[offset [0-9]*\\] AUX' | tail -n 4 | tr '\\n' ' ')"`,
    `  printf '%s\\n' "$check" | grep -q 'RDB looks OK' || fail "shard $shard: valkey-check-rdb did not say the RDB looks OK"`,
    `  keys=$(printf '%s\\n' "$check" | sed -n 's/^\\[info\\] \\([0-9]*\\) keys read$/\\1/p')`,
    `  expires=$(printf '%s\\n' "$check" | sed -n 's/^\\[info\\] \\([0-9]*\\) expires$/\\1/p')`,
    `  version=$(printf '%s\\n' "$check" | sed -n "s/.*AUX FIELD [a-z]*-ver = '\\([0-9][0-9.]*\\)'.*/\\1/p" | head -n 1)`,
    `  offset=$(printf '%s\\n' "$check" | sed -n "s/.*AUX FIELD repl-offset = '\\([0-9]*\\)'.*/\\1/p" | head -n 1)`,
    `  digits "shard $shard: key count" "$keys"`,
    `  digits "shard $shard: expires" "$expires"`,
    `  digits "shard $shard: repl-offset" "\${offset:-0}"`,
    `  case "$version" in [0-9]*.[0-9]*.[0-9]*) ;; *) fail "shard $shard: no server version in the RDB" ;; esac`,
    `  bytes=$(wc -c < "$rdb.part" | tr -d ' ')`,
    `  sum=$(sha256sum "$rdb.part" | cut -d' ' -f1)`,
    `  mv -f "$rdb.part" "$rdb"`,
    `  slots=""`,
    `  if [ -n "$ranges" ]; then slots="\\"$(printf '%s' "$ranges" | sed 's/,/","/g')\\""; fi`,
    `  printf '{"shard":%s,"member":"%s:%s","slots":[%s],"object":"shard-%s.rdb","bytes":%s,"sha256":"%s","keys":%s,"expires":%s,"offset":%s,"version":"%s"}\\n' \\`,
    `    "$shard" "$host" "$port" "$slots" "$shard" "$bytes" "$sum" "$keys" "$expires" "\${offset:-0}" "$version" > "$work/shard-$shard.json"`,
    `  log "shard $shard: $keys keys, $bytes bytes from $host:$port in $(( $(date +%s) - started ))s, sha256 $sum"`,
    `}`,
    ``,
    `snapshot() {`,
    `  [ $# -ge 1 ] || fail "snapshot: no targets (<shard>/<host>/<port>/<slot ranges>)"`,
    `  mkdir -p "$work"`,
    `  rm -f "$work"/shard-*.json "$work"/shard-*.rdb`,
    `  for t in "$@"; do snapshot_one "$t"; done`,
    `}`,
    ``,
    `upload() {`,
    `  mode="$1"`,
    `  case "$mode" in cluster|replication) ;; *) fail "upload: MODE must be cluster or replication, got '$mode'" ;; esac`,
    `  need_uri`,
    `  id="\${BACKUP_ID:-$(date -u +%Y%m%dT%H%M%SZ)}"`,
    `  case "$id" in ''|*[!0-9A-Za-z._-]*) fail "BACKUP_ID may hold letters, digits, . _ - only, got '$id'" ;; esac`,
    `  dest="\${BACKUP_URI%/}/$id"`,
    `  n=0`,
    `  while [ -e "$work/shard-$n.json" ]; do n=$((n + 1)); done`,
    `  [ "$n" -ge 1 ] || fail "upload: no shard-0.json in $work (run snapshot first)"`,
    `  total=$(ls "$work" | grep -c '^shard-[0-9]*\\.json$' || true)`,
    `  [ "$total" -eq "$n" ] || fail "upload: the shard files in $work are not numbered 0..$((n - 1)) ($total found)"`,
    `  i=0`,
    `  while [ "$i" -lt "$n" ]; do`,
    `    out=$(aws_cli s3 cp --only-show-errors "$work/shard-$i.rdb" "$dest/shard-$i.rdb" 2>&1) || fail "uploading shard $i to $dest/shard-$i.rdb: $out"`,
    `    i=$((i + 1))`,
    `  done`,
    `  manifest="$work/${MANIFEST_OBJECT}"`,
    `  {`,
    `    printf '{"format":"${BACKUP_FORMAT}","id":"%s","createdAt":"%s","mode":"%s","shards":[\\n' "$id" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$mode"`,
    `    i=0`,
    `    while [ "$i" -lt "$n" ]; do`,
    `      [ "$i" -eq $((n - 1)) ] && sep="" || sep=","`,
    `      printf '%s%s\\n' "$(cat "$work/shard-$i.json")" "$sep"`,
    `      i=$((i + 1))`,
    `    done`,
    `    printf ']}\\n'`,
    `  } > "$manifest"`,
    `  out=$(aws_cli s3 cp --only-show-errors --content-type application/json "$manifest" "$dest/${MANIFEST_OBJECT}" 2>&1) || fail "uploading the manifest to $dest/${MANIFEST_OBJECT}: $out"`,
    `  log "backup $id: $n shard(s) uploaded to $dest/"`,
    `  printf '%s/\\n' "$dest"`,
    `}`,
    ``,
    `plan() {`,
    `  [ $# -eq 3 ] || fail "usage: backup.sh plan MODE HOST PORT"`,
    `  case "$1" in cluster) plan_cluster "$2" "$3" ;; replication) plan_replication "$2" "$3" ;; *) fail "MODE must be cluster or replication, got '$1'" ;; esac`,
    `}`,
    `snapshot_from() {`,
    `  targets=$(plan "$@")`,
    `  [ -n "$targets" ] || fail "the plan found no shard to snapshot"`,
    `  log "plan: $(printf '%s' "$targets" | tr '\\n' ' ')"`,
    `  # shellcheck disable=SC2086 # one word per target`,
    `  snapshot $targets`,
    `}`,
    ``,
    `[ $# -ge 1 ] || fail "usage: backup.sh snapshot TARGET... | upload MODE | all MODE TARGET... | plan|snapshot-from|all-from MODE HOST PORT"`,
    `step="$1"`,
    `shift`,
    `case "$step" in`,
    `  snapshot) snapshot "$@" ;;`,
    `  upload) [ $# -eq 1 ] || fail "usage: backup.sh upload MODE"; upload "$1" ;;`,
    `  all) [ $# -ge 2 ] || fail "usage: backup.sh all MODE TARGET..."; mode="$1"; shift; snapshot "$@"; upload "$mode" ;;`,
    `  plan) plan "$@" ;;`,
    `  snapshot-from) snapshot_from "$@" ;;`,
    `  all-from) [ $# -eq 3 ] || fail "usage: backup.sh all-from MODE HOST PORT"; snapshot_from "$@"; upload "$1" ;;`,
    `  *) fail "unknown step '$step' (snapshot, upload, all, plan, snapshot-from, all-from)" ;;`,
    `esac`,
  ];
  return lines.join("\n") + "\n";
}
