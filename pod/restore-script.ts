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
 * primary since it started, or a primary with replicas), the snapshot would be older than what the release serves, so
 * nothing is placed: the
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
import { TERMINATION_LOG } from "./restore-message.js";
import { DATA_DIR } from "./paths.js";
import { renderShellFile } from "./shell-file.js";

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

/** The new topology's slot ranges as restore.sh reads them: one word per shard, ranges comma-joined. */
function plannedSlotsValue(o: RestoreScriptOptions): { shards: number; slots: string } {
  if (o.mode === "replication") return { shards: 1, slots: "" };
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
  return { shards: planned.length, slots: planned.map((ranges) => ranges.join(",")).join(" ") };
}

export function renderRestoreScript(o: RestoreScriptOptions): string {
  const planned = plannedSlotsValue(o);
  return renderShellFile("restore.sh", {
    mode: o.mode,
    data: o.dataDir ?? DATA_DIR,
    planned_shards: planned.shards,
    planned_slots: planned.slots,
    aof_dir: AOF_DIR,
    aof_base: AOF_BASE,
    aof_manifest: AOF_MANIFEST,
    restored_marker: RESTORED_MARKER,
    pending_marker: RESTORE_PENDING_MARKER,
    manifest_object: MANIFEST_OBJECT,
    backup_format: BACKUP_FORMAT,
    msg_file_default: TERMINATION_LOG,
  });
}
