/**
 * The drill's write load: one stream per client, unique keys `<prefix>:<stream>:<n>` written at
 * a fixed rate (one SET every 1000/rate ms, never waiting for the previous one, so an outage
 * shows up as failed or late writes, not as a slower sender). Each SET is pipelined with
 * `WAIT 1 <timeout>` and ROLE on the same connection (cluster: the key's primary, named by
 * CLUSTER MYID); WAIT ≥ 1 from that node while it still answers ROLE master puts the write in the
 * confirmed ledger (never a WAIT answered later, or by another node). Every write is
 * recorded (ledger.ts). Commands never queue while disconnected and time out after
 * `commandTimeoutMs`, so a write is either acknowledged or failed within that bound.
 */
import { Cluster, Redis } from "ioredis";
import type { WriteRecord } from "./ledger.js";
import {
  clusterFollowOptions,
  DEFAULT_CLIENT_SETTINGS,
  followSwitchMaster,
  measuredRedisOptions,
  plainFollowOptions,
  sentinelFollowOptions,
  type ClientSettings,
} from "./client-settings.js";

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

interface Confirmed {
  doneAt: number;
  waited: boolean;
  node?: string;
}

const isRedirection = (err: unknown): boolean => /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /.test((err as Error)?.message ?? "");

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
    const failed = (err: unknown): void => {
      this.records.push({ stream: this.o.stream, key, value, sentAt, doneAt: preciseNow(), ok: false, error: (err as Error).message, waited: false });
      this.maybeRedial();
    };
    if (this.o.waitTimeoutMs <= 0) {
      try {
        await c.client.set(key, value);
      } catch (err) {
        failed(err);
        return;
      }
      this.records.push({ stream: this.o.stream, key, value, sentAt, doneAt: preciseNow(), ok: true, waited: false, ...this.nodeOf(c) });
      return;
    }
    let confirmed: Confirmed;
    try {
      confirmed = await this.setAndWait(c, key, value);
    } catch (err) {
      if (c.kind === "cluster" && isRedirection(err)) {
        // The slot moved under the pipeline: the SET alone follows the redirection (as any
        // cluster client does); its acknowledgement is not confirmed by a WAIT on its node.
        try {
          await c.client.set(key, value);
        } catch (err2) {
          failed(err2);
          return;
        }
        this.records.push({ stream: this.o.stream, key, value, sentAt, doneAt: preciseNow(), ok: true, waited: false });
        return;
      }
      failed(err);
      return;
    }
    const { doneAt, waited, node } = confirmed;
    this.records.push({ stream: this.o.stream, key, value, sentAt, doneAt, ok: true, waited, ...(node === undefined ? {} : { node }) });
  }

  /**
   * SET, WAIT 1 and ROLE pipelined on ONE connection, so the node that acknowledged the SET is
   * the node whose WAIT confirms it, and ROLE after the WAIT shows it was still a primary (no
   * demotion in between). Cluster: a keyed pipeline goes to the key's primary as one unit, with
   * CLUSTER MYID naming that node. The SET's acknowledgement time is its own reply's.
   */
  private async setAndWait(c: LoadClient, key: string, value: string): Promise<Confirmed> {
    let doneAt = 0;
    const p = c.client.pipeline().set(key, value, () => (doneAt = preciseNow()));
    p.call("WAIT", "1", String(this.o.waitTimeoutMs)).call("ROLE");
    if (c.kind === "cluster") p.call("CLUSTER", "MYID");
    const replies = (await p.exec()) ?? [];
    const [setErr] = replies[0] ?? [new Error("no reply to SET")];
    if (setErr) throw setErr;
    if (doneAt === 0) doneAt = preciseNow();
    const [waitErr, acks] = replies[1] ?? [new Error("no reply to WAIT"), 0];
    const [roleErr, role] = replies[2] ?? [new Error("no reply to ROLE"), []];
    const primary = !roleErr && Array.isArray(role) && role[0] === "master";
    const node = c.kind === "cluster" ? (replies[3]?.[0] ? undefined : String(replies[3]?.[1])) : this.nodeOf(c).node;
    return { doneAt, waited: !waitErr && Number(acks) >= 1 && primary, node };
  }

  /** The address the plain connection is connected to (what answered). */
  private nodeOf(c: LoadClient): { node?: string } {
    if (c.kind !== "redis") return {};
    const s = c.client.stream as { remoteAddress?: string; remotePort?: number } | undefined;
    return s?.remoteAddress === undefined ? {} : { node: `${s.remoteAddress}:${s.remotePort}` };
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

/**
 * Common options: fail fast while disconnected, bounded commands (client-settings.ts). `connectionName`: CLIENT SETNAME
 * on every connection (the partition drill counts the write endpoint's connections by it).
 */
export function plainRedis(
  host: string,
  port: number,
  password: string | undefined,
  commandTimeoutMs: number,
  connectionName?: string,
  settings: ClientSettings = DEFAULT_CLIENT_SETTINGS,
): Redis {
  const r = new Redis({
    host,
    port,
    password,
    ...(connectionName === undefined ? {} : { connectionName }),
    ...measuredRedisOptions(commandTimeoutMs),
    enableReadyCheck: false,
    ...plainFollowOptions(settings),
  });
  r.on("error", () => undefined);
  return r;
}

/** ioredis' Sentinel-aware client: asks the Sentinels for the primary on every (re)connect; `settings`: when it reconnects (client-settings.ts). */
export function sentinelRedis(
  sentinels: { host: string; port: number }[],
  name: string,
  password: string | undefined,
  commandTimeoutMs: number,
  settings: ClientSettings = DEFAULT_CLIENT_SETTINGS,
): Redis {
  const r = new Redis({
    sentinels,
    name,
    password,
    sentinelPassword: password,
    ...measuredRedisOptions(commandTimeoutMs),
    sentinelRetryStrategy: () => 100,
    ...sentinelFollowOptions(settings),
  });
  r.on("error", () => undefined);
  if (settings === "recommended") followSwitchMaster(r, sentinels, name, password);
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
  settings: ClientSettings = DEFAULT_CLIENT_SETTINGS,
): Cluster {
  const c = new Cluster(seeds, {
    redisOptions: { password, connectTimeout: 1000, commandTimeout: commandTimeoutMs, maxRetriesPerRequest: 0 },
    enableOfflineQueue: queueWhileConnecting,
    clusterRetryStrategy: () => 100,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    maxRedirections: 4,
    ...clusterFollowOptions(settings),
    dnsLookup: (host, cb) => {
      const ip = resolve(host) ?? host;
      cb(null, ip, 4);
    },
    // Members announce hostnames (`cluster-preferred-endpoint-type hostname`, as deployed): dnsLookup
    // covers only the seeds, so the nodes CLUSTER SLOTS and MOVED name go through the same lookup.
    natMap: (key) => {
      const at = key.lastIndexOf(":");
      const ip = resolve(key.slice(0, at));
      return ip === undefined ? null : { host: ip, port: Number(key.slice(at + 1)) };
    },
  });
  c.on("error", () => undefined);
  return c;
}
