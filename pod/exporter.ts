/**
 * redis_exporter beside a server, assembled once: the arguments it runs with and the environment
 * it reads. The member and Sentinel pods run it as a second container with these arguments (the
 * image's entrypoint is the binary; components/valkey/exporter-container.ts), and the local
 * harness runs Debian's binary with the same ones (harness/metrics/exporter.ts). The password
 * reaches it only through REDIS_PASSWORD, never argv: `ps` and the pod spec's args show no secret.
 */
import type { NodeEndpoint } from "../vocabulary/endpoint.js";
import { DEFAULT_EXPORTER_PORT } from "../vocabulary/ports.js";

/** The variable redis_exporter reads its password from (its `--redis.password` flag's env). */
export const EXPORTER_PASSWORD_ENV = "REDIS_PASSWORD";
/** Where it serves the exposition. */
export const EXPORTER_METRICS_PATH = "/metrics";

export interface ExporterOptions {
  /** The server it reads: in a pod, the server container's port on 127.0.0.1. */
  server: NodeEndpoint;
  /** Where it listens; host "" = every address of the pod. @default { host: "", port: DEFAULT_EXPORTER_PORT } */
  listen?: NodeEndpoint;
  /** Whether the server needs the password (then EXPORTER_PASSWORD_ENV must be set). */
  auth: boolean;
}

/** What the exporter runs: its arguments (after the binary) and the variables it reads. */
export interface ExporterDefinition {
  args: string[];
  env: readonly string[];
}

export function exporterDefinition(o: ExporterOptions): ExporterDefinition {
  const listen = o.listen ?? { host: "", port: DEFAULT_EXPORTER_PORT };
  return {
    args: [
      "--redis.addr",
      `redis://${o.server.host}:${o.server.port}`,
      "--web.listen-address",
      `${listen.host}:${listen.port}`,
      "--web.telemetry-path",
      EXPORTER_METRICS_PATH,
    ],
    env: o.auth ? [EXPORTER_PASSWORD_ENV] : [],
  };
}
