/**
 * The INFO fields a soak sample keeps and the kinds of event, as plain values: the sampler reads
 * them at run time (soak-info.ts), and soak-sample.ts builds the sample's schema from them. Kept
 * apart so that the sampler's bundle needs no schema library.
 */

/** Numeric INFO fields a sample keeps, as INFO names them (null when the server does not report one). */
export const INFO_NUMBERS = [
  "used_memory",
  "mem_fragmentation_ratio",
  "aof_enabled",
  "aof_rewrite_in_progress",
  "aof_rewrites",
  "latest_fork_usec",
  "total_forks",
  "rdb_bgsave_in_progress",
  "connected_slaves",
  "master_sync_in_progress",
  "sync_full",
  "sync_partial_ok",
  "sync_partial_err",
] as const;
/** Text INFO fields a sample keeps. */
export const INFO_TEXTS = ["role", "master_link_status", "aof_last_bgrewrite_status"] as const;

export type InfoNumber = (typeof INFO_NUMBERS)[number];
export type InfoText = (typeof INFO_TEXTS)[number];

export const SOAK_EVENT_KINDS = ["aof-rewrite", "full-resync", "link-down", "role-change", "unreachable"] as const;
export type SoakEventKind = (typeof SOAK_EVENT_KINDS)[number];
