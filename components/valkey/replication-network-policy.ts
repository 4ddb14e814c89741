/**
 * NetworkPolicies of a Sentinel-managed replication release, by the same rules as
 * network-policy.ts (clients are pods labelled CLIENT_LABEL="true" in the release's own
 * namespace; the `direct` checks connector comes from `checkSourceCidrs`; egress is limited):
 *
 * - data members, ingress 6379 from clients, the other members (replication), the Sentinels
 *   (monitoring, reconfiguration), HAProxy (health checks and proxied traffic) and the checks;
 *   egress DNS, members 6379, Sentinels 26379 (the start decision and preStop ask them);
 * - Sentinels, ingress 26379 from clients, members, the other Sentinels, HAProxy and the checks (the
 *   topology check discovers the primary through them); egress DNS, members 6379, Sentinels 26379;
 * - HAProxy, ingress 6379 (write) and 6380 (read) from clients; egress DNS, members 6379 and
 *   Sentinels 26379 (a readiness/quorum check may ask them who the primary is);
 * - with `metrics.enabled`, ingress from `metrics.scrapeFrom` only to the members' and Sentinels'
 *   exporter port and to HAProxy's status port (its `/metrics`).
 */
import { CLIENT_LABEL, releaseLabels } from "../shared.js";
import { VALKEY_PORT } from "../../vocabulary/ports.js";
import { HAPROXY_READ_PORT, HAPROXY_STATUS_PORT, HAPROXY_WRITE_PORT } from "./haproxy-manifests.js";
import type { NetworkPolicy } from "./k8s-types.js";
import { scrapeIngress, type ScrapeSource } from "./metrics-pod.js";
import { DNS_EGRESS } from "./network-policy.js";
import { SENTINEL_PORT } from "../../vocabulary/ports.js";

export interface ReplicationPolicyOptions {
  namespace: string;
  release: string;
  names: { members: string; sentinels: string; haproxy: string };
  members: Record<string, string>;
  sentinels: Record<string, string>;
  haproxy: Record<string, string>;
  /** CIDRs the `direct` checks connector connects from. @default [] */
  checkSourceCidrs?: string[];
  /** The metrics scrape: who may reach the exporters' port and HAProxy's status port. @default undefined (off) */
  scrape?: { source: ScrapeSource; port: number };
}

type Spec = NonNullable<NetworkPolicy["spec"]>;

export function buildReplicationNetworkPolicies(o: ReplicationPolicyOptions): {
  members: NetworkPolicy;
  sentinels: NetworkPolicy;
  haproxy: NetworkPolicy;
} {
  const pods = (labels: Record<string, string>): { podSelector: { matchLabels: Record<string, string> } } => ({
    podSelector: { matchLabels: { ...labels } },
  });
  // No namespaceSelector: a podSelector alone selects pods in the policy's own namespace.
  const clients = pods({ [CLIENT_LABEL]: "true" });
  const checks = (o.checkSourceCidrs ?? []).map((cidr) => ({ ipBlock: { cidr } }));
  const tcp = (port: number): { protocol: string; port: number } => ({ protocol: "TCP", port });
  const dns = { ...DNS_EGRESS, ports: [...DNS_EGRESS.ports] };
  const toMembers = { to: [pods(o.members)], ports: [tcp(VALKEY_PORT)] };
  const toSentinels = { to: [pods(o.sentinels)], ports: [tcp(SENTINEL_PORT)] };
  const policy = (
    name: string,
    selector: Record<string, string>,
    ingress: Spec["ingress"],
    egress: Spec["egress"],
  ): NetworkPolicy => ({
    metadata: { name, namespace: o.namespace, labels: releaseLabels(o.release) },
    spec: { podSelector: { matchLabels: { ...selector } }, policyTypes: ["Ingress", "Egress"], ingress, egress },
  });
  // The members' and Sentinels' exporters listen on scrape.port; HAProxy serves /metrics on its status port.
  const scrape = (port?: number): NonNullable<Spec["ingress"]> =>
    o.scrape === undefined ? [] : [scrapeIngress(o.scrape.source, port ?? o.scrape.port)];
  return {
    members: policy(
      o.names.members,
      o.members,
      [
        { from: [clients, pods(o.members), pods(o.sentinels), pods(o.haproxy), ...checks], ports: [tcp(VALKEY_PORT)] },
        ...scrape(),
      ],
      [dns, toMembers, toSentinels],
    ),
    sentinels: policy(
      o.names.sentinels,
      o.sentinels,
      [
        {
          from: [clients, pods(o.members), pods(o.sentinels), pods(o.haproxy), ...checks],
          ports: [tcp(SENTINEL_PORT)],
        },
        ...scrape(),
      ],
      [dns, toMembers, toSentinels],
    ),
    haproxy: policy(
      o.names.haproxy,
      o.haproxy,
      [{ from: [clients], ports: [tcp(HAPROXY_WRITE_PORT), tcp(HAPROXY_READ_PORT)] }, ...scrape(HAPROXY_STATUS_PORT)],
      [dns, toMembers, toSentinels],
    ),
  };
}
