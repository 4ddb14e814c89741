/**
 * The `backup` and `restore` sections of the stack-file schema (sections.ts lists them): scheduled
 * snapshots of every shard to S3 (pod/backup-script.ts) and a new stack started from one
 * (pod/restore-script.ts). Both off by default.
 */
import { z } from "zod";
import { versions } from "../versions.js";
import { count, flag, imageReference, section } from "./fields.js";

/** S3 bucket names (general purpose): 3-63 of a-z 0-9 . -, starting and ending with a letter or digit. */
export const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** A key prefix: path segments of letters, digits and . _ -, no leading or trailing slash. */
export const PREFIX_RE = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
/** A Kubernetes CronJob schedule: five fields of digits, `*`, `/`, `,`, `-` (no @-macros, no names). */
export const CRON_RE = /^[0-9*/,-]+( [0-9*/,-]+){4}$/;
/** `s3://bucket/prefix/<backup id>`: what backup.sh prints when it is done. */
export const RESTORE_URI_RE = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[A-Za-z0-9._-]+)+\/?$/;

export const backupSchema = section(
  {
    enabled: flag(false).describe(
      "Take a snapshot of every shard on `schedule` (a CronJob; on eks it reaches S3 through EKS Pod Identity, no static keys; on byo through `endpoint` and `credentialsSecret`): `valkey-cli --rdb` from a replica whose link is up (the least lagging), checked with valkey-check-rdb, sha256, uploaded per shard with a manifest (time, version, replication offsets, key counts, checksums, slot ranges) written last.",
    ),
    schedule: z
      .string()
      .regex(CRON_RE, { error: "must be a five-field cron schedule such as `17 3 * * *`" })
      .default("17 3 * * *")
      .describe("CronJob schedule (UTC on EKS)."),
    bucket: z
      .string()
      .regex(BUCKET_RE, { error: "must be an S3 bucket name (3-63 of a-z 0-9 . -)" })
      .optional()
      .describe(
        "An existing bucket to write to. Left out, the stack creates one (SSE-S3 encryption, versioning, public access blocked, a lifecycle rule expiring objects under `prefix` after `retentionDays`) and KEEPS it on `pulumi destroy` (retainOnDelete), so the backups outlive the stack they restore into a new one.",
      )
      .meta({ defaultText: "none: the stack creates one" }),
    prefix: z
      .string()
      .regex(PREFIX_RE, { error: "must be key path segments of letters, digits, . _ - (no leading or trailing /)" })
      .default("valkey-on-eks")
      .describe("Key prefix; each backup goes under `<prefix>/<UTC time>/`."),
    retentionDays: count(1, 14).describe(
      "Days a backup is kept: the lifecycle rule of the bucket the stack creates (an existing `bucket`'s own rules apply instead). Noncurrent versions expire after the same days.",
    ),
    allowPrimary: flag(false).describe(
      "Snapshot a shard's primary when none of its replicas has its link up (the primary forks once); false fails that backup run instead, naming the shard.",
    ),
    endpoint: z
      .url({
        protocol: /^https?$/,
        error: "must be an http(s) URL of an S3-compatible server, e.g. http://minio.storage:9000",
      })
      .optional()
      .describe(
        "Platform byo: the S3-compatible server the backup writes to and `restore.from` reads from (MinIO, Ceph RGW, ...), given to the AWS CLI as its endpoint. Left out: Amazon S3 itself. Refused on eks (the stack's own bucket, through Pod Identity).",
      )
      .meta({ defaultText: "none: Amazon S3" }),
    credentialsSecret: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, { error: "must be a Kubernetes Secret name" })
      .optional()
      .describe(
        "Platform byo (required there, for the backup and for `restore.from`): the name of a Secret in `valkey.namespace` holding AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for the bucket, which you create and rotate yourself; the stack never sees the keys. A pod that starts before it exists waits, naming it (CreateContainerConfigError): with `restore.from`, create it while the first `up` waits for the members. Refused on eks (Pod Identity: no static keys).",
      )
      .meta({ defaultText: "none" }),
    awsCliImage: imageReference(versions.AWS_CLI_IMAGE).describe(
      "Image of the upload step and of the restore's init container: an AWS CLI >= 2.15.0 (the first that reads EKS Pod Identity credentials), same forms as `valkey.image`.",
    ),
  },
  "Scheduled backups of every shard to S3 (pod/backup-script.ts).",
);

export const restoreSchema = section(
  {
    from: z
      .string()
      .regex(RESTORE_URI_RE, { error: "must be s3://bucket/prefix/<backup id>, as a backup run prints it" })
      .optional()
      .describe(
        "Start a NEW stack from this backup (what a backup run prints: s3://bucket/prefix/<UTC time>). Each member's init containers fetch its shard (eks: through EKS Pod Identity, a role reading only this backup; byo: `backup.endpoint` with the keys of `backup.credentialsSecret`), check it against the manifest (sha256, valkey-check-rdb's key count; the snapshot's mode, shard count and slot ranges must equal the new topology's, else the pod fails naming both) and place it before valkey-server starts; the bootstrap then makes the restored members the primaries (cluster mode), the others full-sync from them. A missing or corrupted object fails that pod's start, so no member starts empty as a primary. A member whose volume already holds data, or whose peers already form the topology (a lost volume later on), does not restore. Once formed, the RestoreCheck step compares each shard's DBSIZE with the manifest's key count (the members report it; the stack reads no S3) and fails `pulumi up` naming any shard off it, or when no member restored (the key set on a stack that was already formed); it runs once per value. Remove the key once the stack is up: that rolls the members once, in the safe order.",
      )
      .meta({ defaultText: "none: start empty" }),
  },
  "Start a new stack from a backup (pod/restore-script.ts).",
);

/** `s3://bucket/prefix/<backup id>` split into the bucket and the key prefix of that one backup (no trailing slash). */
export function parseRestoreUri(uri: string): { bucket: string; key: string } {
  if (!RESTORE_URI_RE.test(uri))
    throw new Error(`restore.from: must be s3://bucket/prefix/<backup id>, got ${JSON.stringify(uri)}`);
  const rest = uri.slice("s3://".length).replace(/\/$/, "");
  const slash = rest.indexOf("/");
  return { bucket: rest.slice(0, slash), key: rest.slice(slash + 1) };
}
