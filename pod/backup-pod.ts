/**
 * The backup pod, defined once: backup.sh (pod/backup-script.ts) and the steps a run executes.
 * The CronJob's pod runs `snapshot` (the Valkey image: valkey-cli, valkey-check-rdb) then `upload`
 * (an AWS CLI image) over a shared work dir (components/valkey/backup-cronjob.ts); a local run
 * executes `all`, both in one process (harness/backup/local-backup.ts). Both take the commands
 * and the environment names from here.
 */
import { renderBackupScript, type BackupScriptOptions } from "./backup-script.js";
import type { ScriptStep } from "./script-step.js";

/** The script's file name (the ConfigMap key, the local file). */
export const BACKUP_SCRIPT = "backup.sh";

/** The environment backup.sh reads (pod/backup-script.ts says what each holds). */
export const BACKUP_ENV = {
  workDir: "BACKUP_WORK_DIR",
  uri: "BACKUP_URI",
  id: "BACKUP_ID",
  allowPrimary: "BACKUP_ALLOW_PRIMARY",
  endpoint: "AWS_ENDPOINT_URL",
  awsCli: "AWS_CLI",
  cli: "VALKEY_CLI",
  checkRdb: "VALKEY_CHECK_RDB",
} as const;

/**
 * Where a run takes its shards from: a seed it plans from live, or targets planned beforehand (`backup.sh snapshot`'s
 * TARGETs).
 */
export type BackupTargets = { seed: { host: string; port: number } } | { targets: readonly string[] };

export interface BackupPodOptions {
  mode: "cluster" | "replication";
  from: BackupTargets;
  /** The directory holding backup.sh (the ConfigMap mount, or a local dir). */
  configDir: string;
  /** @default the script's defaults */
  script?: BackupScriptOptions;
}

export interface BackupPodDefinition {
  files: Record<string, string>;
  /** The snapshots into the work dir (the CronJob's init container). */
  snapshot: ScriptStep;
  /** The upload, manifest last (the CronJob's container). */
  upload: ScriptStep;
  /** Both in one process (a local run); prints the backup's URI. */
  all: ScriptStep;
}

export function backupPod(o: BackupPodOptions): BackupPodDefinition {
  const sh = (...args: string[]) => ["sh", `${o.configDir}/${BACKUP_SCRIPT}`, ...args];
  const seed = "seed" in o.from ? [o.from.seed.host, String(o.from.seed.port)] : undefined;
  const targets = "targets" in o.from ? [...o.from.targets] : [];
  if (seed === undefined && targets.length === 0) throw new Error("backup pod: no targets to snapshot");
  return {
    files: { [BACKUP_SCRIPT]: renderBackupScript(o.script) },
    // `snapshot TARGET...` takes no mode; `snapshot-from MODE HOST PORT` does.
    snapshot: {
      command: seed ? sh("snapshot-from", o.mode, ...seed) : sh("snapshot", ...targets),
      env: [BACKUP_ENV.workDir],
    },
    upload: { command: sh("upload", o.mode), env: [BACKUP_ENV.workDir, BACKUP_ENV.uri] },
    all: {
      command: seed ? sh("all-from", o.mode, ...seed) : sh("all", o.mode, ...targets),
      env: [BACKUP_ENV.workDir, BACKUP_ENV.uri],
    },
  };
}
