/**
 * Renders valkey.conf for a Valkey pod from the resolved config. The file holds no secret and
 * no per-pod value: it `include`s the files the start script generates at container start
 * (auth.conf with requirepass/masterauth from the mounted Secret, announce.conf with the pod's
 * stable DNS name), so one ConfigMap serves every pod of a role.
 */
import type { ValkeyConfig } from "../config/types.js";
import { VALKEY_BUS_PORT, VALKEY_PORT } from "../vocabulary/ports.js";
import { DATA_DIR, RUN_DIR } from "./paths.js";

/** The RDB schedule used when `persistence.rdb` is on (Valkey's own default schedule). */
export const RDB_SAVE_SCHEDULE = "3600 1 300 100 60 10000";

/** What one valkey.conf is for. */
export type ConfRole =
  | { kind: "primary" }
  | { kind: "replica"; primaryHost: string; primaryPort?: number }
  | { kind: "cluster-member" }
  /**
   * A replication member under Sentinel: no fixed role, `replicaof` (or nothing) comes from the start decision's
   * include.
   */
  | { kind: "replication-member" };

export interface ValkeyConfOptions {
  role: ConfRole;
  /** Client port. @default VALKEY_PORT (6379) */
  port?: number;
  /** Cluster bus port (cluster members). @default VALKEY_BUS_PORT (16379) */
  busPort?: number;
  /** Data directory. @default DATA_DIR ("/data") */
  dataDir?: string;
  /** Directory of the generated includes. @default RUN_DIR ("/run/valkey") */
  runDir?: string;
  /** Listen addresses. @default "* -::*" (every IPv4 and, when present, IPv6 address) */
  bind?: string;
}

/** The generated include files, in the order valkey.conf includes them. */
export function includeFiles(runDir: string = RUN_DIR): { auth: string; announce: string; replication: string } {
  return {
    auth: `${runDir}/auth.conf`,
    announce: `${runDir}/announce.conf`,
    replication: `${runDir}/replication.conf`,
  };
}

function quote(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** The valkey.conf lines (without comments) for one role. */
export function valkeyConfLines(valkey: ValkeyConfig, o: ValkeyConfOptions): string[] {
  const dataDir = o.dataDir ?? DATA_DIR;
  const includes = includeFiles(o.runDir);
  const p = valkey.persistence;
  const lines = [
    `port ${o.port ?? VALKEY_PORT}`,
    `bind ${o.bind ?? "* -::*"}`,
    // NetworkPolicy and auth guard the port; protected mode would refuse every pod-network client.
    `protected-mode no`,
    `daemonize no`,
    `logfile ""`,
    `dir ${quote(dataDir)}`,
    `io-threads ${valkey.ioThreads}`,
    `maxmemory ${valkey.maxmemoryBytes}`,
    `maxmemory-policy ${valkey.maxmemoryPolicy}`,
    `appendonly ${p.aof ? "yes" : "no"}`,
    `appendfsync ${p.appendfsync}`,
    `save ${p.rdb ? quote(RDB_SAVE_SCHEDULE) : '""'}`,
    `repl-diskless-sync-delay ${valkey.replDisklessSyncDelaySeconds}`,
  ];
  const role = o.role;
  if (role.kind === "cluster-member") {
    lines.push(
      `cluster-enabled yes`,
      // On the data volume, so a restarted pod keeps its node id, slots and peers.
      `cluster-config-file ${quote(`${dataDir}/nodes.conf`)}`,
      `cluster-node-timeout ${valkey.cluster.nodeTimeoutMs}`,
      `cluster-port ${o.busPort ?? VALKEY_BUS_PORT}`,
      // Pod IPs change on reschedule; clients and peers get the stable DNS name instead.
      `cluster-preferred-endpoint-type hostname`,
      `cluster-require-full-coverage yes`,
    );
  } else {
    lines.push(
      `min-replicas-to-write ${valkey.replication.minReplicasToWrite}`,
      `min-replicas-max-lag ${valkey.replication.minReplicasMaxLag}`,
      `replica-read-only yes`,
    );
    if (role.kind === "replica") lines.push(`replicaof ${role.primaryHost} ${role.primaryPort ?? VALKEY_PORT}`);
  }
  lines.push(`include ${quote(includes.auth)}`, `include ${quote(includes.announce)}`);
  if (role.kind === "replication-member") lines.push(`include ${quote(includes.replication)}`);
  return lines;
}

/** The whole valkey.conf text. */
export function renderValkeyConf(valkey: ValkeyConfig, o: ValkeyConfOptions): string {
  const header = `# valkey.conf (${o.role.kind}) rendered by valkey-on-eks; secrets and per-pod values come from the includes.`;
  return [header, ...valkeyConfLines(valkey, o)].join("\n") + "\n";
}
