/**
 * The partition drill's `connectionsToOldPrimaryAfterFailover` (replication mode): how many NEW
 * write-endpoint connections HAProxy sent to the old primary after the Sentinels failed over,
 * i.e. while two members answered `role:master` to its health check. From start() (the first
 * +switch-master) until stop() (the old primary seen back as a replica), CLIENT LIST on the old
 * primary every 100 ms, over the harness's own connection (127.0.0.1, never cut): connections named
 * `name` (the load's CLIENT SETNAME) from HAProxy's address whose id was not there at the switch.
 * Each such connection lives ≥ 550 ms (a write refused there still waits for its pipelined
 * `WAIT 1 500` before the load redials), so a 100 ms poll sees every one.
 */
import { Redis } from "ioredis";
import { sleep } from "../../core/util/poll-until.js";

/** `id` of every CLIENT LIST entry named `name` whose peer address is `host` (pure). */
export function namedClientIds(clientList: string, name: string, host: string): string[] {
  return clientList
    .split("\n")
    .map(
      (line) =>
        new Map(
          line
            .trim()
            .split(" ")
            .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)] as const),
        ),
    )
    .filter((f) => f.get("name") === name && f.get("addr")?.slice(0, f.get("addr")!.lastIndexOf(":")) === host)
    .map((f) => f.get("id") as string);
}

export class SplitCounter {
  private readonly c: Redis;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private readonly seen = new Set<string>();

  constructor(
    host: string,
    port: number,
    password: string,
    private readonly proxyHost: string,
    private readonly name: string,
  ) {
    this.c = new Redis({
      host,
      port,
      password,
      lazyConnect: true,
      connectTimeout: 1000,
      commandTimeout: 1000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 100,
    });
    this.c.on("error", () => undefined);
  }

  private async ids(): Promise<string[]> {
    return namedClientIds(String(await this.c.call("CLIENT", "LIST")), this.name, this.proxyHost);
  }

  /** Starts counting (idempotent): connections already there now are not new. */
  start(): void {
    if (this.loop !== undefined || this.stopped) return;
    this.loop = (async () => {
      const before = new Set(await this.ids().catch(() => []));
      while (!this.stopped) {
        for (const id of await this.ids().catch(() => [])) if (!before.has(id)) this.seen.add(id);
        await sleep(100);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    this.c.disconnect();
  }

  /** New connections seen; null when counting never started (no failover seen). */
  get count(): number | null {
    return this.loop === undefined ? null : this.seen.size;
  }
}
