/**
 * Waits for an ioredis client (Redis or Cluster) to be ready: connected, AUTH done. A plain
 * connection without an offline queue fails a command sent before that at once, without it ever
 * reaching the node, so the drills' writers wait here rather than count set-up as failed writes.
 */

/** What clientReady needs of a client: its status and its ready/end events. */
export interface ReadyEmitter {
  status: string;
  once(event: "ready" | "end", listener: () => void): unknown;
  off(event: "ready" | "end", listener: () => void): unknown;
}

/** Resolves once `client` is ready; rejects naming `what` when it ends first or after `ms`. */
export function clientReady(client: ReadyEmitter, what: string, ms: number): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error): void => {
      clearTimeout(timer);
      client.off("ready", onReady);
      client.off("end", onEnd);
      if (err === undefined) resolve();
      else reject(err);
    };
    const onReady = (): void => done();
    const onEnd = (): void => done(new Error(`${what}: the connection closed before it was ready`));
    const timer = setTimeout(() => done(new Error(`${what}: not ready within ${ms} ms`)), ms);
    client.once("ready", onReady);
    client.once("end", onEnd);
  });
}
