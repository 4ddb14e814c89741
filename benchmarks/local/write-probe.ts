/**
 * A steady write load through an endpoint (the HAProxy write endpoint, a primary): one
 * client SETs `probe:<n>` back to back, reconnecting on its own, and records when each write
 * was acknowledged and which server took it. Failover measurements ask it for the first
 * acknowledged write after a moment (the SIGKILL of the primary).
 */
import { Redis } from "ioredis";
import type { NodeEndpoint } from "../topology/endpoint.js";
import { parseInfo } from "../topology/info.js";
import { sleep } from "../util/poll-until.js";

export interface ProbeWrite {
  /** Date.now() when the write was acknowledged. */
  at: number;
  key: string;
}

export class WriteProbe {
  readonly acked: ProbeWrite[] = [];
  errors = 0;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly client: Redis;
  private n = 0;

  constructor(
    endpoint: NodeEndpoint,
    password: string | undefined,
    private readonly prefix = "probe",
  ) {
    this.client = new Redis({
      host: endpoint.host,
      port: endpoint.port,
      password,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
      commandTimeout: 1000,
      retryStrategy: () => 20,
      enableReadyCheck: false,
    });
    this.client.on("error", () => {
      /* counted per failed write */
    });
  }

  start(): this {
    this.loop = (async () => {
      await this.client.connect().catch(() => undefined);
      while (!this.stopped) {
        const key = `${this.prefix}:${++this.n}`;
        try {
          await this.client.set(key, String(this.n));
          this.acked.push({ at: Date.now(), key });
        } catch {
          this.errors++;
          await sleep(10);
        }
      }
    })();
    return this;
  }

  /** The first write acknowledged at or after `t` (ms since epoch). */
  firstAckAfter(t: number): ProbeWrite | undefined {
    return this.acked.find((w) => w.at >= t);
  }

  /** The `tcp_port` of the server the endpoint currently sends this client to. */
  async serverPort(): Promise<number> {
    return Number(parseInfo(await this.client.info("server")).get("tcp_port"));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    this.client.disconnect();
  }
}
