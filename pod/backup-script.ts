/**
 * backup.sh: takes one consistent snapshot per shard and uploads it with its manifest
 * (pod/backup-manifest.ts) to S3. Two steps, so each can run in the image that has its tools (the
 * CronJob runs `snapshot` in the Valkey image, which has valkey-cli and valkey-check-rdb, and
 * `upload` in an AWS CLI image, over a shared emptyDir); a local run does both (`all`).
 *
 *   backup.sh snapshot TARGET...   TARGET = <shard>/<host>/<port>/<slot ranges, comma-separated>
 *   backup.sh upload MODE          MODE = cluster | replication
 *   backup.sh all MODE TARGET...
 *   backup.sh plan MODE HOST PORT            the targets, chosen live from a seed (pod/scripts/lib-backup-plan.sh)
 *   backup.sh snapshot-from MODE HOST PORT   plan, then snapshot (the CronJob's first step)
 *   backup.sh all-from MODE HOST PORT        plan, snapshot, upload
 *
 * snapshot, per target (which member: core/backup/backup-plan.ts, a linked replica with the
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
import { renderShellFile } from "./shell-file.js";

export interface BackupScriptOptions {
  /** Upper bound of one shard's RDB transfer, in seconds. @default 3600 */
  transferTimeoutSeconds?: number;
}

function wholeSeconds(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1) throw new Error(`backup script: ${name} must be a whole number >= 1, got ${v}`);
  return v;
}

export function renderBackupScript(o: BackupScriptOptions = {}): string {
  return renderShellFile("backup.sh", {
    transfer_timeout: wholeSeconds("transferTimeoutSeconds", o.transferTimeoutSeconds ?? 3600),
    manifest_object: MANIFEST_OBJECT,
    backup_format: BACKUP_FORMAT,
  });
}
