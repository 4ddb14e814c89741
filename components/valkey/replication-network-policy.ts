/**
 * Ingress of a Sentinel-managed replication release (Ingress policies only; egress is open):
 *
 * - data members, 6379: from labelled clients (Sentinel-aware clients connect to the primary
 *   the Sentinels name), from the other members (replication), from the Sentinels (monitoring,
 *   reconfiguration) and from the HAProxy pods (health checks and proxied traffic);
 * - Sentinels, 26379: from labelled clients, from the members (their start decision and
 *   preStop ask the Sentinels) and from the other Sentinels;
 * - HAProxy, 6379 (write) and 6380 (read): from labelled clients.
 */
import { CLIENT_LABEL, VALKEY_PORT, releaseLabels } from "../shared.js";
import { HAPROXY_READ_PORT, HAPROXY_WRITE_PORT } from "./haproxy-manifests.js";
import type { NetworkPolicy } from "./k8s-types.js";
import { SENTINEL_PORT } from "./sentinel-manifests.js";

export interface ReplicationPolicyOptions {
  namespace: string;
  release: string;
  names: { members: string; sentinels: string; haproxy: string };
  members: Record<string, string>;
  sentinels: Record<string, string>;
  haproxy: Record<string, string>;
}

export function buildReplicationNetworkPolicies(o: ReplicationPolicyOptions): { members: NetworkPolicy; sentinels: NetworkPolicy; haproxy: NetworkPolicy } {
  const pods = (labels: Record<string, string>): { podSelector: { matchLabels: Record<string, string> } } => ({ podSelector: { matchLabels: { ...labels } } });
  const clients = { namespaceSelector: {}, podSelector: { matchLabels: { [CLIENT_LABEL]: "true" } } };
  const tcp = (port: number): { protocol: string; port: number } => ({ protocol: "TCP", port });
  const policy = (name: string, selector: Record<string, string>, ingress: NonNullable<NetworkPolicy["spec"]>["ingress"]): NetworkPolicy => ({
    metadata: { name, namespace: o.namespace, labels: releaseLabels(o.release) },
    spec: { podSelector: { matchLabels: { ...selector } }, policyTypes: ["Ingress"], ingress },
  });
  return {
    members: policy(o.names.members, o.members, [{ from: [clients, pods(o.members), pods(o.sentinels), pods(o.haproxy)], ports: [tcp(VALKEY_PORT)] }]),
    sentinels: policy(o.names.sentinels, o.sentinels, [{ from: [clients, pods(o.members), pods(o.sentinels)], ports: [tcp(SENTINEL_PORT)] }]),
    haproxy: policy(o.names.haproxy, o.haproxy, [{ from: [clients], ports: [tcp(HAPROXY_WRITE_PORT), tcp(HAPROXY_READ_PORT)] }]),
  };
}
