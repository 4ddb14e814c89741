/**
 * Synthetic captured replies for a healthy cluster or replication set of any size: what the
 * collector would capture from real nodes. Used by the perf script and the unit tests.
 */
import { splitSlots } from "../topology/slots.js";
import type { ClusterCapture, ClusterNodeCapture } from "./cluster-analysis.js";
import type { ReplicationCapture } from "./replication-analysis.js";

export interface SyntheticNode {
  id: string;
  address: string;
  zone: string;
  role: "primary" | "replica";
  /** Index of the shard it belongs to. */
  shard: number;
}

export interface SyntheticCluster {
  capture: ClusterCapture;
  zones: Map<string, string>;
  nodes: SyntheticNode[];
  /** Builds the seed's CLUSTER NODES line for a node (with `extraFlags` added). */
  line(n: SyntheticNode, extraFlags?: string[]): string;
}

export const syntheticNodeId = (i: number): string => i.toString(16).padStart(40, "0");

export function syntheticClusterInfo(state = "ok", assigned = 16384, ok = assigned, pfail = 0, fail = 0): string {
  return [
    `cluster_state:${state}`,
    `cluster_slots_assigned:${assigned}`,
    `cluster_slots_ok:${ok}`,
    `cluster_slots_pfail:${pfail}`,
    `cluster_slots_fail:${fail}`,
    "cluster_known_nodes:0",
    "cluster_size:0",
    "cluster_current_epoch:1",
    "cluster_my_epoch:1",
  ].join("\r\n");
}

export function primaryReplicationInfo(offset: number, replicas: readonly string[]): string {
  const lines = ["# Replication", "role:master", `connected_slaves:${replicas.length}`];
  replicas.forEach((r, i) => {
    const c = r.lastIndexOf(":");
    lines.push(`slave${i}:ip=${r.slice(0, c)},port=${r.slice(c + 1)},state=online,offset=${offset},lag=0`);
  });
  lines.push(
    "master_failover_state:no-failover",
    "master_replid:0123456789abcdef0123456789abcdef01234567",
    `master_repl_offset:${offset}`,
  );
  return lines.join("\r\n");
}

export function replicaReplicationInfo(primary: string, offset: number, linkUp = true): string {
  const c = primary.lastIndexOf(":");
  return [
    "# Replication",
    "role:slave",
    `master_host:${primary.slice(0, c)}`,
    `master_port:${primary.slice(c + 1)}`,
    `master_link_status:${linkUp ? "up" : "down"}`,
    "master_sync_in_progress:0",
    `slave_repl_offset:${offset}`,
    `master_repl_offset:${offset}`,
  ].join("\r\n");
}

/** A healthy P x (1 + M) cluster over `zones`, every replica in a zone other than its primary's. */
export function synthesiseCluster(
  primaries: number,
  replicasPerPrimary: number,
  zones: readonly string[],
): SyntheticCluster {
  const ranges = splitSlots(primaries);
  const nodes: SyntheticNode[] = [];
  let idx = 0;
  const addr = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:6379`;
  for (let s = 0; s < primaries; s++) {
    nodes.push({
      id: syntheticNodeId(++idx),
      address: addr(idx),
      zone: zones[s % zones.length] as string,
      role: "primary",
      shard: s,
    });
  }
  for (let s = 0; s < primaries; s++) {
    for (let r = 0; r < replicasPerPrimary; r++) {
      nodes.push({
        id: syntheticNodeId(++idx),
        address: addr(idx),
        zone: zones[(s + 1 + r) % zones.length] as string,
        role: "replica",
        shard: s,
      });
    }
  }
  const primaryIds = nodes.filter((n) => n.role === "primary").map((n) => n.id);
  const primaryAddrs = nodes.filter((n) => n.role === "primary").map((n) => n.address);
  const seed = nodes[0] as SyntheticNode;
  const line = (n: SyntheticNode, extraFlags: string[] = []): string => {
    const flags = [...(n === seed ? ["myself"] : []), n.role === "primary" ? "master" : "slave", ...extraFlags].join(
      ",",
    );
    const range = ranges[n.shard];
    const slots = n.role === "primary" && range ? ` ${range.start}-${range.end}` : "";
    const master = n.role === "primary" ? "-" : (primaryIds[n.shard] as string);
    const [host, port] = n.address.split(":") as [string, string];
    return `${n.id} ${host}:${port}@1${port} ${flags} ${master} 0 1700000000000 ${n.shard + 1} connected${slots}`;
  };
  const text = nodes.map((n) => line(n)).join("\n") + "\n";
  const replicasByShard = new Map<number, string[]>();
  for (const n of nodes)
    if (n.role === "replica") replicasByShard.set(n.shard, [...(replicasByShard.get(n.shard) ?? []), n.address]);
  const offset = 123456;
  const info = syntheticClusterInfo();
  const captures: ClusterNodeCapture[] = nodes.map((n) => ({
    address: n.address,
    clusterInfo: info,
    clusterNodes: { self: line(n).replace(/ (master|slave)/, " myself,$1"), flagged: [], knownNodes: nodes.length },
    replicationInfo:
      n.role === "primary"
        ? primaryReplicationInfo(offset, replicasByShard.get(n.shard) ?? [])
        : replicaReplicationInfo(primaryAddrs[n.shard] as string, offset),
    ...(n.role === "primary" ? { dbsize: 1000 } : {}),
  }));
  return {
    capture: {
      seed: seed.address,
      seedAddress: seed.address,
      seedClusterNodes: text,
      seedClusterInfo: info,
      nodes: captures,
    },
    zones: new Map(nodes.map((n) => [n.address, n.zone])),
    nodes,
    line,
  };
}

/** A healthy primary with `replicas` replicas, primary in zones[0], replicas round-robin after it. */
export function synthesiseReplication(
  replicas: number,
  zones: readonly string[],
): { capture: ReplicationCapture; zones: Map<string, string>; replicas: string[] } {
  const primary = "10.0.0.1:6379";
  const addrs = Array.from({ length: replicas }, (_, i) => `10.0.1.${i + 1}:6379`);
  const offset = 5000;
  return {
    capture: {
      seed: primary,
      seedReplicationInfo: primaryReplicationInfo(offset, addrs),
      seedDbsize: 10,
      replicas: addrs.map((a) => ({ address: a, replicationInfo: replicaReplicationInfo(primary, offset) })),
      extraSeeds: [],
    },
    zones: new Map([primary, ...addrs].map((a, i) => [a, zones[i % zones.length] as string])),
    replicas: addrs,
  };
}
