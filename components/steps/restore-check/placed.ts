/**
 * What the members' `restore-place` init containers reported (pod/restore-message.ts), as the
 * kubelet keeps it in their pods' status: which backup the release was restored from, and each
 * restored shard's manifest entry (its key and expiry counts). Pure: the pods as PodApi lists them.
 */
import type { ShardEntry } from "../../../pod/backup-manifest.js";
import { parseRestoreMessage, RESTORE_PLACE_CONTAINER, type RestoreMessage } from "../../../pod/restore-message.js";
import type { PodRecord } from "../../kubernetes/pod-api.js";

export interface RestoredBackup {
  /** The backup's id. */
  backup: string;
  /** One manifest entry per shard a member placed, in shard order. */
  entries: ShardEntry[];
}

type Placed = Extract<RestoreMessage, { restore: "placed" }>;

/** The same URI with or without a trailing slash. */
const bare = (uri: string): string => uri.replace(/\/+$/, "");

/** What one member said, for an error naming every member's account. */
function account(messages: readonly RestoreMessage[], from: string, mine: Placed | undefined): string {
  if (mine !== undefined) return `placed shard ${mine.entry.shard} of backup ${mine.backup}`;
  const m = messages[0];
  if (m === undefined) return "no restore-place report (its init containers have not run since restore.from was set?)";
  if (m.restore === "placed") return `placed shard ${m.entry.shard} of another backup (${m.from})`;
  return `placed nothing: ${m.reason}${bare(m.from) === bare(from) ? "" : ` (it was asked for '${m.from}')`}`;
}

/**
 * The backup `from` that the members restored, from their reports (the last run's, else the one
 * before a restart). Throws naming every member's account when none placed a shard of `from` (a
 * release that was already formed: a restore only fills a new stack's empty volumes), when they
 * placed shards of two backups, or two different objects for one shard.
 */
export function restoredBackup(
  pods: readonly Pick<PodRecord, "name" | "initMessages">[],
  from: string,
): RestoredBackup {
  const placed: { pod: string; message: Placed }[] = [];
  const accounts: string[] = [];
  for (const p of [...pods].sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }))) {
    const messages = (p.initMessages[RESTORE_PLACE_CONTAINER] ?? []).map((text) => parseRestoreMessage(text, p.name));
    const mine = messages.find((m): m is Placed => m.restore === "placed" && bare(m.from) === bare(from));
    if (mine !== undefined) placed.push({ pod: p.name, message: mine });
    accounts.push(`${p.name}: ${account(messages, from, mine)}`);
  }
  if (placed.length === 0) {
    throw new Error(
      `restore.from is ${from}, but no member restored it (was the release already formed? A restore fills only a new stack's empty volumes): ${accounts.join("; ") || "no member pods"}`,
    );
  }
  const backups = [...new Set(placed.map((x) => x.message.backup))];
  if (backups.length > 1)
    throw new Error(
      `the members placed shards of ${backups.length} backups (${backups.join(", ")}): ${accounts.join("; ")}`,
    );
  const byShard = new Map<number, { pod: string; entry: ShardEntry }>();
  for (const { pod, message } of placed) {
    const had = byShard.get(message.entry.shard);
    if (had === undefined) byShard.set(message.entry.shard, { pod, entry: message.entry });
    else if (had.entry.sha256 !== message.entry.sha256) {
      throw new Error(
        `shard ${message.entry.shard}: ${had.pod} and ${pod} placed different objects (sha256 ${had.entry.sha256} and ${message.entry.sha256})`,
      );
    }
  }
  return {
    backup: backups[0] as string,
    entries: [...byShard.values()].map((x) => x.entry).sort((a, b) => a.shard - b.shard),
  };
}
