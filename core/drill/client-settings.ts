/**
 * How the drill's clients are configured (docs/client-settings.md). Two parts:
 * - the measurement settings, the same in both: commands never queue while disconnected, are
 *   never retried by the library and time out after the drill's command timeout, so every write
 *   is acknowledged or failed within that bound;
 * - the failover-following settings: `recommended`, what the docs tell applications to set
 *   (reconnect when a reply says the node can no longer take writes, NOREPLICAS / READONLY /
 *   LOADING / MASTERDOWN; the Sentinel client also drops its connection on the Sentinels'
 *   +switch-master, and every reconnect asks the Sentinels again), or `defaults`, the library's own
 *   (ioredis: no reconnectOnError, no +switch-master subscriber; Cluster: its default slot refresh).
 * The drill records which (`clientSettings` in the row); `recommended` unless told otherwise.
 */
import { Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import { flatField } from "../util/flat-field.js";

export const CLIENT_SETTINGS = ["recommended", "defaults"] as const;
export type ClientSettings = (typeof CLIENT_SETTINGS)[number];
export const DEFAULT_CLIENT_SETTINGS: ClientSettings = "recommended";

/** Error replies after which a client should reconnect (and, through Sentinel, ask for the primary again). */
export const FOLLOW_ERRORS = ["NOREPLICAS", "READONLY", "LOADING", "MASTERDOWN"] as const;

/** True when an error reply says this node can no longer take writes (FOLLOW_ERRORS). */
export const mustFollow = (message: string): boolean => FOLLOW_ERRORS.some((code) => message.startsWith(code));

/**
 * ioredis' reconnectOnError for the recommended settings: 1 = reconnect, the failed command is not resent (the ledger
 * counts it failed).
 */
export const reconnectOnFollowErrors = (err: Error): 1 | false => (mustFollow(err.message) ? 1 : false);

/**
 * reconnectOnFollowErrors for one client, once per connection: ioredis disconnects again for every
 * reply still in flight on the stream it is leaving (its own guard checks for `reconnecting`, which
 * comes only when that stream closes), and each disconnect adds a `close` listener to the stream
 * (Node's MaxListenersExceededWarning in the partition drill: NOREPLICAS to every write in
 * flight). So the first follow error of a connection reconnects and the others fail as they are
 * until the client is ready again. ioredis reads `options.reconnectOnError` at each error, so it
 * is set on the client made with the recommended options.
 */
export function followOnce(client: Redis): void {
  client.options.reconnectOnError = (err: Error): 1 | false =>
    reconnectOnFollowErrors(err) !== false && firstLeave(client) ? 1 : false;
}

const leaves = new WeakMap<Redis, { left: boolean }>();

/**
 * True the first time a client is asked to leave its connection since it was last ready, false
 * after: one leave per connection whatever asks (a follow error, a +switch-master), as each
 * disconnect of a still-open stream adds a listener to it. One `ready` listener per client.
 */
function firstLeave(client: Redis): boolean {
  let state = leaves.get(client);
  if (state === undefined) {
    const fresh = { left: false };
    client.on("ready", () => (fresh.left = false));
    leaves.set(client, fresh);
    state = fresh;
  }
  if (state.left) return false;
  state.left = true;
  return true;
}

/** The measurement settings every drill connection has (see the file comment). */
export function measuredRedisOptions(commandTimeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: commandTimeoutMs,
    retryStrategy: () => 100,
  };
}

/**
 * ioredis closes a connection by half-closing it (FIN) and destroys it only after disconnectTimeout
 * (2 s by default) if the server never closes its side, which a frozen or unreachable primary does
 * not: recommended destroys it after 200 ms, so a reconnect is not held up by the old primary.
 */
export const RECOMMENDED_DISCONNECT_TIMEOUT_MS = 200;

/** A plain connection (the write endpoint): recommended reconnects on FOLLOW_ERRORS; defaults: ioredis' (never). */
export function plainFollowOptions(s: ClientSettings): RedisOptions {
  return s === "recommended"
    ? { reconnectOnError: reconnectOnFollowErrors, disconnectTimeout: RECOMMENDED_DISCONNECT_TIMEOUT_MS }
    : {};
}

/**
 * The Sentinel client: recommended reconnects on FOLLOW_ERRORS without waiting on the old primary to
 * close (disconnectTimeout), and keeps its Sentinel list current (updateSentinels, ioredis' default
 * too); every reconnect asks the Sentinels for the primary. The Sentinels' +switch-master is
 * followed by followSwitchMaster (sentinelRedis), not by ioredis' failoverDetector: with a Sentinel
 * down (the `zone` fault) the detector held writes up for 15 s instead of 3.4 s. defaults: ioredis'
 * (no reconnectOnError, 2 s disconnectTimeout).
 */
export function sentinelFollowOptions(s: ClientSettings): RedisOptions {
  return s === "recommended"
    ? {
        reconnectOnError: reconnectOnFollowErrors,
        disconnectTimeout: RECOMMENDED_DISCONNECT_TIMEOUT_MS,
        updateSentinels: true,
      }
    : {};
}

/**
 * Recommended: one subscriber per Sentinel on +switch-master (`<name> <old ip> <old port> <new ip>
 * <new port>`); while `client` is connected to another address than the new primary's, it is made
 * to reconnect (asking the Sentinels). A client that is already reconnecting is left alone. Every
 * Sentinel, not only the ones given: each time the client is ready, the given ones are asked for
 * the others (`SENTINEL SENTINELS <name>`, the addresses they announce) and a subscriber is added
 * for each new one. Given one address (a Sentinel Service, as an application is), the subscriber
 * reaches one Sentinel; when that is the failover's leader, it publishes +switch-master only at
 * +failover-end, 1–2 s after the others (measured on real pods: in every `freeze` run one of the
 * drill's two Sentinel clients followed ~2 s late, the 9.6 s maximum). The subscribers end with
 * the client.
 */
export function followSwitchMaster(
  client: Redis,
  sentinels: readonly { host: string; port: number }[],
  name: string,
  password: string | undefined,
): void {
  const subscribers = new Map<string, Redis>();
  const subscribe = ({ host, port }: { host: string; port: number }): void => {
    const key = `${host}:${port}`;
    if (subscribers.has(key)) return;
    const sub = new Redis({ host, port, password, connectTimeout: 1000, retryStrategy: () => 500 });
    subscribers.set(key, sub);
    sub.on("error", () => undefined);
    sub.subscribe("+switch-master").catch(() => undefined);
    sub.on("message", (_channel: string, message: string) => {
      const [master, , , ip, newPort] = message.split(" ");
      const at = `${client.stream?.remoteAddress}:${client.stream?.remotePort}`;
      if (master !== name || client.status !== "ready" || at === `${ip}:${newPort}`) return;
      // One move per switch (every Sentinel publishes it): firstLeave.
      if (firstLeave(client)) client.disconnect(true);
    });
  };
  sentinels.forEach(subscribe);
  // Again at every ready, not once: a reconnect is when a Sentinel may have come back at a new address.
  const discover = (): void => {
    for (const given of sentinels) {
      void otherSentinels(given, name, password).then((found) => {
        if (client.status !== "end") found.forEach(subscribe);
      });
    }
  };
  client.on("ready", discover);
  client.once("end", () => {
    client.off("ready", discover);
    subscribers.forEach((sub) => sub.disconnect());
  });
}

/**
 * The other Sentinels `sentinel` knows for `name` (SENTINEL SENTINELS: the addresses they announce);
 * none when it does not answer.
 */
export async function otherSentinels(
  sentinel: { host: string; port: number },
  name: string,
  password: string | undefined,
): Promise<{ host: string; port: number }[]> {
  const c = new Redis({ ...sentinel, password, connectTimeout: 1000, commandTimeout: 1000, lazyConnect: true });
  c.on("error", () => undefined);
  try {
    await c.connect();
    const entries = (await c.call("SENTINEL", "SENTINELS", name)) as string[][];
    return entries.flatMap((fields) => {
      const host = flatField(fields, "ip");
      const port = Number(flatField(fields, "port"));
      return host !== undefined && Number.isInteger(port) && port > 0 ? [{ host, port }] : [];
    });
  } catch {
    return [];
  } finally {
    c.disconnect();
  }
}

/**
 * The Cluster client: recommended refreshes the slot map every second besides on MOVED / ASK and
 * connection errors (a promoted replica is found within a second even with no redirection yet);
 * defaults: ioredis' (every 5 s). Cluster mode has no Sentinel: redirections do the following.
 */
export function clusterFollowOptions(
  s: ClientSettings,
): Pick<ClusterOptions, "slotsRefreshInterval" | "slotsRefreshTimeout"> {
  return s === "recommended" ? { slotsRefreshInterval: 1000, slotsRefreshTimeout: 1000 } : {};
}
