/**
 * Ingress to the Valkey pods: 6379 from pods labelled CLIENT_LABEL="true" (any namespace) and
 * from the release's own pods; in cluster mode the bus port 16379 from members only.
 */
import { CLIENT_LABEL, VALKEY_BUS_PORT, VALKEY_PORT, releaseLabels } from "../shared.js";
import type { NetworkPolicy } from "./k8s-types.js";

export interface NetworkPolicyOptions {
  name: string;
  namespace: string;
  release: string;
  /** The release's pods: what the policy protects and what counts as a member. */
  podSelector: Record<string, string>;
  /** Add the cluster-bus rule. @default false */
  clusterBus?: boolean;
}

export function buildNetworkPolicy(o: NetworkPolicyOptions): NetworkPolicy {
  const members = { podSelector: { matchLabels: { ...o.podSelector } } };
  const clients = { namespaceSelector: {}, podSelector: { matchLabels: { [CLIENT_LABEL]: "true" } } };
  const ingress = [{ from: [clients, members], ports: [{ protocol: "TCP", port: VALKEY_PORT }] }];
  if (o.clusterBus) ingress.push({ from: [members], ports: [{ protocol: "TCP", port: VALKEY_BUS_PORT }] });
  return {
    metadata: { name: o.name, namespace: o.namespace, labels: releaseLabels(o.release) },
    spec: { podSelector: { matchLabels: { ...o.podSelector } }, policyTypes: ["Ingress"], ingress },
  };
}
