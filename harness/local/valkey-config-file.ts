/**
 * Renders valkey.conf text for a local valkey-server process. Secrets go in the file
 * (mode 0600), never on the process's command line.
 */

export interface LocalServerOptions {
  port: number;
  /** Cluster bus port; set only for cluster-enabled nodes. */
  clusterPort?: number;
  bind?: string;
  /** Working directory for RDB, AOF, nodes.conf. */
  dir: string;
  logfile: string;
  password?: string;
  /** `replicaof host port` for replication-mode replicas. */
  replicaOf?: { host: string; port: number };
  clusterEnabled?: boolean;
  /** Milliseconds; low values let tests see nodes flagged fail quickly. */
  clusterNodeTimeoutMs?: number;
  appendonly?: boolean;
  /** RDB snapshot schedule; empty string disables RDB. */
  save?: string;
  ioThreads?: number;
  /** Files included at the end (after `replicaof`), in order. */
  includes?: readonly string[];
  /** Extra raw `key value` lines. */
  extra?: Record<string, string | number>;
}

function quote(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

export function renderLocalValkeyConf(o: LocalServerOptions): string {
  const lines: string[] = [
    `port ${o.port}`,
    `bind ${o.bind ?? "127.0.0.1"}`,
    `daemonize no`,
    `dir ${quote(o.dir)}`,
    `logfile ${quote(o.logfile)}`,
    `appendonly ${o.appendonly === false ? "no" : "yes"}`,
    `save ${quote(o.save ?? "3600 1 300 100 60 10000")}`,
    `io-threads ${o.ioThreads ?? 1}`,
    `enable-debug-command local`,
    // Replicas of a local set should sync at once rather than after the 5 s default delay.
    `repl-diskless-sync-delay 0`,
  ];
  if (o.password !== undefined) {
    lines.push(`requirepass ${quote(o.password)}`, `masterauth ${quote(o.password)}`);
  } else {
    lines.push(`protected-mode no`);
  }
  if (o.replicaOf) lines.push(`replicaof ${o.replicaOf.host} ${o.replicaOf.port}`);
  if (o.clusterEnabled) {
    lines.push(
      `cluster-enabled yes`,
      `cluster-config-file nodes.conf`,
      `cluster-node-timeout ${o.clusterNodeTimeoutMs ?? 5000}`,
      `cluster-require-full-coverage yes`,
    );
    if (o.clusterPort !== undefined) lines.push(`cluster-port ${o.clusterPort}`);
  }
  for (const [k, v] of Object.entries(o.extra ?? {})) lines.push(`${k} ${typeof v === "number" ? v : quote(v)}`);
  for (const file of o.includes ?? []) lines.push(`include ${quote(file)}`);
  return lines.join("\n") + "\n";
}
