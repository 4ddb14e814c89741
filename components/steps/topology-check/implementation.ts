/**
 * The TopologyCheck resource's implementation (loaded by its dynamic-provider shell, and called
 * directly by tests): discover the release's pods, run the core's `verifyTopology` through the
 * chosen connector with zones from pod -> node -> `topology.kubernetes.io/zone`, and either
 * return a JSON-safe report or throw an error listing the failure codes and the readable table.
 */
import { formatTopologyReport } from "../../../benchmarks/verify/format-report.js";
import { verifyTopology } from "../../../benchmarks/verify/verify-topology.js";
import type { TopologyReport } from "../../../benchmarks/verify/verify-types.js";
import type { DiscoveredPod } from "../../kubernetes/pod-discovery.js";
import { KubernetesZoneSource } from "../../kubernetes/zone-source.js";
import { ROLE_LABEL } from "../../shared.js";
import { kubeDeps, podEndpoint, usablePods, type KubeDeps } from "../kit/kube-access.js";
import { dynamicProtocol, jsonSafe } from "../kit/protocol.js";
import { checkFields, type TopologyCheckInputs } from "./inputs.js";

export { parseCheckInputs, type TopologyCheckInputs } from "./inputs.js";

/** The report as plain JSON (no undefined fields): what the stack outputs carry. */
export interface TopologyCheckReport {
  ok: boolean;
  mode: "cluster" | "replication";
  failures: { code: string; message: string; node?: string }[];
  shards: {
    primary: { address: string; zone: string | null; slotRanges: string[]; slotCount: number; keys: number | null };
    replicas: { address: string; zone: string | null; crossAz: boolean; linkUp: boolean }[];
  }[];
  primariesPerZone: Record<string, number>;
  nodeCount: number;
}

export interface TopologyCheckOutputs {
  report: TopologyCheckReport;
  /** The readable table (formatTopologyReport). */
  table: string;
}

export class TopologyCheckError extends Error {
  constructor(readonly report: TopologyReport) {
    const codes = [...new Set(report.failures.map((f) => f.code))].join(", ");
    super(`topology check failed (${report.mode} mode): ${codes}\n${formatTopologyReport(report)}`);
    this.name = "TopologyCheckError";
  }
}

export function toCheckReport(r: TopologyReport): TopologyCheckReport {
  return jsonSafe({
    ok: r.ok,
    mode: r.mode,
    failures: r.failures,
    shards: r.shards.map((s) => ({
      primary: { address: s.primary.address, zone: s.primary.zone ?? null, slotRanges: s.primary.slotRanges, slotCount: s.primary.slotCount, keys: s.primary.keys ?? null },
      replicas: s.replicas.map((x) => ({ address: x.address, zone: x.zone ?? null, crossAz: x.crossAz, linkUp: x.linkUp })),
    })),
    primariesPerZone: r.primariesPerZone,
    nodeCount: r.nodeCount,
  });
}

/** Cluster mode: every pod (discovery starts at the first that answers). Replication: the primary. */
export function seedPods(mode: "cluster" | "replication", pods: readonly DiscoveredPod[]): DiscoveredPod[] {
  if (mode === "cluster") return [...pods];
  const primaries = pods.filter((p) => p.labels[ROLE_LABEL] === "primary");
  return primaries.length > 0 ? primaries : pods.slice(0, 1);
}

export async function checkTopologyOnKubernetes(i: TopologyCheckInputs, deps: KubeDeps = kubeDeps(i)): Promise<TopologyCheckOutputs> {
  const pods = await usablePods(i, deps);
  const connector = deps.connector(pods);
  try {
    const report = await verifyTopology({
      mode: i.mode,
      seeds: seedPods(i.mode, pods).map(podEndpoint),
      connector,
      zones: new KubernetesZoneSource(deps.podApi, { namespace: i.namespace, selector: i.selector, portsOf: deps.portsOf, headlessService: i.headlessService }),
      expect: i.expect ?? {},
      replicaLagBytes: i.replicaLagBytes,
      countKeys: i.countKeys,
    });
    if (!report.ok) throw new TopologyCheckError(report);
    return { report: toCheckReport(report), table: formatTopologyReport(report) };
  } finally {
    await connector.close();
  }
}

// --- the dynamic-provider protocol (called by ../kit/ts-module-provider.ts) ---

export const { check, create, diff, update } = dynamicProtocol({
  fields: checkFields,
  run: (i) => checkTopologyOnKubernetes(i),
  idOf: (p) => `${String(p.namespace)}/${String(p.selector)}/${String(p.mode)}`,
});
