/**
 * The drill's write load: one stream per writer, unique keys `<prefix>:<stream>:<n>` (cluster:
 * `<prefix>:{<tag>}:<stream>:<n>`, every key of a stream in one shard) written at a fixed rate
 * (one SET every 1000/rate ms, never waiting for the previous one, so an outage shows up as
 * failed or late writes, not as a slower sender). Two writers (writers.ts): the no-WAIT writer
 * sends a plain SET, as applications write; the WAIT writer pipelines each SET with
 * `WAIT 1 <timeout>` and ROLE on the same connection (cluster: the key's primary, named by
 * CLUSTER MYID); WAIT ≥ 1 from that node while it still answers ROLE master puts the write in the
 * confirmed ledger (never a WAIT answered later, or by another node). A write is acknowledged
 * only when SET's reply is exactly `OK` (and, pipelined, every other reply has its command's
 * shape); any other reply is recorded as an unexpected reply, never as an acknowledgement.
 * Every write is recorded (ledger.ts). Commands never queue while disconnected and time out
 * after `commandTimeoutMs`, so a write is either acknowledged, failed or unexpected within that
 * bound.
 */
import { createConnection, type Socket } from "node:net";
import { AbstractConnector, Cluster, Redis } from "ioredis";
import type { WriteRecord } from "./ledger.js";
import {
  clusterFollowOptions,
  DEFAULT_CLIENT_SETTINGS,
  followOnce,
  followSwitchMaster,
  measuredRedisOptions,
  plainFollowOptions,
  sentinelFollowOptions,
  type ClientSettings,
} from "./client-settings.js";
import { SlotOwner } from "./slot-owner.js";
import { streamName, type LoadShard, type Writer } from "./writers.js";

/** Epoch ms with sub-millisecond resolution (Date.now() would round every local latency to 0 or 1 ms). */
export const preciseNow = (): number => performance.timeOrigin + performance.now();

/**
 * `dial`: cluster, a plain connection to a node the slot table names (host:port as announced):
 * the WAIT writer's route to its slot's primary (slot-owner.ts).
 */
export type LoadClient =
  | { kind: "redis"; client: Redis; redial?: () => Redis }
  | { kind: "cluster"; client: Cluster; dial?: (host: string, port: number) => Redis };

export interface StreamOptions {
  stream: string;
  prefix: string;
  /** Writes per second. */
  rate: number;
  /** The WAIT writer's WAIT timeout in ms; 0 disables WAIT (no write is then confirmed). */
  waitTimeoutMs: number;
  /** @default "wait" when waitTimeoutMs > 0, else "no-wait" */
  writer?: Writer;
  /** Cluster: a hash tag every key of this stream carries (`{tag}`), so they all land in one shard. */
  hashTag?: string;
  /**
   * A write not answered within this many ms is recorded as failed, and a later reply ignored (as
   * an application's deadline): the Cluster client retries a command through redirections and
   * reconnections, each try with its own command timeout (a frozen shard's writes were
   * acknowledged 6.9 s after they were sent, hiding its outage between their acknowledgements).
   */
  deadlineMs?: number;
  /**
   * The tag's slot: with the cluster client's `dial`, the WAIT writer pipelines on a plain connection to its owner
   * (slot-owner.ts).
   */
  hashSlot?: number;
  client: LoadClient;
}

interface Confirmed {
  doneAt: number;
  waited: boolean;
  node?: string;
}

const isRedirection = (err: unknown): boolean =>
  /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /.test((err as Error)?.message ?? "");

/** A reply as a short text for the record: `SET → 1`. */
export const describeReply = (command: string, reply: unknown): string => {
  const text = JSON.stringify(reply) ?? String(reply);
  return `${command} → ${text.length > 60 ? `${text.slice(0, 60)}…` : text}`;
};

/** REMOTE_IP:PORT of a plain connection's socket; undefined while it has none. */
function addressOf(r: Redis): string | undefined {
  const s = r.stream as { remoteAddress?: string; remotePort?: number } | undefined;
  return s?.remoteAddress === undefined ? undefined : `${s.remoteAddress}:${s.remotePort}`;
}

/**
 * A cluster no-WAIT write's node from the client's slot table when it was sent and when its reply came: one HOST:PORT
 * when both name it, `SENT→AT` when the table changed in between (either may have answered: after a MOVED the client
 * resends to AT; a primary frozen while the table moved on answers at its thaw as SENT).
 */
export function slotOwners(sent: { node?: string }, at: { node?: string }): { node?: string } {
  if (sent.node === undefined || at.node === undefined || sent.node === at.node)
    return at.node === undefined ? sent : at;
  return { node: `${sent.node}→${at.node}` };
}

/** A reply that is not what its command returns on success: the pipeline's replies are not this write's. */
class UnexpectedReply extends Error {}

/**
 * The pipelined WAIT writer's replies, checked: SET exactly `OK`, WAIT an integer, ROLE an
 * array, CLUSTER MYID a 40-hex node id. Errors are thrown as they are; a reply of another shape
 * throws UnexpectedReply naming it. Pure.
 */
export function checkWaitReplies(
  replies: readonly [Error | null, unknown][],
  cluster: boolean,
): { acks: number; primary: boolean; node?: string } {
  const [setErr, set] = replies[0] ?? [new Error("no reply to SET"), undefined];
  if (setErr) throw setErr;
  if (set !== "OK") throw new UnexpectedReply(describeReply("SET", set));
  const [waitErr, acks] = replies[1] ?? [new Error("no reply to WAIT"), undefined];
  if (!waitErr && typeof acks !== "number") throw new UnexpectedReply(describeReply("WAIT", acks));
  const [roleErr, role] = replies[2] ?? [new Error("no reply to ROLE"), undefined];
  if (!roleErr && !Array.isArray(role)) throw new UnexpectedReply(describeReply("ROLE", role));
  const out = { acks: waitErr ? 0 : (acks as number), primary: !roleErr && (role as unknown[])[0] === "master" };
  if (!cluster) return out;
  const [idErr, id] = replies[3] ?? [new Error("no reply to CLUSTER MYID"), undefined];
  if (!idErr && !(typeof id === "string" && /^[0-9a-f]{40}$/.test(id)))
    throw new UnexpectedReply(describeReply("CLUSTER MYID", id));
  return idErr ? out : { ...out, node: id as string };
}

export class WriteStream {
  readonly records: WriteRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = new Set<Promise<void>>();
  private n = 0;
  private startedAt = 0;
  private redialing = false;
  private client: LoadClient;
  readonly writer: Writer;
  private readonly owner: SlotOwner | undefined;

  constructor(private readonly o: StreamOptions) {
    this.client = o.client;
    const c = o.client;
    const routed =
      c.kind === "cluster" &&
      c.dial !== undefined &&
      o.hashSlot !== undefined &&
      (o.writer ?? "wait") === "wait" &&
      o.waitTimeoutMs > 0;
    this.owner = routed
      ? new SlotOwner(c.client, o.hashSlot as number, c.dial as (host: string, port: number) => Redis)
      : undefined;
    this.writer = o.writer ?? (o.waitTimeoutMs > 0 ? "wait" : "no-wait");
    if (this.writer === "wait" && o.waitTimeoutMs <= 0)
      throw new Error(`${o.stream}: a WAIT writer needs waitTimeoutMs > 0`);
  }

  get stream(): string {
    return this.o.stream;
  }

  /** The client it writes through now (a redialed write endpoint's newest). */
  get loadClient(): LoadClient {
    return this.client;
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
    const tag = this.o.hashTag === undefined ? "" : `{${this.o.hashTag}}:`;
    const key = `${this.o.prefix}:${tag}${this.o.stream}:${seq}`;
    const value = `v${seq}`;
    const p = this.write(key, value).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async write(key: string, value: string): Promise<void> {
    const sentAt = preciseNow();
    const c = this.client;
    const base = { stream: this.o.stream, key, value, sentAt };
    const failed = (err: unknown): void => {
      this.records.push({ ...base, doneAt: preciseNow(), ok: false, error: (err as Error).message, waited: false });
      this.maybeRedial();
    };
    const unexpected = (reply: string): void => {
      this.records.push({ ...base, doneAt: preciseNow(), ok: false, unexpectedReply: reply, waited: false });
      this.maybeRedial();
    };
    /**
     * A plain SET: acknowledged only on exactly `OK`; its node is the plain connection's, or the cluster slot table's
     * at the send and at the reply (slotOwners).
     */
    const plainSet = async (): Promise<void> => {
      const sentOn = c.kind === "cluster" ? this.slotOwnerNode() : this.nodeOf(c);
      let reply: unknown;
      try {
        reply = await this.inTime(c.client.set(key, value));
      } catch (err) {
        failed(err);
        return;
      }
      if (reply !== "OK") unexpected(describeReply("SET", reply));
      else
        this.records.push({
          ...base,
          doneAt: preciseNow(),
          ok: true,
          waited: false,
          ...(c.kind === "cluster" ? slotOwners(sentOn, this.slotOwnerNode()) : sentOn),
        });
    };
    if (this.writer === "no-wait") return plainSet();
    let confirmed: Confirmed;
    try {
      confirmed = await this.inTime(this.setAndWait(c, key, value));
    } catch (err) {
      if (err instanceof UnexpectedReply) return unexpected(err.message);
      // The slot moved under the pipeline: the SET alone follows the redirection (as any
      // cluster client does); its acknowledgement is not confirmed by a WAIT on its node.
      if (c.kind === "cluster" && isRedirection(err)) {
        this.owner?.stale();
        return plainSet();
      }
      this.owner?.stale();
      failed(err);
      return;
    }
    const { doneAt, waited, node } = confirmed;
    this.records.push({ ...base, doneAt, ok: true, waited, ...(node === undefined ? {} : { node }) });
  }

  /**
   * SET, WAIT 1 and ROLE pipelined on ONE connection, so the node that acknowledged the SET is
   * the node whose WAIT confirms it, and ROLE after the WAIT shows it was still a primary (no
   * demotion in between). Cluster: a keyed pipeline goes to the key's primary as one unit, with
   * CLUSTER MYID naming that node. The SET's acknowledgement time is its own reply's.
   */
  private async setAndWait(c: LoadClient, key: string, value: string): Promise<Confirmed> {
    let doneAt = 0;
    const via =
      this.owner === undefined ? c.client : await this.owner.ready(this.o.deadlineMs ?? this.o.waitTimeoutMs + 1000);
    if (via === undefined) throw new Error(`no primary serves slot ${this.o.hashSlot} in the cluster client's table`);
    const p = via.pipeline().set(key, value, () => (doneAt = preciseNow()));
    p.call("WAIT", "1", String(this.o.waitTimeoutMs)).call("ROLE");
    if (c.kind === "cluster") p.call("CLUSTER", "MYID");
    const replies = ((await p.exec()) ?? []) as [Error | null, unknown][];
    const { acks, primary, node } = checkWaitReplies(replies, c.kind === "cluster");
    if (doneAt === 0) doneAt = preciseNow();
    return {
      doneAt,
      waited: acks >= 1 && primary,
      node: this.owner !== undefined ? addressOf(via as Redis) : c.kind === "cluster" ? node : this.nodeOf(c).node,
    };
  }

  /** `p`, or a rejection once deadlineMs passed without its answer. */
  private inTime<T>(p: Promise<T>): Promise<T> {
    const ms = this.o.deadlineMs;
    if (ms === undefined) return p;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>(
      (_, fail) => (timer = setTimeout(() => fail(new Error(`no reply within the ${ms} ms deadline`)), ms)),
    );
    p.catch(() => undefined);
    return Promise.race([p, late]).finally(() => clearTimeout(timer));
  }

  /** The address the plain connection is connected to (what answered). */
  private nodeOf(c: LoadClient): { node?: string } {
    if (c.kind !== "redis") return {};
    const node = addressOf(c.client);
    return node === undefined ? {} : { node };
  }

  /**
   * Cluster, a plain SET: the node the client's slot table names as the key's primary now (HOST:PORT
   * as the cluster announces it: a pod's DNS name when deployed), read when the SET is sent and when
   * its reply comes ({@link slotOwners}).
   */
  private slotOwnerNode(): { node?: string } {
    const c = this.client;
    if (c.kind !== "cluster" || this.o.hashSlot === undefined) return {};
    const node = c.client.slots[this.o.hashSlot]?.[0];
    return node === undefined ? {} : { node };
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
    this.owner?.disconnect();
  }
}

/**
 * The load's writers: per client path (and per shard in cluster mode) a no-WAIT writer and, when
 * WAIT is on, a WAIT writer beside it, each on a fresh client of its own (writers.ts).
 */
export function loadStreams(
  clients: readonly { client: string; make: () => LoadClient }[],
  shards: readonly LoadShard[],
  o: { prefix: string; rate: number; waitTimeoutMs: number; deadlineMs?: number },
): WriteStream[] {
  const writers: Writer[] = o.waitTimeoutMs > 0 ? ["no-wait", "wait"] : ["no-wait"];
  const where: (LoadShard | undefined)[] = shards.length > 0 ? [...shards] : [undefined];
  return clients.flatMap((c) =>
    where.flatMap((sh) =>
      writers.map(
        (writer) =>
          new WriteStream({
            stream: streamName({ client: c.client, writer, ...(sh === undefined ? {} : { shard: sh.label }) }),
            prefix: o.prefix,
            rate: o.rate,
            ...(o.deadlineMs === undefined ? {} : { deadlineMs: o.deadlineMs }),
            waitTimeoutMs: writer === "wait" ? o.waitTimeoutMs : 0,
            writer,
            ...(sh === undefined ? {} : { hashTag: sh.tag, hashSlot: sh.slot }),
            client: c.make(),
          }),
      ),
    ),
  );
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
  if (settings === "recommended") followOnce(r);
  return r;
}

/**
 * ioredis' Sentinel-aware client: asks the Sentinels for the primary on every (re)connect; `settings`: when it
 * reconnects (client-settings.ts).
 */
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
  if (settings === "recommended") {
    followOnce(r);
    followSwitchMaster(r, sentinels, name, password);
  }
  return r;
}

/**
 * A connector (ioredis' `Connector` option) that resolves the node's name through `resolve` when
 * it connects (the local stand-in for pod DNS; a name it does not know is left to the system's
 * resolver), so a client keeps the names the cluster announces as its node keys.
 */
export function resolvingConnector(
  resolve: (name: string) => string | undefined,
): new (options: unknown) => AbstractConnector {
  return class ResolvingConnector extends AbstractConnector {
    private readonly target: { host: string; port: number };
    constructor(options: unknown) {
      const o = options as { host?: string; port?: number; disconnectTimeout?: number };
      super(o.disconnectTimeout ?? 2000);
      this.target = { host: o.host ?? "localhost", port: o.port ?? 6379 };
    }
    connect(): Promise<Socket> {
      this.connecting = true;
      const host = resolve(this.target.host) ?? this.target.host;
      return new Promise((done, fail) => {
        process.nextTick(() => {
          if (!this.connecting) return fail(new Error("Connection is closed."));
          const stream = createConnection({ host, port: this.target.port });
          stream.once("error", (err) => (this.firstError = err));
          this.stream = stream;
          done(stream);
        });
      });
    }
  };
}

/**
 * ioredis' slot-aware Cluster client. Seeds and every node the cluster names (CLUSTER SLOTS,
 * MOVED: hostnames with `cluster-preferred-endpoint-type hostname`, as deployed) keep their names
 * as ioredis' node keys; `resolve` maps them to addresses only when a connection opens
 * (resolvingConnector), so a cluster restarted on new addresses is found again.
 *
 * Not `natMap`: with natMap ioredis keys its connection pool by the mapped address while MOVED
 * names the announced hostname, so a pipeline retried after MOVED finds no connection under that
 * name (Pipeline.exec's `preferKey`, the slot table's raw MOVED entry) and each of its commands
 * picks a random primary; one picked while not ready is rejected before the pipeline's node is
 * set, the next lands on a ready one and is queued there, and the pipeline's bytes are never
 * written (its write counter never reaches 0). Those queued commands then take the replies of the
 * next commands on that connection: SET got WAIT's `1` or an earlier CLUSTER MYID.
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
    redisOptions: {
      password,
      connectTimeout: 1000,
      commandTimeout: commandTimeoutMs,
      maxRetriesPerRequest: 0,
      Connector: resolvingConnector(resolve),
    },
    enableOfflineQueue: queueWhileConnecting,
    clusterRetryStrategy: () => 100,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    maxRedirections: 4,
    ...clusterFollowOptions(settings),
    // Seeds keep their names too: the connector resolves them.
    dnsLookup: (host, cb) => cb(null, host, 4),
  });
  c.on("error", () => undefined);
  return c;
}
