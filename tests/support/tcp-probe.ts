/** How a TCP connection from `source` (a local address) to `host:port` ends, and whether it is accepted. */
import { Socket } from "node:net";

/** "connected", "refused" (ECONNREFUSED), "no answer" (nothing within `timeoutMs`) or the error's code. */
export function dialOutcome(source: string, host: string, port: number, timeoutMs = 1000): Promise<string> {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (how: string): void => {
      s.destroy();
      resolve(how);
    };
    s.setTimeout(timeoutMs, () => done("no answer"));
    s.once("error", (e: NodeJS.ErrnoException) => done(e.code === "ECONNREFUSED" ? "refused" : String(e.code)));
    s.connect({ host, port, localAddress: source }, () => done("connected"));
  });
}

/** Whether a TCP connection from `source` to `host:port` is accepted within `timeoutMs`. */
export async function connects(source: string, host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return (await dialOutcome(source, host, port, timeoutMs)) === "connected";
}
