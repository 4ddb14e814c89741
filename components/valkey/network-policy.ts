/**
 * The NetworkPolicies of a Valkey release and of its benchmark pod (enforced on EKS by the VPC
 * CNI's network policy agent, which EksCluster turns on).
 *
 * Valkey pods (the release's `podSelector`):
 * - ingress 6379 from pods labelled CLIENT_LABEL="true" in the release's own namespace, from the
 *   other members (replication, cluster MIGRATE/failover), and from `checkSourceCidrs` (the
 *   `direct` checks connector's hosts); the default `port-forward` connector needs no rule: it
 *   reaches the pod through the kubelet inside the pod's own network namespace;
 * - ingress 16379 (cluster bus, cluster mode) from members only;
 * - with `metrics.enabled`, ingress to the exporter's port from `metrics.scrapeFrom` only;
 * - egress only to DNS (port 53, any resolver) and to the members on 6379 (+16379 in cluster
 *   mode). Valkey pods do not call the Kubernetes API (no service account token). There is no
 *   in-cluster Sentinel: replication failover is driven from outside the pods.
 *
 * Benchmark pod: no ingress at all; egress to DNS and, on 6379 only, to the pods it dials: the
 * members in cluster mode, the HAProxy pods behind the write Service in replication mode.
 */
import { CLIENT_LABEL, releaseLabels } from "../shared.js";
import { VALKEY_BUS_PORT, VALKEY_PORT } from "../../vocabulary/ports.js";
import type { NetworkPolicy } from "./k8s-types.js";
import { scrapeIngress, type ScrapeSource } from "./metrics-pod.js";

type Peer = { podSelector?: { matchLabels: Record<string, string> }; ipBlock?: { cidr: string } };
type Port = { protocol: "TCP" | "UDP"; port: number };

/** DNS, to whichever resolver the pod is given (CoreDNS pods, or a node-local cache). */
export const DNS_EGRESS: { ports: Port[] } = {
  ports: [
    { protocol: "UDP", port: 53 },
    { protocol: "TCP", port: 53 },
  ],
};

/** A NetworkPolicy with its spec always set. */
export type BuiltNetworkPolicy = NetworkPolicy & {
  metadata: NonNullable<NetworkPolicy["metadata"]>;
  spec: NonNullable<NetworkPolicy["spec"]>;
};

const CIDR_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

export interface NetworkPolicyOptions {
  name: string;
  namespace: string;
  release: string;
  /** The release's pods: what the policy protects and what counts as a member. */
  podSelector: Record<string, string>;
  /** Add the cluster-bus rules. @default false */
  clusterBus?: boolean;
  /** CIDRs the `direct` checks connector connects from (port 6379 only). @default [] */
  checkSourceCidrs?: string[];
  /** The metrics scrape: who may reach the exporter's port. @default undefined (no rule: metrics off) */
  scrape?: { source: ScrapeSource; port: number };
}

function checkCidrs(cidrs: string[]): void {
  for (const cidr of cidrs) {
    const m = CIDR_RE.exec(cidr);
    if (!m || m.slice(1, 5).some((o) => Number(o) > 255) || Number(m[5]) > 32)
      throw new Error(`check source "${cidr}" is not an IPv4 CIDR such as 10.0.0.0/16`);
  }
}

export function buildNetworkPolicy(o: NetworkPolicyOptions): BuiltNetworkPolicy {
  const cidrs = o.checkSourceCidrs ?? [];
  checkCidrs(cidrs);
  const members: Peer = { podSelector: { matchLabels: { ...o.podSelector } } };
  // No namespaceSelector: a podSelector alone selects pods in the policy's own namespace.
  const clients: Peer = { podSelector: { matchLabels: { [CLIENT_LABEL]: "true" } } };
  const checks: Peer[] = cidrs.map((cidr) => ({ ipBlock: { cidr } }));
  const memberPorts: Port[] = [
    { protocol: "TCP", port: VALKEY_PORT },
    ...(o.clusterBus ? [{ protocol: "TCP" as const, port: VALKEY_BUS_PORT }] : []),
  ];
  const ingress: NonNullable<NetworkPolicy["spec"]>["ingress"] = [
    { from: [clients, members, ...checks], ports: [{ protocol: "TCP", port: VALKEY_PORT }] },
  ];
  if (o.clusterBus) ingress.push({ from: [members], ports: [{ protocol: "TCP", port: VALKEY_BUS_PORT }] });
  if (o.scrape !== undefined) ingress.push(scrapeIngress(o.scrape.source, o.scrape.port));
  return {
    metadata: { name: o.name, namespace: o.namespace, labels: releaseLabels(o.release) },
    spec: {
      podSelector: { matchLabels: { ...o.podSelector } },
      policyTypes: ["Ingress", "Egress"],
      ingress,
      egress: [
        { ...DNS_EGRESS, ports: [...DNS_EGRESS.ports] },
        { to: [members], ports: memberPorts },
      ],
    },
  };
}

export interface BenchmarkNetworkPolicyOptions {
  name: string;
  namespace: string;
  /** Labels of the benchmark pod (benchmarkPodLabels). */
  podLabels: Record<string, string>;
  /**
   * The pods it dials: the members (cluster mode); the HAProxy endpoint pods (replication mode), and the members too
   * when it runs a mix (it reads every member's INFO commandstats).
   */
  valkeyPodSelectors: readonly Record<string, string>[];
  labels?: Record<string, string>;
}

/** The benchmark pod: nothing may connect to it; it may reach DNS and the selected pods' 6379 only. */
export function buildBenchmarkNetworkPolicy(o: BenchmarkNetworkPolicyOptions): BuiltNetworkPolicy {
  const name = o.podLabels["app.kubernetes.io/name"];
  const component = o.podLabels["app.kubernetes.io/component"];
  if (name === undefined)
    throw new Error("benchmark NetworkPolicy: podLabels must name the benchmark pod (app.kubernetes.io/name)");
  const selector = {
    "app.kubernetes.io/name": name,
    ...(component === undefined ? {} : { "app.kubernetes.io/component": component }),
  };
  return {
    metadata: { name: o.name, namespace: o.namespace, ...(o.labels ? { labels: { ...o.labels } } : {}) },
    spec: {
      podSelector: { matchLabels: selector },
      policyTypes: ["Ingress", "Egress"],
      ingress: [],
      egress: [
        { ...DNS_EGRESS, ports: [...DNS_EGRESS.ports] },
        {
          to: o.valkeyPodSelectors.map((labels) => ({ podSelector: { matchLabels: { ...labels } } })),
          ports: [{ protocol: "TCP", port: VALKEY_PORT }],
        },
      ],
    },
  };
}
