/**
 * Waits for an ioredis client (Redis or Cluster) to be ready: connected, AUTH done. A plain
 * connection without an offline queue fails a command sent before that at once, without it ever
 * reaching the node, so the drills' writers wait here rather than count set-up as failed writes.
 * However many callers wait on one client (a writer per write while its connection is being
 * dialled: 20 at a time at 20 writes/s and a 1 s deadline, which made Node warn of a listener
 * leak), the client carries one `ready` and one `end` listener for them all.
 */

/** What clientReady needs of a client: its status and its ready/end events. */
export interface ReadyEmitter {
  status: string;
  once(event: "ready" | "end", listener: () => void): unknown;
  off(event: "ready" | "end", listener: () => void): unknown;
}

const waits = new WeakMap<ReadyEmitter, Promise<void>>();

/** The client's next `ready` (rejected if it ends first), one listener pair shared by every caller. */
function nextReady(client: ReadyEmitter): Promise<void> {
  const pending = waits.get(client);
  if (pending !== undefined) return pending;
  const wait = new Promise<void>((resolve, reject) => {
    const onReady = (): void => {
      client.off("end", onEnd);
      waits.delete(client);
      resolve();
    };
    const onEnd = (): void => {
      client.off("ready", onReady);
      waits.delete(client);
      reject(new Error("the connection closed before it was ready"));
    };
    client.once("ready", onReady);
    client.once("end", onEnd);
  });
  wait.catch(() => undefined);
  waits.set(client, wait);
  return wait;
}

/** Resolves once `client` is ready; rejects naming `what` when it ends first or after `ms`. */
export function clientReady(client: ReadyEmitter, what: string, ms: number): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: not ready within ${ms} ms`)), ms);
    nextReady(client).then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      (err: Error) => {
        clearTimeout(timer);
        reject(new Error(`${what}: ${err.message}`));
      },
    );
  });
}
