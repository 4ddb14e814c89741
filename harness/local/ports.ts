/** Free TCP ports on 127.0.0.1, asked of the kernel (bind to port 0) rather than guessed. */
import { createServer } from "node:net";

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

/** `count` distinct free ports. */
export async function freePorts(count: number, host = "127.0.0.1"): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort(host));
  return [...ports];
}
