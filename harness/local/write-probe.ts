/**
 * A steady write load through an endpoint (the HAProxy write endpoint, a primary): one
 * client SETs `probe:<n>` back to back, reconnecting on its own, and records when each write
 * was acknowledged and which server took it. Failover measurements ask it for the first
 * acknowledged write after a moment (the SIGKILL of the primary).
 */
import { Redis } from "ioredis";
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";
import { sleep } from "../../core/util/poll-until.js";

export interface ProbeWrite {
  /** Sequence number: writes are sent in this order, one at a time. */
  seq: number;
  /** Date.now() when the write was acknowledged. */
  at: number;
  key: string;
}

export class WriteProbe {
  readonly acked: ProbeWrite[] = [];
  errors = 0;
  /** The last write error's message. */
  lastError: string | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private client: Redis;
  private n = 0;

  constructor(
    private readonly endpoint: NodeEndpoint,
    private readonly password: string | undefined,
    private readonly prefix = "probe",
  ) {
    this.client = this.dial();
  }

  private dial(): Redis {
    const client = new Redis({
      host: this.endpoint.host,
      port: this.endpoint.port,
      password: this.password,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
      commandTimeout: 1000,
      retryStrategy: () => null,
      enableReadyCheck: false,
    });
    client.on("error", () => {
      /* counted per failed write */
    });
    return client;
  }

  start(): this {
    this.loop = (async () => {
      await this.client.connect().catch(() => undefined);
      while (!this.stopped) {
        const seq = ++this.n;
        const key = `${this.prefix}:${seq}`;
        try {
          await this.client.set(key, String(seq));
          this.acked.push({ seq, at: Date.now(), key });
        } catch (err) {
          this.errors++;
          this.lastError = (err as Error).message;
          // A fresh connection after any failed write, as an application's pool would do
          // (ioredis can stay "ready" on a socket the proxy already closed).
          this.client.disconnect();
          await sleep(10);
          this.client = this.dial();
          await this.client.connect().catch(() => undefined);
        }
      }
    })();
    return this;
  }

  /**
   * A mark in the write sequence: writes after it are sent after this call returns (one
   * write is in flight at a time, and this runs on the same event loop as the sender).
   */
  mark(): number {
    return this.n;
  }

  /** The first acknowledged write sent after `mark` (a value of `mark()`). */
  firstAckAfter(mark: number): ProbeWrite | undefined {
    return this.acked.find((w) => w.seq > mark);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    this.client.disconnect();
  }
}
