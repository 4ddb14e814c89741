/** Free TCP ports on 127.0.0.1, asked of the kernel (bind to port 0) rather than guessed. */
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

/** One free port on `host`. The port is released before it is returned. */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      if (addr === null || typeof addr === "string") {
        srv.close();
        reject(new Error("could not read the bound port"));
        return;
      }
      const { port } = addr;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A free port on `host` whose member directory `<root>/<name>-<port>` does not exist yet. A stopped member's port is
 * free again, and its directory still holds that member's data (and a restore marker, which a start script reads).
 */
export async function freePortForFreshDir(
  root: string,
  name: string,
  host = "127.0.0.1",
  pick: (host: string) => Promise<number> = freePort,
): Promise<number> {
  let port = await pick(host);
  while (existsSync(join(root, `${name}-${port}`))) port = await pick(host);
  return port;
}

/** `count` distinct free ports. */
export async function freePorts(count: number, host = "127.0.0.1"): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort(host));
  return [...ports];
}
