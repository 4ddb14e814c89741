/**
 * What `restore.sh place` (the `restore-place` init container, pod/restore-script.ts) reports when
 * it ends, declared once: one JSON line written to its termination message file
 * ($RESTORE_MESSAGE_FILE, in a pod the kubelet's /dev/termination-log), which the kubelet copies
 * into `status.initContainerStatuses[].state.terminated.message` (and `lastState` after a
 * restart). The RestoreCheck step (components/steps/restore-check/) reads it through the
 * Kubernetes API: the manifest's counts per shard reach the stack without the stack reading S3.
 *
 *   {"restore":"placed","from":"s3://b/p/20261125T061200Z","backup":"20261125T061200Z","entry":{…the shard's manifest
 *   line…}}
 *   {"restore":"none","from":"s3://b/p/20261125T061200Z","reason":"this member starts empty: …"}
 *
 * Size: the kubelet keeps at most 4096 bytes per container and 12 KiB per pod split evenly over
 * its containers (init containers included); a placed message is the manifest line (about 300
 * bytes: a restored shard has one slot range, the plan's) plus the `from` URI.
 */
import { z } from "zod";
import { shardSchema } from "./backup-manifest.js";

/** The init container that writes it (components/valkey/restore-init.ts). */
export const RESTORE_PLACE_CONTAINER = "restore-place";
/** Where the kubelet takes a container's termination message from (the container's terminationMessagePath). */
export const TERMINATION_LOG = "/dev/termination-log";
/** The variable naming the file restore.sh writes its message to (local runs: a file in the member's directory). */
export const RESTORE_MESSAGE_ENV = "RESTORE_MESSAGE_FILE";

export const restoreMessageSchema = z.discriminatedUnion("restore", [
  z.strictObject({
    /** This member placed a shard of the backup `backup` (its manifest entry as `entry`). */
    restore: z.literal("placed"),
    from: z.string(),
    backup: z.string().min(1),
    entry: shardSchema,
  }),
  z.strictObject({
    /**
     * This member placed nothing (data already there, a member that starts empty, a formed release): `reason` says
     * which.
     */
    restore: z.literal("none"),
    from: z.string(),
    reason: z.string(),
  }),
]);

export type RestoreMessage = z.infer<typeof restoreMessageSchema>;

/** Parses one message; the error names `source` (the pod) and what is wrong, e.g. a truncated line. */
export function parseRestoreMessage(text: string, source: string): RestoreMessage {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(
      `${source}: the restore-place message is not JSON (truncated?): ${JSON.stringify(text.slice(0, 200))}`,
    );
  }
  const r = restoreMessageSchema.safeParse(raw);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "(root)"}: ${i.message}`);
    throw new Error(`${source}: not a restore-place message: ${issues.join("; ")}`);
  }
  return r.data;
}
