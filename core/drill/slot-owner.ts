/**
 * The cluster WAIT writer's connection: a plain connection to the primary that serves the
 * stream's one slot (all its keys carry one hash tag), as the Cluster client's slot table names
 * it (refreshed every second, and at once after a MOVED). Its pipelines (SET, WAIT, ROLE,
 * CLUSTER MYID) are a plain connection's: every command is queued and written together or none
 * is. ioredis' Cluster pipelines are not: after a failover a pipeline's commands can be spread
 * over connections (a command rejected on a node that is not ready, the next queued on another),
 * its bytes are then never written, and the queued commands take the replies of the next ones
 * on that connection (SET got WAIT's `1`, ROLE's array or CLUSTER MYID's id: 43 and 118
 * unexpected replies in the local crash-restart and lost-volume drills, with `ip` endpoints and
 * no natMap).
 */
import type { Cluster, Redis } from "ioredis";
import { clientReady } from "../util/client-ready.js";

export class SlotOwner {
  private current: { key: string; redis: Redis } | undefined;

  constructor(
    private readonly cluster: Cluster,
    private readonly slot: number,
    private readonly dial: (host: string, port: number) => Redis,
  ) {}

  /**
   * The connection to the slot's primary now (a new one when the table names another); undefined while it names none.
   */
  connection(): Redis | undefined {
    const key = this.cluster.slots[this.slot]?.[0];
    if (key === undefined) return undefined;
    if (this.current?.key !== key) {
      this.current?.redis.disconnect();
      const at = key.lastIndexOf(":");
      this.current = { key, redis: this.dial(key.slice(0, at), Number(key.slice(at + 1))) };
    }
    return this.current.redis;
  }

  /**
   * The connection to the slot's primary once it is ready (connected, AUTH done): a plain
   * connection fails fast while not ready (no offline queue), so a pipeline sent on a connection
   * still being dialled (each stream's first write, every owner change) would fail at once
   * without ever reaching the node. Rejects after `ms` (the write's deadline).
   */
  async ready(ms: number): Promise<Redis | undefined> {
    const redis = this.connection();
    if (redis === undefined) return redis;
    await clientReady(redis, "the connection to the slot's primary", ms);
    return redis;
  }

  /** A MOVED or a lost connection: the table may be stale, refresh it now. */
  stale(): void {
    this.cluster.refreshSlotsCache();
  }

  disconnect(): void {
    this.current?.redis.disconnect();
    this.cluster.disconnect();
  }
}
