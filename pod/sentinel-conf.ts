/**
 * sentinel.conf for one Sentinel (`valkey-server <file> --sentinel`). Pure. The file holds the
 * password (`requirepass`, `sentinel auth-pass`, `sentinel sentinel-pass`), so whoever writes
 * it writes it mode 0600; Sentinel rewrites it with its state (epochs, known replicas and
 * Sentinels), so it must live where a restart keeps it and is written only on first start.
 * Sentinel's rewrite creates the file as `0644 & ~umask`: run it under `umask 077`, or the
 * rewritten file (passwords included) becomes world-readable.
 */
import type { NodeEndpoint } from "../vocabulary/endpoint.js";
import { DEFAULT_MASTER_NAME } from "./replication-start.js";

export interface SentinelTimings {
  /** `sentinel down-after-milliseconds`: no valid reply for this long = subjectively down. */
  downAfterMs: number;
  /** `sentinel failover-timeout`. */
  failoverTimeoutMs: number;
  /** `sentinel parallel-syncs`: replicas resynced at once after a failover. */
  parallelSyncs: number;
}

export interface SentinelConfOptions extends SentinelTimings {
  port: number;
  bind?: string;
  dir: string;
  /** "" logs to stdout. */
  logfile?: string;
  masterName?: string;
  /** The primary to monitor on first start. */
  primary: NodeEndpoint;
  quorum: number;
  /** Data nodes' password (auth-pass) and this Sentinel's own (requirepass, sentinel-pass). */
  password?: string;
  /** What this Sentinel announces to its peers (`sentinel announce-ip/port`). */
  announce?: { host: string; port?: number };
  /** Hostnames instead of IPs (`resolve-hostnames`, `announce-hostnames`). */
  hostnames?: boolean;
}

const quote = (v: string): string => `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

function check(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min)
    throw new Error(`sentinel.conf: ${name} must be a whole number ≥ ${min} (got ${value})`);
  return value;
}

export function renderSentinelConf(o: SentinelConfOptions): string {
  const name = o.masterName ?? DEFAULT_MASTER_NAME;
  if (!/^[A-Za-z0-9._-]+$/.test(name))
    throw new Error(`sentinel.conf: masterName '${name}' must match [A-Za-z0-9._-]+`);
  const lines = [
    `port ${check("port", o.port, 1)}`,
    `bind ${o.bind ?? "* -::*"}`,
    `daemonize no`,
    `dir ${quote(o.dir)}`,
    `logfile ${quote(o.logfile ?? "")}`,
  ];
  if (o.hostnames) lines.push(`sentinel resolve-hostnames yes`, `sentinel announce-hostnames yes`);
  if (o.announce) {
    lines.push(`sentinel announce-ip ${quote(o.announce.host)}`);
    if (o.announce.port !== undefined)
      lines.push(`sentinel announce-port ${check("announce.port", o.announce.port, 1)}`);
  }
  if (o.password !== undefined) {
    if (/[\r\n]/.test(o.password)) throw new Error("sentinel.conf: the password must be a single line");
    lines.push(`requirepass ${quote(o.password)}`, `sentinel sentinel-pass ${quote(o.password)}`);
  } else {
    lines.push(`protected-mode no`);
  }
  lines.push(
    `sentinel monitor ${name} ${o.primary.host} ${check("primary.port", o.primary.port, 1)} ${check("quorum", o.quorum, 1)}`,
    `sentinel down-after-milliseconds ${name} ${check("downAfterMs", o.downAfterMs, 1)}`,
    `sentinel failover-timeout ${name} ${check("failoverTimeoutMs", o.failoverTimeoutMs, 1)}`,
    `sentinel parallel-syncs ${name} ${check("parallelSyncs", o.parallelSyncs, 1)}`,
  );
  if (o.password !== undefined) lines.push(`sentinel auth-pass ${name} ${quote(o.password)}`);
  return lines.join("\n") + "\n";
}
