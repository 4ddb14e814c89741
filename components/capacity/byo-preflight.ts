/**
 * What platform byo checks on the cluster you bring before the stack creates anything in it, so a
 * mistake is a preview error naming the key instead of a 10-minute await timeout: every zone of
 * `aws.zones` has a schedulable node the Valkey pods may use (their `byo.nodeSelector`, their
 * `byo.tolerations`, the hard zone spread), the StorageClass the volumes need exists (named, or the
 * cluster's default), and something enforces NetworkPolicy (else the stack's policies are only
 * paper: a warning). Whether those nodes hold the pods' requests is a warning, not an error: other
 * pods use them too and an autoscaler may add more. Pure: the facts come from stacks/byo-preflight.ts.
 */
import type { StackConfig } from "../../config/types.js";
import { ZONE_LABEL } from "../../vocabulary/labels.js";

export interface ByoNode {
  name: string;
  labels: Record<string, string>;
  /** The node's annotation keys (Cilium and Calico annotate every node they run on). */
  annotationKeys?: string[];
  taints: Array<{ key: string; value?: string; effect: string }>;
  unschedulable: boolean;
  allocatable: { cpuMillicores: number; memoryBytes: number };
}

export interface ByoClusterFacts {
  nodes: ByoNode[];
  storageClasses: Array<{ name: string; isDefault: boolean }>;
  /** DaemonSets as `namespace/name`, with their containers' names and arguments (to find a NetworkPolicy engine). */
  daemonSets: Array<{ name: string; containers: Array<{ name: string; args: string[] }> }>;
  /** CiliumNode objects in the cluster (Cilium's agent registers one per node, DaemonSet or not). @default 0 */
  ciliumNodes?: number;
}

export interface ByoPreflightResult {
  problems: string[];
  warnings: string[];
}

/** The annotation that marks a StorageClass as the cluster's default. */
export const DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class";

/** DaemonSet names of the NetworkPolicy engines this check knows, and what each is. */
const POLICY_ENGINES: Array<{ name: RegExp; what: string; enforces?: (args: string[]) => boolean }> = [
  { name: /(^|\/)cilium$/, what: "Cilium" },
  { name: /(^|\/)calico-node$/, what: "Calico" },
  { name: /(^|\/)antrea-agent$/, what: "Antrea" },
  { name: /(^|\/)kube-router$/, what: "kube-router" },
  { name: /(^|\/)weave-net$/, what: "Weave Net" },
  { name: /(^|\/)canal$/, what: "Canal" },
  // The Amazon VPC CNI enforces only with its network policy agent on (vpcCni enableNetworkPolicy).
  {
    name: /(^|\/)aws-node$/,
    what: "the Amazon VPC CNI's network policy agent",
    enforces: (args) => args.some((a) => /^--enable-network-policy=true$/.test(a)),
  },
];

/** Whether a node's taint is tolerated by `byo.tolerations` (Kubernetes' matching rules). */
export function tolerates(tolerations: StackConfig["byo"]["tolerations"], taint: ByoNode["taints"][number]): boolean {
  if (taint.effect === "PreferNoSchedule") return true;
  return tolerations.some(
    (t) =>
      (t.effect === undefined || t.effect === taint.effect) &&
      (t.key === undefined ? t.operator === "Exists" : t.key === taint.key) &&
      (t.operator === "Exists" || (t.value ?? "") === (taint.value ?? "")),
  );
}

/** The nodes a Valkey pod may be scheduled on (ignoring what already runs there). */
export function eligibleNodes(config: StackConfig, nodes: readonly ByoNode[]): ByoNode[] {
  const { nodeSelector, tolerations } = config.byo;
  return nodes.filter(
    (n) =>
      !n.unschedulable &&
      Object.entries(nodeSelector).every(([k, v]) => n.labels[k] === v) &&
      n.taints.every((t) => tolerates(tolerations, t)),
  );
}

function checkZones(config: StackConfig, facts: ByoClusterFacts, out: ByoPreflightResult): void {
  const eligible = eligibleNodes(config, facts.nodes);
  const zonesOfNodes = [...new Set(facts.nodes.map((n) => n.labels[ZONE_LABEL]).filter((z) => z !== undefined))];
  const { cpuMillicores, memoryBytes } = config.valkey.resourceAmounts.requests;
  const perZone = Math.ceil(config.valkey.pods / config.aws.zones.length);
  config.aws.zones.forEach((zone, i) => {
    const here = eligible.filter((n) => n.labels[ZONE_LABEL] === zone);
    if (here.length === 0) {
      const inZone = facts.nodes.filter((n) => n.labels[ZONE_LABEL] === zone).map((n) => n.name);
      out.problems.push(
        inZone.length === 0
          ? `aws.zones.${i}: no node of the cluster carries ${ZONE_LABEL}=${zone} (the nodes' zones: ${zonesOfNodes.join(", ") || "none"}); list the zones your nodes are in`
          : `aws.zones.${i}: no schedulable node in ${zone} matches byo.nodeSelector ${JSON.stringify(config.byo.nodeSelector)} and tolerates its taints with byo.tolerations (nodes there: ${inZone.join(", ")}); the hard zone spread would leave a pod Pending`,
      );
      return;
    }
    const cpu = here.reduce((a, n) => a + n.allocatable.cpuMillicores, 0);
    const memory = here.reduce((a, n) => a + n.allocatable.memoryBytes, 0);
    if (cpu < perZone * cpuMillicores || memory < perZone * memoryBytes)
      out.warnings.push(
        `${zone}: its ${here.length} eligible node(s) have ${cpu}m CPU and ${Math.floor(memory / 2 ** 20)}Mi allocatable in all, less than the ${perZone} Valkey pod(s) the zone spread puts there ask (valkey.resources.requests: ${perZone * cpuMillicores}m, ${Math.floor((perZone * memoryBytes) / 2 ** 20)}Mi); without an autoscaler adding nodes, a pod stays Pending`,
      );
  });
}

function checkStorageClass(config: StackConfig, facts: ByoClusterFacts, out: ByoPreflightResult): void {
  const wanted = config.valkey.persistence.storageClass;
  const names = facts.storageClasses.map((c) => c.name);
  if (wanted !== undefined) {
    if (!names.includes(wanted))
      out.problems.push(
        `byo.storageClass: the cluster has no StorageClass "${wanted}" (it has: ${names.join(", ") || "none"}); the volumes would stay Pending`,
      );
    return;
  }
  if (!facts.storageClasses.some((c) => c.isDefault))
    out.problems.push(
      `byo.storageClass: unset, and the cluster has no default StorageClass (it has: ${names.join(", ") || "none"}; new EKS clusters mark none default); name one, or annotate one ${DEFAULT_CLASS_ANNOTATION}: "true"`,
    );
}

/** Node annotation prefixes of engines that may run outside a DaemonSet (an agent the node's own init starts). */
const POLICY_ENGINE_ANNOTATIONS = ["network.cilium.io/", "io.cilium.", "projectcalico.org/"];

function checkNetworkPolicy(facts: ByoClusterFacts, out: ByoPreflightResult): void {
  const byDaemonSet = facts.daemonSets.some((d) => {
    const engine = POLICY_ENGINES.find((e) => e.name.test(d.name));
    return engine !== undefined && (engine.enforces?.(d.containers.flatMap((c) => c.args)) ?? true);
  });
  const byAnnotation = facts.nodes.some((n) =>
    (n.annotationKeys ?? []).some((k) => POLICY_ENGINE_ANNOTATIONS.some((p) => k.startsWith(p))),
  );
  const found = byDaemonSet || byAnnotation || (facts.ciliumNodes ?? 0) > 0;
  if (!found)
    out.warnings.push(
      `no NetworkPolicy engine found among the cluster's DaemonSets (${POLICY_ENGINES.map((e) => e.what).join(", ")}) its nodes' annotations (Cilium's, Calico's) or CiliumNode objects: the stack's NetworkPolicies (who may reach 6379, 16379, 26379 and the metrics ports) would not be enforced`,
    );
}

/** Every check on a byo cluster's facts; no node check with a managed NodePool or `byo.nodeChecks` false. */
export function checkByoCluster(config: StackConfig, facts: ByoClusterFacts): ByoPreflightResult {
  const out: ByoPreflightResult = { problems: [], warnings: [] };
  if (!config.byo.manageKarpenterNodePool && config.byo.nodeChecks) checkZones(config, facts, out);
  checkStorageClass(config, facts, out);
  checkNetworkPolicy(facts, out);
  return out;
}
