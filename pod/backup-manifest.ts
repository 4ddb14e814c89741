/**
 * The backup manifest: what one backup holds, written last by the backup script (pod/backup-script.ts)
 * beside the shards' RDB files, so a backup without a manifest is an incomplete one. Declared once
 * here (types + the validating parser); the script writes it with printf, which is safe because every
 * value it prints is checked by the script to be digits, hex, a slot range or an address token.
 *
 * Layout, one shard per line (the restore script reads its shard's line with grep and sed; there is
 * no jq in the Valkey image):
 *
 *   {"format":"valkey-on-eks/backup/v1","id":"20261125T061200Z","createdAt":"2026-11-25T06:12:00Z",
 *    "mode":"cluster","shards":[
 *   {"shard":0,"member":"10.0.1.5:6379","slots":["0-5460"],"object":"shard-0.rdb","bytes":1234,"sha256":"…",
 *    "keys":42,"expires":0,"offset":99,"version":"9.1.2"},
 *   …
 *   ]}
 */
import { z } from "zod";

export const BACKUP_FORMAT = "valkey-on-eks/backup/v1";
/** The manifest's object name under the backup's prefix. */
export const MANIFEST_OBJECT = "manifest.json";

/** One shard's RDB object name under the backup's prefix. */
export function shardObject(shard: number): string {
  return `shard-${shard}.rdb`;
}

const slotRange = z.string().regex(/^\d{1,5}(-\d{1,5})?$/, "a slot or slot range like 0-5460");

/** One shard's manifest line (also what restore-place reports of the shard it placed: pod/restore-message.ts). */
export const shardSchema = z.strictObject({
  /** 0-based shard index, in slot order. */
  shard: z.number().int().min(0),
  /** `host:port` of the member the RDB came from (a replica when one was linked). */
  member: z.string().regex(/^[A-Za-z0-9.:-]+:\d+$/, "host:port"),
  /** The shard's slot ranges at snapshot time; empty in replication mode. */
  slots: z.array(slotRange),
  object: z.string().regex(/^shard-\d+\.rdb$/, "shard-<n>.rdb"),
  bytes: z.number().int().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "64 lowercase hex digits"),
  /** Keys in the RDB as valkey-check-rdb counted them. */
  keys: z.number().int().min(0),
  expires: z.number().int().min(0),
  /** The member's master_repl_offset read just before the transfer. */
  offset: z.number().int().min(0),
  /** valkey-server version of the member. */
  version: z.string().regex(/^\d+\.\d+\.\d+/, "a version like 9.1.2"),
});

export const manifestSchema = z
  .strictObject({
    format: z.literal(BACKUP_FORMAT),
    id: z.string().regex(/^[0-9A-Za-z._-]+$/, "letters, digits, . _ -"),
    createdAt: z.string().regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, "UTC time like 2026-11-25T06:12:00Z"),
    mode: z.enum(["cluster", "replication"]),
    shards: z.array(shardSchema).min(1),
  })
  .superRefine((m, ctx) => {
    m.shards.forEach((s, i) => {
      if (s.shard !== i)
        ctx.addIssue({
          code: "custom",
          path: ["shards", i, "shard"],
          message: `shards must be listed in order 0..n-1: found ${s.shard} at position ${i}`,
        });
      if (s.object !== shardObject(s.shard))
        ctx.addIssue({
          code: "custom",
          path: ["shards", i, "object"],
          message: `shard ${s.shard}'s object must be ${shardObject(s.shard)}`,
        });
      if (m.mode === "cluster" && s.slots.length === 0)
        ctx.addIssue({ code: "custom", path: ["shards", i, "slots"], message: "a cluster shard has slot ranges" });
      if (m.mode === "replication" && s.slots.length > 0)
        ctx.addIssue({ code: "custom", path: ["shards", i, "slots"], message: "replication mode has no slots" });
    });
    if (m.mode === "replication" && m.shards.length !== 1)
      ctx.addIssue({
        code: "custom",
        path: ["shards"],
        message: `replication mode has one shard, found ${m.shards.length}`,
      });
  });

export type BackupManifest = z.infer<typeof manifestSchema>;
export type ShardEntry = BackupManifest["shards"][number];

export class ManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ManifestError";
  }
}

/** Parses and validates manifest text; the error names the source and each bad field's path. */
export function parseManifest(text: string, source = MANIFEST_OBJECT): BackupManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ManifestError(`${source}: not JSON (${(err as Error).message})`);
  }
  const r = manifestSchema.safeParse(raw);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "(root)"}: ${i.message}`);
    throw new ManifestError(`${source}: invalid backup manifest: ${issues.join("; ")}`);
  }
  return r.data;
}
