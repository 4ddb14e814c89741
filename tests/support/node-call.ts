/**
 * One command on one node (a Valkey member or a Sentinel) over a short-lived ioredis connection:
 * connect, AUTH with `password` when given, the command with a `timeoutMs` bound, disconnect. For
 * tests that read a Sentinel's view (GET-MASTER-ADDR-BY-NAME, INFO sentinel, SENTINEL DEBUG) at a
 * moment of their own; errors (an unreachable or frozen node) reach the caller.
 */
import { Redis } from "ioredis";

export async function nodeCall(
  node: { host: string; port: number },
  password: string | undefined,
  args: readonly [string, ...string[]],
  timeoutMs = 2000,
): Promise<unknown> {
  const c = new Redis({
    host: node.host,
    port: node.port,
    password,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    lazyConnect: true,
    retryStrategy: () => null,
  });
  c.on("error", () => undefined);
  try {
    await c.connect();
    const [command, ...rest] = args;
    return await c.call(command, ...rest);
  } finally {
    c.disconnect();
  }
}

/** The primary Sentinel `s` names for `masterName`, as host:port. */
export async function namedBy(
  s: { host: string; port: number },
  password: string | undefined,
  masterName: string,
): Promise<string> {
  const r = (await nodeCall(s, password, ["SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName])) as [string, string];
  return `${r[0]}:${r[1]}`;
}
