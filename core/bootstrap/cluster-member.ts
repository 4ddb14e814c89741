/**
 * A node the bootstrap executor works on: who it is, where it runs, how the executor reaches
 * it (through a Connector) and how the other members reach it over the cluster bus (the
 * address given to CLUSTER MEET). Locally those two addresses are the same; on Kubernetes the
 * executor may reach a pod through a port-forward while members meet on the pod IP.
 */
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";

export interface ClusterMember {
  /** Stable id used by the planner and in messages (e.g. `host:port` or a pod name). */
  readonly id: string;
  /** Availability zone the node runs in. */
  readonly zone: string;
  /** The endpoint handed to the Connector to open a client to this node. */
  readonly endpoint: NodeEndpoint;
  /** The address members use for CLUSTER MEET: an IP, the client port and the cluster bus port. */
  readonly meet: { readonly ip: string; readonly port: number; readonly busPort: number };
}

/** Throws a clear error when members repeat an id or a MEET address. */
export function checkMembers(members: readonly ClusterMember[]): void {
  const ids = new Set<string>();
  const meets = new Set<string>();
  for (const m of members) {
    if (ids.has(m.id)) throw new Error(`cluster member ${m.id} is listed twice`);
    ids.add(m.id);
    const meet = `${m.meet.ip}:${m.meet.port}@${m.meet.busPort}`;
    if (meets.has(meet)) throw new Error(`cluster members share the MEET address ${meet} (${m.id})`);
    meets.add(meet);
    if (!/^[0-9a-fA-F:.]+$/.test(m.meet.ip)) {
      throw new Error(`cluster member ${m.id}: CLUSTER MEET needs an IP address, got '${m.meet.ip}'`);
    }
  }
}
