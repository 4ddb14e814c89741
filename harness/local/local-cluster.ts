/**
 * Starts a cluster-mode topology on this machine: P x (1 + M) real cluster-enabled
 * valkey-server processes, zones assigned round-robin over named zones (the local stand-in
 * for availability zones), bootstrapped by the same AZ-aware planner and executor that
 * bootstrap the cluster on Kubernetes.
 */
import { bootstrapCluster, type BootstrapResult } from "../../core/bootstrap/cluster-bootstrap.js";
import type { ClusterMember } from "../../core/bootstrap/cluster-member.js";
import type { ClusterPlan } from "../../core/bootstrap/az-aware-planner.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { roundRobinZones } from "../../core/topology/zones.js";
import type { LocalFleet, StartOptions, ValkeyProcess } from "./valkey-process.js";

export interface LocalClusterOptions {
  primaries: number;
  replicasPerPrimary: number;
  /** Zone names assigned round-robin over the nodes in start order. */
  zones: readonly string[];
  password?: string;
  /** cluster-node-timeout in ms; small values let tests see failures quickly. @default 5000 */
  clusterNodeTimeoutMs?: number;
  /** Extra options for every server (io-threads, persistence, ...). */
  server?: Omit<StartOptions, "replicaOf" | "clusterEnabled" | "password" | "name" | "clusterNodeTimeoutMs">;
  /** Bootstrap wait limit. @default 60000 */
  timeoutMs?: number;
  onStep?: (step: string) => void;
}

export interface LocalCluster {
  /** The first node started: a convenient seed for discovery. */
  seed: ValkeyProcess;
  /** Every node, in start order. */
  nodes: ValkeyProcess[];
  /** Primaries in shard (slot) order. */
  primaries: ValkeyProcess[];
  /** Primary address -> its replicas. */
  replicasOf: Map<string, ValkeyProcess[]>;
  /** `host:port` -> zone. */
  zoneMap: Record<string, string>;
  /** The plan the executor applied. */
  plan: ClusterPlan;
  /** `host:port` -> cluster node id. */
  nodeIds: Record<string, string>;
  bootstrap: BootstrapResult;
}

/** The bootstrap view of a local process: reached and met on its own loopback address. */
export function localMember(p: ValkeyProcess, zone: string): ClusterMember {
  if (p.clusterPort === undefined) throw new Error(`${p.name} (${p.address}) was not started cluster-enabled`);
  return {
    id: p.address,
    zone,
    endpoint: { host: p.host, port: p.port },
    meet: { ip: p.host, port: p.port, busPort: p.clusterPort },
  };
}

export async function startLocalCluster(fleet: LocalFleet, o: LocalClusterOptions): Promise<LocalCluster> {
  const count = o.primaries * (1 + o.replicasPerPrimary);
  if (!Number.isInteger(count) || count < 1) {
    throw new Error(`a cluster of ${o.primaries} primaries x (1 + ${o.replicasPerPrimary}) replicas has no nodes`);
  }
  const nodes = await fleet.startMany(count, (i) => ({
    ...o.server,
    name: `cluster-${i + 1}`,
    clusterEnabled: true,
    clusterNodeTimeoutMs: o.clusterNodeTimeoutMs,
    password: o.password,
  }));
  const zoneMap = roundRobinZones(nodes, o.zones);
  const members = nodes.map((n) => localMember(n, zoneMap[n.address] as string));
  const result = await bootstrapCluster({
    members,
    primaries: o.primaries,
    replicasPerPrimary: o.replicasPerPrimary,
    connector: new DirectConnector({ password: o.password }),
    timeoutMs: o.timeoutMs,
    onStep: o.onStep,
  });
  const plan = result.plan;
  if (plan === undefined) throw new Error("freshly started nodes were reported as an existing cluster");
  const byAddress = new Map(nodes.map((n) => [n.address, n]));
  const get = (id: string): ValkeyProcess => byAddress.get(id) as ValkeyProcess;
  return {
    seed: nodes[0] as ValkeyProcess,
    nodes,
    primaries: plan.shards.map((s) => get(s.primary.id)),
    replicasOf: new Map(plan.shards.map((s) => [s.primary.id, s.replicas.map((r) => get(r.id))])),
    zoneMap,
    plan,
    nodeIds: result.nodeIds,
    bootstrap: result,
  };
}
