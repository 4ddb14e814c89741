/** What the RestoreCheck reports (its declaration names it as an output; the stack report carries it as `restore`). */
import type { RestoredShard } from "../../../core/backup/restore-check.js";

export type { RestoredShard } from "../../../core/backup/restore-check.js";

export interface RestoreCheckReport {
  /** `restore.from`: s3://bucket/prefix/<backup id>. */
  from: string;
  /** The backup's id, as its manifest names it. */
  backup: string;
  /** Per shard, in shard order: its slots, the manifest's keys and expires, DBSIZE on its primary now, the primary. */
  shards: RestoredShard[];
}
