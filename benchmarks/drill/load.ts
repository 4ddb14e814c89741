/**
 * The drill's write load: one stream per client, unique keys `<prefix>:<stream>:<n>` written at
 * a fixed rate (one SET every 1000/rate ms, never waiting for the previous one, so an outage
 * shows up as failed or late writes, not as a slower sender). Each acknowledged SET is followed by
 * `WAIT 1 <timeout>` on the same connection (cluster: pipelined behind a keyed no-op so it lands
 * on the key's primary); WAIT ≥ 1 puts the write in the confirmed ledger. Every write is
 * recorded (ledger.ts). Commands never queue while disconnected and time out after
 * `commandTimeoutMs`, so a write is either acknowledged or failed within that bound.
 */
import { Cluster, Redis } from "ioredis";
import type { WriteRecord } from "./ledger.js";

/** Epoch ms with sub-millisecond resolution (Date.now() would round every local latency to 0 or 1 ms). */
export const preciseNow = (): number => performance.timeOrigin + performance.now();

export type LoadClient = { kind: "redis"; client: Redis; redial?: () => Redis } | { kind: "cluster"; client: Cluster };

export interface StreamOptions {
  stream: string;
  prefix: string;
  /** Writes per second. */
  rate: number;
  /** WAIT's timeout in ms; 0 disables WAIT (no write is then confirmed). */
  waitTimeoutMs: number;
  client: LoadClient;
}

export class WriteStream {
  readonly records: WriteRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = new Set<Promise<void>>();
  private n = 0;
  private startedAt = 0;
  private redialing = false;
  private client: LoadClient;

  constructor(private readonly o: StreamOptions) {
    this.client = o.client;
  }

  get stream(): string {
    return this.o.stream;
  }

  start(): void {
    this.startedAt = Date.now();
    const interval = 1000 / this.o.rate;
    const tick = (): void => {
      const due = Math.floor((Date.now() - this.startedAt) / interval) + 1;
      while (this.n < due) this.fire();
    };
    this.timer = setInterval(tick, Math.max(1, Math.min(10, interval / 2)));
  }

  private fire(): void {
    const seq = ++this.n;
    const key = `${this.o.prefix}:${this.o.stream}:${seq}`;
    const value = `v${seq}`;
    const p = this.write(key, value).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async write(key: string, value: string): Promise<void> {
    const sentAt = preciseNow();
    const c = this.client;
    try {
      await c.client.set(key, value);
    } catch (err) {
      this.records.push({ stream: this.o.stream, key, value, sentAt, doneAt: preciseNow(), ok: false, error: (err as Error).message, waited: false });
      this.maybeRedial();
      return;
    }
    const doneAt = preciseNow();
    let waited = false;
    if (this.o.waitTimeoutMs > 0) {
      try {
        const n =
          c.kind === "redis"
            ? await c.client.call("WAIT", "1", String(this.o.waitTimeoutMs))
            : ((await c.client.pipeline().exists(key).call("WAIT", "1", String(this.o.waitTimeoutMs)).exec())?.[1]?.[1] ?? 0);
        waited = Number(n) >= 1;
      } catch {
        waited = false;
      }
    }
    this.records.push({ stream: this.o.stream, key, value, sentAt, doneAt, ok: true, waited });
  }

  /**
   * A plain client (the write endpoint) gets a fresh connection after a failed write, as an
   * application's pool would (a proxy may have closed the socket under a "ready" client).
   */
  private maybeRedial(): void {
    const c = this.client;
    if (c.kind !== "redis" || c.redial === undefined || this.redialing) return;
    this.redialing = true;
    setTimeout(() => {
      c.client.disconnect();
      this.client = { ...c, client: c.redial!() };
      this.redialing = false;
    }, 50);
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await Promise.allSettled([...this.inFlight]);
    this.client.client.disconnect();
  }
}

/** Common options: fail fast while disconnected, bounded commands. */
export function plainRedis(host: string, port: number, password: string | undefined, commandTimeoutMs: number): Redis {
  const r = new Redis({
    host,
    port,
    password,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: commandTimeoutMs,
    enableReadyCheck: false,
    retryStrategy: () => 100,
  });
  r.on("error", () => undefined);
  return r;
}

/** ioredis' Sentinel-aware client: asks the Sentinels for the primary on every (re)connect. */
export function sentinelRedis(sentinels: { host: string; port: number }[], name: string, password: string | undefined, commandTimeoutMs: number): Redis {
  const r = new Redis({
    sentinels,
    name,
    password,
    sentinelPassword: password,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: commandTimeoutMs,
    sentinelRetryStrategy: () => 100,
    retryStrategy: () => 100,
    // After a switchover the old primary answers READONLY: reconnect (to the new primary).
    reconnectOnError: (err) => err.message.startsWith("READONLY"),
  });
  r.on("error", () => undefined);
  return r;
}

/**
 * ioredis' slot-aware Cluster client. Seeds are stable names resolved by `resolve` (the local
 * stand-in for pod DNS), so a cluster restarted on new addresses is found again.
 */
export function clusterClient(
  seeds: { host: string; port: number }[],
  password: string | undefined,
  commandTimeoutMs: number,
  resolve: (name: string) => string | undefined,
  queueWhileConnecting = false,
): Cluster {
  const c = new Cluster(seeds, {
    redisOptions: { password, connectTimeout: 1000, commandTimeout: commandTimeoutMs, maxRetriesPerRequest: 0 },
    enableOfflineQueue: queueWhileConnecting,
    clusterRetryStrategy: () => 100,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    maxRedirections: 4,
    slotsRefreshTimeout: 1000,
    slotsRefreshInterval: 1000,
    dnsLookup: (host, cb) => {
      const ip = resolve(host) ?? host;
      cb(null, ip, 4);
    },
  });
  c.on("error", () => undefined);
  return c;
}
