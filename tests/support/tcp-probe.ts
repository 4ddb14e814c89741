/** Whether a TCP connection from `source` (a local address) to `host:port` is accepted within `timeoutMs`. */
import { Socket } from "node:net";

export function connects(source: string, host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok: boolean): void => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once("error", () => done(false));
    s.connect({ host, port, localAddress: source }, () => done(true));
  });
}
