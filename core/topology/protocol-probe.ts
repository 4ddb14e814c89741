/**
 * Tells a Valkey/Redis server from something else listening on the port (an HTTP server, an SSH
 * daemon, an echo service): sends the inline command `PING\r\n`, which every Valkey/Redis server
 * answers with a RESP reply (`+PONG`, or `-NOAUTH ...` when a password is set), and reads the first
 * bytes. Used only after a client's connect or PING failed or returned something odd, to name the
 * listener in the error instead of a protocol or stream error.
 */
import { connect } from "node:net";

/** RESP2/RESP3 reply type bytes. */
const RESP_TYPES = new Set(["+", "-", ":", "$", "*", "_", ",", "#", "!", "=", "(", "%", "~", ">", "|"]);

export type ProbeResult =
  /** Answered with a RESP reply: a Valkey/Redis server. */
  | { kind: "resp"; first: string }
  /** Answered, but not in RESP; `first` is the first line it sent (printable, shortened). */
  | { kind: "other"; first: string }
  /** Connected but sent nothing within the timeout, or closed without a byte. */
  | { kind: "silent" }
  /** Could not connect. */
  | { kind: "unreachable"; error: string };

const printable = (s: string): string =>
  s
    .split(/\r?\n/)[0]!
    .replace(/[^\x20-\x7e]/g, "?")
    .slice(0, 60);

/** How long the probe waits for a first byte unless told. */
export const PROBE_TIMEOUT_MS = 1500;

export function probeProtocol(host: string, port: number, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let got = "";
    let done = false;
    const socket = connect({ host, port });
    const finish = (r: ProbeResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(r);
    };
    const verdict = (): ProbeResult => {
      if (got === "") return { kind: "silent" };
      return RESP_TYPES.has(got[0]!) && !got.startsWith("PING")
        ? { kind: "resp", first: printable(got) }
        : { kind: "other", first: printable(got) };
    };
    const timer = setTimeout(() => finish(verdict()), timeoutMs);
    socket.setEncoding("latin1");
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (d: string) => {
      got += d;
      if (got.includes("\n") || got.length >= 64) finish(verdict());
    });
    socket.on("end", () => finish(verdict()));
    socket.on("error", (err) => finish(got === "" ? { kind: "unreachable", error: err.message } : verdict()));
  });
}
