/**
 * redis_exporter beside a local server, with the arguments and environment the member and
 * Sentinel pods run it with (pod/exporter.ts): the server's address on its command line, the
 * password only in its environment (REDIS_PASSWORD), never argv. The binary is Debian's
 * `prometheus-redis-exporter` (1.45; .ci/setup installs it), or the one `$REDIS_EXPORTER` names.
 */
import { spawn } from "node:child_process";
import { pollUntil } from "../../core/util/poll-until.js";
import { runAtExit } from "../../core/util/process-reaper.js";
import { freePort } from "../local/ports.js";
import { EXPORTER_METRICS_PATH, EXPORTER_PASSWORD_ENV, exporterDefinition } from "../../pod/exporter.js";
import { debianBinary, ended, exitedEarly } from "./process.js";

export interface ExporterOptions {
  host: string;
  port: number;
  password?: string;
  /** Where it listens. @default 127.0.0.1 */
  listenHost?: string;
  /**
   * Wait until it reports `redis_up 1`; false: only until it answers (its server may be down or still starting, as a
   * new pod's exporter starts beside a server that is not up yet). @default true
   */
  waitUp?: boolean;
}

export interface RunningExporter {
  /** `http://host:port/metrics` */
  url: string;
  /** Ends the exporter (SIGTERM) and waits for it. */
  stop: () => Promise<void>;
}

/** Starts an exporter for host:port and waits until its /metrics answers with `redis_up 1` (or at all: waitUp). */
export async function startExporter(o: ExporterOptions): Promise<RunningExporter> {
  const listenHost = o.listenHost ?? "127.0.0.1";
  const listenPort = await freePort(listenHost);
  const def = exporterDefinition({
    server: { host: o.host, port: o.port },
    listen: { host: listenHost, port: listenPort },
    auth: o.password !== undefined,
  });
  const env = { ...process.env, ...(o.password === undefined ? {} : { [EXPORTER_PASSWORD_ENV]: o.password }) };
  const child = spawn(debianBinary("prometheus-redis-exporter", "REDIS_EXPORTER"), def.args, {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const unregister = runAtExit(() => child.kill("SIGKILL"));
  const url = `http://${listenHost}:${listenPort}${EXPORTER_METRICS_PATH}`;
  const stop = async (): Promise<void> => {
    unregister();
    await ended(child);
  };
  try {
    await pollUntil(
      async () =>
        (await upLine(url, o.waitUp ?? true)) ??
        (child.exitCode !== null ? exitedEarly("redis_exporter", child, stderr) : "no redis_up 1 yet"),
      {
        timeoutMs: 15_000,
        intervalMs: 200,
        what: `redis_exporter for ${o.host}:${o.port} to report redis_up ${o.waitUp === false ? "at all" : "1"}`,
      },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, stop };
}

async function upLine(url: string, up: boolean): Promise<true | undefined> {
  const text = await fetch(url)
    .then((r) => r.text())
    .catch(() => "");
  return (up ? /^redis_up 1$/m : /^redis_up [01]$/m).test(text) ? true : undefined;
}

/** The metric names (no labels, no HELP/TYPE lines) an exposition holds. */
export function metricNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line);
    if (m?.[1] !== undefined) names.add(m[1]);
  }
  return names;
}
