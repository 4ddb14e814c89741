/**
 * One short-lived connection to a drill node, for a single read (the durability settings before a
 * drill, the AOF state right before a crash): connect, run `use`, disconnect whatever happens.
 */
import { Redis } from "ioredis";

export async function withNodeClient<T>(
  host: string,
  port: number,
  password: string,
  use: (c: Redis) => Promise<T>,
): Promise<T> {
  const c = new Redis({ host, port, password, maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: true });
  c.on("error", () => undefined);
  try {
    await c.connect();
    return await use(c);
  } finally {
    c.disconnect();
  }
}
