/**
 * The node estimate both the quota preflight (components/capacity/preflight.ts) and the cost
 * (stacks/cost.ts) use: the stack's pods (pod-inventory.ts) packed by bin-packing.ts.
 *
 * - `least`: kube-scheduler's view (preferences relaxed), each node the smallest permitted type
 *   that fits the pod it is launched for (benchmarks/cost/cost-model.ts estimateInstanceType);
 * - `worst`: Karpenter's view (preferences as required), every node the same permitted type,
 *   the type that needs the most vCPUs (types that cannot hold some pod are skipped): the quota's ceiling;
 * - `karpenter`: Karpenter's plan as its scheduler makes it (largest pods first, a pod joining a node
 *   launched for the same phase by growing its type), each node the smallest permitted type that holds
 *   its pods: what Karpenter launches (measured: tests/e2e/support/karpenter-decides.ts).
 * Under Auto Mode, the pods EKS add-ons put on the built-in system pool (none with the add-on
 * options of aws/auto-mode.ts) are packed onto nodes of the smallest fitting permitted type.
 * Pure.
 */
import { allocatableFor, type Allocatable } from "../../config/instance-types.js";
import type { StackConfig } from "../../config/types.js";
import { estimateInstanceType } from "../../benchmarks/cost/cost-model.js";
import { autoModeSystemPods, buildAutoModeOptions, buildNetworkAddonOptions } from "../aws/auto-mode.js";
import { packPods, type PackedNode, type Packing } from "./bin-packing.js";
import { systemPoolPods, valkeyPoolPods } from "./pod-inventory.js";

export interface NodeEstimate {
  least: Packing;
  worst: Packing;
  /**
   * Karpenter's plan: preferences as required, a pod joining a node launched for the same phase when a bigger
   * permitted type holds them together (bin-packing.ts `inFlight`). The nodes Karpenter launches: what the EC2
   * cost counts where Karpenter launches the pool's nodes.
   */
  karpenter: Packing;
  /** Auto Mode's system pool (empty without Auto Mode). */
  autoModeSystem: Packing;
}

/** vCPUs of an instance size: medium 1, large 2, xlarge 4, Nxlarge 4N; metal counted as 64. */
export function vcpusOf(instanceType: string): number {
  const size = instanceType.split(".")[1] ?? "";
  if (size === "medium") return 1;
  if (size === "large") return 2;
  if (size === "xlarge") return 4;
  const n = /^(\d+)xlarge$/.exec(size);
  if (n) return 4 * Number(n[1]);
  return 64;
}

export const vcpusOfNodes = (nodes: readonly Pick<PackedNode, "type">[]): number =>
  nodes.reduce((sum, n) => sum + vcpusOf(n.type), 0);

const only = (type: string) => (r: Allocatable) => {
  const a = allocatableFor(type);
  return a !== undefined && a.cpuMillicores >= r.cpuMillicores && a.memoryBytes >= r.memoryBytes ? type : undefined;
};

export function estimateNodes(config: StackConfig): NodeEstimate {
  const zones = config.aws.zones;
  const permitted = config.karpenter.nodePool.permittedInstanceTypes;
  const groups = valkeyPoolPods(config);
  const smallest = (r: Allocatable) => estimateInstanceType(permitted, r);
  const least = packPods(groups, { zones, typeFor: smallest, preferences: "relaxed" });
  const candidates = permitted
    .map((t) => packPods(groups, { zones, typeFor: only(t), preferences: "strict" }))
    .filter((p) => p.unschedulable.length === 0);
  const worst = candidates.reduce<Packing>((w, p) => (vcpusOfNodes(p.nodes) > vcpusOfNodes(w.nodes) ? p : w), least);
  const karpenter = packPods(groups, { zones, typeFor: smallest, preferences: "strict", inFlight: true });
  const system =
    config.platform === "eks" && config.eks.autoMode
      ? autoModeSystemPods({ autoMode: buildAutoModeOptions(), ...buildNetworkAddonOptions(true) })
      : [];
  return {
    least,
    worst,
    karpenter,
    autoModeSystem: packPods(systemPoolPods(system), { zones, typeFor: smallest, preferences: "relaxed" }),
  };
}

/** "r7g.large × 6 (valkey-0, …)" lines for messages: nodes by type and phase. */
export function describeNodes(nodes: readonly PackedNode[]): string {
  const counts = new Map<string, number>();
  for (const n of nodes) counts.set(n.type, (counts.get(n.type) ?? 0) + 1);
  return [...counts].map(([type, count]) => `${count} × ${type}`).join(" + ") || "no nodes";
}
