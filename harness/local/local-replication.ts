/**
 * Starts a replication-mode set on this machine: one primary and N replicas, real
 * valkey-server processes, and waits until every replica's link to the primary is up.
 */
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { parseInfo } from "../../core/topology/info.js";
import { openClient } from "../../core/topology/connector.js";
import { roundRobinZones } from "../../core/topology/zones.js";
import { pollUntil } from "../../core/util/poll-until.js";
import type { LocalFleet, StartOptions, ValkeyProcess } from "./valkey-process.js";

export interface LocalReplicationOptions {
  replicas: number;
  /** Zone names assigned round-robin, primary first. */
  zones: readonly string[];
  password?: string;
  /** Extra options for every server (io-threads, persistence, ...). */
  server?: Omit<StartOptions, "replicaOf" | "clusterEnabled" | "password" | "name">;
  /** How long to wait for all replica links. */
  timeoutMs?: number;
}

export interface LocalReplication {
  primary: ValkeyProcess;
  replicas: ValkeyProcess[];
  /** `host:port` -> zone, round-robin over the zones, primary in the first zone. */
  zoneMap: Record<string, string>;
}

/**
 * Waits until every replica's link to its primary is up and not syncing. Each poll asks on a new
 * connection, and a failed one is "not yet": Sentinel ends every normal client of an instance it
 * reconfigures (sentinel.c sentinelSendSlaveOf: REPLICAOF, CONFIG REWRITE, CLIENT KILL TYPE
 * normal), which it may do to a replica at any time after a failover.
 */
export async function waitForReplicaLinks(
  replicas: readonly NodeEndpoint[],
  password: string | undefined,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const r of replicas) {
    await pollUntil(
      async () => {
        const client = await openClient(r.host, r.port, endpointKey(r), { password }).catch((err: Error) => err);
        if (client instanceof Error) return client.message;
        try {
          const info = parseInfo(await client.info("replication"));
          if (info.get("master_link_status") === "up" && info.get("master_sync_in_progress") !== "1") return true;
          return `master_link_status=${info.get("master_link_status") ?? "?"}`;
        } catch (err) {
          return (err as Error).message;
        } finally {
          client.disconnect();
        }
      },
      {
        timeoutMs: Math.max(0, deadline - Date.now()),
        intervalMs: 100,
        what: `replica ${endpointKey(r)} to link to its primary`,
      },
    );
  }
}

export async function startLocalReplication(fleet: LocalFleet, o: LocalReplicationOptions): Promise<LocalReplication> {
  if (!Number.isInteger(o.replicas) || o.replicas < 0)
    throw new Error(`replicas must be a whole number ≥ 0 (got ${o.replicas})`);
  const common = { ...o.server, password: o.password };
  const primary = await fleet.start({ ...common, name: "primary" });
  const replicas = await fleet.startMany(o.replicas, (i) => ({
    ...common,
    name: `replica-${i + 1}`,
    replicaOf: { host: primary.host, port: primary.port },
  }));
  await waitForReplicaLinks(replicas, o.password, o.timeoutMs ?? 30_000);
  return { primary, replicas, zoneMap: roundRobinZones([primary, ...replicas], o.zones) };
}
