/**
 * Starts a replication-mode set on this machine: one primary and N replicas, real
 * valkey-server processes, and waits until every replica's link to the primary is up.
 */
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { parseInfo } from "../topology/info.js";
import { openClient } from "../topology/connector.js";
import { roundRobinZones } from "../topology/zones.js";
import { pollUntil } from "../util/poll-until.js";
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

export async function waitForReplicaLinks(replicas: readonly NodeEndpoint[], password: string | undefined, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const r of replicas) {
    const client = await openClient(r.host, r.port, endpointKey(r), { password });
    try {
      await pollUntil(
        async () => {
          const info = parseInfo(await client.info("replication"));
          if (info.get("master_link_status") === "up" && info.get("master_sync_in_progress") !== "1") return true;
          return `master_link_status=${info.get("master_link_status") ?? "?"}`;
        },
        { timeoutMs: Math.max(0, deadline - Date.now()), what: `replica ${endpointKey(r)} to link to its primary` },
      );
    } finally {
      client.disconnect();
    }
  }
}

export async function startLocalReplication(fleet: LocalFleet, o: LocalReplicationOptions): Promise<LocalReplication> {
  if (!Number.isInteger(o.replicas) || o.replicas < 0) throw new Error(`replicas must be a whole number ≥ 0 (got ${o.replicas})`);
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
