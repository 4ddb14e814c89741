/**
 * How the drill's clients are configured (docs/client-settings.md). Two parts:
 * - the measurement settings, the same in both: commands never queue while disconnected, are
 *   never retried by the library and time out after the drill's command timeout, so every write
 *   is acknowledged or failed within that bound;
 * - the failover-following settings: `recommended`, what the docs tell applications to set
 *   (reconnect when a reply says the node can no longer take writes, NOREPLICAS / READONLY /
 *   LOADING / MASTERDOWN; the Sentinel client also drops its connection on the Sentinels'
 *   +switch-master, and every reconnect asks the Sentinels again), or `defaults`, the library's own
 *   (ioredis: no reconnectOnError, no failover detector; Cluster: its default slot refresh).
 * The drill records which (`clientSettings` in the row); `recommended` unless told otherwise.
 */
import type { ClusterOptions, RedisOptions } from "ioredis";

export const CLIENT_SETTINGS = ["recommended", "defaults"] as const;
export type ClientSettings = (typeof CLIENT_SETTINGS)[number];
export const DEFAULT_CLIENT_SETTINGS: ClientSettings = "recommended";

/** Error replies after which a client should reconnect (and, through Sentinel, ask for the primary again). */
export const FOLLOW_ERRORS = ["NOREPLICAS", "READONLY", "LOADING", "MASTERDOWN"] as const;

/** True when an error reply says this node can no longer take writes (FOLLOW_ERRORS). */
export const mustFollow = (message: string): boolean => FOLLOW_ERRORS.some((code) => message.startsWith(code));

/** ioredis' reconnectOnError for the recommended settings: 1 = reconnect, the failed command is not resent (the ledger counts it failed). */
export const reconnectOnFollowErrors = (err: Error): 1 | false => (mustFollow(err.message) ? 1 : false);

/** The measurement settings every drill connection has (see the file comment). */
export function measuredRedisOptions(commandTimeoutMs: number): RedisOptions {
  return { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 1000, commandTimeout: commandTimeoutMs, retryStrategy: () => 100 };
}

/**
 * ioredis closes a connection by half-closing it (FIN) and destroys it only after disconnectTimeout
 * (2 s by default) if the server never closes its side, which a frozen or unreachable primary does
 * not: recommended destroys it after 200 ms, so a reconnect is not held up by the old primary.
 */
export const RECOMMENDED_DISCONNECT_TIMEOUT_MS = 200;

/** A plain connection (the write endpoint): recommended reconnects on FOLLOW_ERRORS; defaults: ioredis' (never). */
export function plainFollowOptions(s: ClientSettings): RedisOptions {
  return s === "recommended" ? { reconnectOnError: reconnectOnFollowErrors, disconnectTimeout: RECOMMENDED_DISCONNECT_TIMEOUT_MS } : {};
}

/**
 * The Sentinel client: recommended reconnects on FOLLOW_ERRORS and on the Sentinels' +switch-master
 * (failoverDetector), without waiting on the old primary to close (disconnectTimeout), and keeps its
 * Sentinel list current (updateSentinels, ioredis' default too); every reconnect asks the Sentinels
 * for the primary. defaults: ioredis' (no reconnectOnError, no failover detector, 2 s disconnectTimeout).
 */
export function sentinelFollowOptions(s: ClientSettings): RedisOptions {
  return s === "recommended"
    ? { reconnectOnError: reconnectOnFollowErrors, failoverDetector: true, disconnectTimeout: RECOMMENDED_DISCONNECT_TIMEOUT_MS, updateSentinels: true }
    : {};
}

/**
 * The Cluster client: recommended refreshes the slot map every second besides on MOVED / ASK and
 * connection errors (a promoted replica is found within a second even with no redirection yet);
 * defaults: ioredis' (every 5 s). Cluster mode has no Sentinel: redirections do the following.
 */
export function clusterFollowOptions(s: ClientSettings): Pick<ClusterOptions, "slotsRefreshInterval" | "slotsRefreshTimeout"> {
  return s === "recommended" ? { slotsRefreshInterval: 1000, slotsRefreshTimeout: 1000 } : {};
}
