/**
 * The ClusterBootstrap resource's implementation (loaded by its dynamic-provider shell, and
 * called directly by tests): discover the cluster-mode pods, build one ClusterMember per pod
 * (id = pod name, zone = its node's zone, endpoint and MEET address = pod IP), run the core's
 * AZ-aware `bootstrapCluster` through the chosen connector, and summarise the cluster as it is.
 * Idempotent: a healthy cluster of the same shape is left alone (`changed: false`); more
 * primaries on new pods scale the running cluster up (the core moves slots and keys).
 */
import type { ClusterMember } from "../../benchmarks/bootstrap/cluster-member.js";
import { bootstrapCluster } from "../../benchmarks/bootstrap/cluster-bootstrap.js";
import { endpointKey } from "../../benchmarks/topology/endpoint.js";
import { StaticZoneSource } from "../../benchmarks/topology/zones.js";
import { verifyTopology } from "../../benchmarks/verify/verify-topology.js";
import type { TopologyReport } from "../../benchmarks/verify/verify-types.js";
import { dynamicProtocol, int } from "../dynamic/dynamic-props.js";
import { kubeDeps, parseTargetInputs, podEndpoint, SECRET_INPUTS, usablePods, type KubeDeps, type KubeTargetInputs } from "./access.js";
import type { DiscoveredPod } from "./pod-discovery.js";
import { zoneMapForPods } from "./zone-source.js";

export interface ClusterBootstrapInputs extends KubeTargetInputs {
  /** Pods the selector must find (all ready, scheduled, in a zone). */
  expectedPods: number;
  primaries: number;
  replicasPerPrimary: number;
}

export interface ShardSummary {
  primary: { pod: string; zone: string | null; nodeId: string | null };
  replicas: { pod: string; zone: string | null }[];
  /** e.g. ["0-5460"]. */
  slotRanges: string[];
}

export interface PlanSummary {
  shards: ShardSummary[];
  primariesPerZone: Record<string, number>;
}

export interface ClusterBootstrapOutputs {
  /** The cluster as it stands after the bootstrap, by pod name. */
  plan: PlanSummary;
  /** False when the pods already formed a healthy cluster of this shape. */
  changed: boolean;
  /** Pod name -> cluster node id. */
  nodeIds: Record<string, string>;
  /** What the executor did, in order. */
  steps: string[];
}

/** Keys whose change re-runs the bootstrap; secrets (kubeconfig, password) are not among them. */
export const BOOTSTRAP_DIFF_KEYS = [
  "namespace", "selector", "expectedPods", "primaries", "replicasPerPrimary", "connector", "context", "headlessService",
] as const;

export function parseBootstrapInputs(p: Record<string, unknown>): ClusterBootstrapInputs {
  return {
    ...parseTargetInputs(p),
    expectedPods: int(p, "expectedPods", 1),
    primaries: int(p, "primaries", 1),
    replicasPerPrimary: int(p, "replicasPerPrimary", 0),
  };
}

export function memberFor(p: DiscoveredPod): ClusterMember {
  const e = podEndpoint(p);
  return { id: p.name, zone: p.zone ?? "", endpoint: e, meet: { ip: e.host, port: e.port, busPort: p.busPort } };
}

/** The report's shards by pod name (addresses are the pods' announced `ip:port`). */
export function summarise(report: TopologyReport, pods: readonly DiscoveredPod[]): PlanSummary {
  const byAddress = new Map(pods.map((p) => [endpointKey(podEndpoint(p)), p.name]));
  const pod = (address: string): string => byAddress.get(address) ?? address;
  return {
    shards: report.shards.map((s) => ({
      primary: { pod: pod(s.primary.address), zone: s.primary.zone ?? null, nodeId: s.primary.nodeId ?? null },
      replicas: s.replicas.map((r) => ({ pod: pod(r.address), zone: r.zone ?? null })),
      slotRanges: s.primary.slotRanges,
    })),
    primariesPerZone: report.primariesPerZone,
  };
}

export async function bootstrapOnKubernetes(i: ClusterBootstrapInputs, deps: KubeDeps = kubeDeps(i)): Promise<ClusterBootstrapOutputs> {
  const pods = await usablePods(i, deps, i.expectedPods);
  const connector = deps.connector(pods);
  try {
    const result = await bootstrapCluster({
      members: pods.map(memberFor),
      primaries: i.primaries,
      replicasPerPrimary: i.replicasPerPrimary,
      connector,
      timeoutMs: i.timeoutMs,
      password: i.password,
    });
    const report = await verifyTopology({
      mode: "cluster",
      seeds: pods.map(podEndpoint),
      connector,
      zones: new StaticZoneSource(zoneMapForPods(pods, i)),
      countKeys: false,
    });
    return { plan: summarise(report, pods), changed: result.changed, nodeIds: result.nodeIds, steps: result.steps };
  } finally {
    await connector.close();
  }
}

// --- the dynamic-provider protocol (called by components/dynamic/ts-module-provider.ts) ---

type Props = Record<string, unknown>;

/**
 * Refuses a change of shape the core cannot apply to a formed cluster, naming both shapes.
 * Adding primaries (with their new pods, same replicas per primary) is a scale-up the core does.
 */
export function checkNoScaling(olds: Props, news: Props): void {
  const shape = (p: Props): string => `${String(p.primaries)} primaries x ${String(p.replicasPerPrimary)} replicas (${String(p.expectedPods)} pods)`;
  const same = olds.primaries === news.primaries && olds.replicasPerPrimary === news.replicasPerPrimary && olds.expectedPods === news.expectedPods;
  const n = (v: unknown): number => (typeof v === "number" ? v : NaN);
  const scaleUp =
    olds.replicasPerPrimary === news.replicasPerPrimary && n(news.primaries) > n(olds.primaries) && n(news.expectedPods) > n(olds.expectedPods);
  if (!same && !scaleUp) {
    throw new Error(
      `scaling an existing cluster from ${shape(olds)} to ${shape(news)} is not supported yet: ` +
        "only adding primaries (with their new pods, the same replicas per primary) is",
    );
  }
}

export const { create, diff, update } = dynamicProtocol({
  parse: parseBootstrapInputs,
  run: (i) => bootstrapOnKubernetes(i),
  idOf: (p) => `${String(p.namespace)}/${String(p.selector)}`,
  diffKeys: BOOTSTRAP_DIFF_KEYS,
  secretKeys: SECRET_INPUTS,
  checkUpdate: checkNoScaling,
});
