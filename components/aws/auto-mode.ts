/**
 * EKS Auto Mode (`eks.autoMode: true`): the pulumi-eks `autoMode` options, and the Valkey pool
 * as Auto Mode objects — a `NodePool` (karpenter.sh/v1, run by the Karpenter EKS operates) on our
 * own `NodeClass` (eks.amazonaws.com/v1) — plus the StorageClass on Auto Mode's EBS provisioner.
 * Pure: plain config in, plain manifests out.
 */
import type * as eks from "@pulumi/eks";
import type * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import type { KarpenterConfig } from "../../config/types.js";
import { GP3_STORAGE_CLASS, VALKEY_NODE_POOL } from "../shared.js";
import { buildValkeyNodePool, type NodeSelectorRequirement } from "./karpenter-manifests.js";
import { DISCOVERY_TAG_KEY } from "./vpc.js";

/** Auto Mode's built-in EBS CSI provisioner (not the add-on's `ebs.csi.aws.com`). */
export const AUTO_MODE_EBS_PROVISIONER = "ebs.csi.eks.amazonaws.com";
/** The access policy a custom NodeClass's node role needs (access entry type EC2). */
export const AUTO_NODE_ACCESS_POLICY = "AmazonEKSAutoNodePolicy";
/** Managed policies of a custom NodeClass's node role (as the role pulumi-eks creates for Auto Mode). */
export const AUTO_NODE_POLICY_NAMES = [
  "AmazonEKSWorkerNodeMinimalPolicy",
  "AmazonEC2ContainerRegistryPullOnly",
] as const;
/**
 * Auto Mode replaces every node after at most 21 days (336h by default); a NodePool may not ask
 * for longer. 20 days leaves EKS's own deadline unreached, so the replacement follows our budget.
 */
export const AUTO_MODE_EXPIRE_AFTER = "480h";

/**
 * pulumi-eks `autoMode`: EKS runs Karpenter, the VPC CNI, kube-proxy, CoreDNS, the EBS CSI driver
 * and the Pod Identity agent. Only the built-in `system` pool stays on (it starts nodes only for
 * pods tolerating CriticalAddonsOnly); `general-purpose` is off, Valkey gets its own pool.
 */
export function buildAutoModeOptions(): NonNullable<eks.ClusterArgs["autoMode"]> {
  return { enabled: true, createNodeRole: true, computeConfig: { nodePools: ["system"] } };
}

/**
 * The pulumi-eks add-on options: which of the VPC CNI and CoreDNS add-ons pulumi-eks installs.
 *
 * Without Auto Mode, NetworkPolicy is enforced only when the VPC CNI's network policy agent is
 * on: pulumi-eks installs the vpc-cni managed add-on (not the default self-managed one) with it on.
 *
 * In Auto Mode, "cluster infrastructure managed by AWS includes many Kubernetes capabilities as
 * core components, as opposed to add-ons, such as ... pod and service networking, ... cluster
 * DNS" (EKS user guide, https://docs.aws.amazon.com/eks/latest/userguide/automode.html), and
 * "configuration options for the previous AWS VPC CNI will not apply to EKS Auto Mode"
 * (https://docs.aws.amazon.com/eks/latest/userguide/auto-networking.html); network policy is
 * turned on by the `amazon-vpc-cni` ConfigMap (buildAutoModeNetworkPolicyConfigMap). pulumi-eks
 * v4.3.0 (nodejs/eks/cluster/cluster.ts) still installs the CoreDNS add-on in Auto Mode unless
 * `corednsAddonOptions.enabled` is false (its pods would make the built-in `system` pool launch
 * nodes: they tolerate CriticalAddonsOnly), and installs the VPC CNI add-on whenever
 * `useDefaultVpcCni` is false, whose `amazon-vpc-cni` ConfigMap is the one we create. Both off.
 */
export function buildNetworkAddonOptions(
  autoMode: boolean,
  versions?: { vpcCni: pulumi.Input<string>; kubeProxy: pulumi.Input<string> },
): Pick<eks.ClusterArgs, "useDefaultVpcCni" | "vpcCniOptions" | "corednsAddonOptions" | "kubeProxyAddonOptions"> {
  if (autoMode) return { useDefaultVpcCni: true, corednsAddonOptions: { enabled: false } };
  // CoreDNS here is the stack's own managed add-on (EksCluster, after the system node group):
  // pulumi-eks would create it inside the cluster component, before any node exists to run it.
  // The VPC CNI and kube-proxy at their stored versions (AddonPins), not pulumi-eks's most recent.
  return {
    useDefaultVpcCni: false,
    vpcCniOptions: {
      enableNetworkPolicy: true,
      ...(versions === undefined ? {} : { addonVersion: versions.vpcCni }),
    },
    corednsAddonOptions: { enabled: false },
    ...(versions === undefined ? {} : { kubeProxyAddonOptions: { version: versions.kubeProxy } }),
  };
}

/**
 * The in-cluster add-ons pulumi-eks v4.3.0 creates for these args (its cluster.ts decisions, for a cluster without a
 * default node group or Fargate).
 */
export function pulumiEksAddons(
  args: Pick<eks.ClusterArgs, "autoMode" | "useDefaultVpcCni" | "corednsAddonOptions" | "kubeProxyAddonOptions">,
): {
  vpcCni: boolean;
  coredns: boolean;
  kubeProxy: boolean;
} {
  const auto = args.autoMode?.enabled === true;
  return {
    vpcCni: args.useDefaultVpcCni !== undefined ? !args.useDefaultVpcCni : !auto,
    coredns: args.corednsAddonOptions?.enabled === true || (auto && (args.corednsAddonOptions?.enabled ?? true)),
    kubeProxy: args.kubeProxyAddonOptions?.enabled ?? !auto,
  };
}

/** A pod the EKS add-ons run on Auto Mode's built-in `system` pool, by its default requests. */
export interface SystemPod {
  name: string;
  cpuMillicores: number;
  memoryBytes: number;
}

/**
 * What the add-ons pulumi-eks installs put on Auto Mode's `system` pool: the CoreDNS add-on's two
 * replicas at its default 100m / 70Mi each when it is installed; nothing else (the VPC CNI and
 * kube-proxy run as DaemonSets, on nodes that exist anyway). [] with {@link buildNetworkAddonOptions}.
 */
export function autoModeSystemPods(args: Parameters<typeof pulumiEksAddons>[0]): SystemPod[] {
  if (args.autoMode?.enabled !== true || !pulumiEksAddons(args).coredns) return [];
  return [0, 1].map((i) => ({ name: `coredns-${i}`, cpuMillicores: 100, memoryBytes: 70 * 2 ** 20 }));
}

export interface AutoNodeClassManifest {
  apiVersion: "eks.amazonaws.com/v1";
  kind: "NodeClass";
  metadata: { name: string };
  spec: {
    role: pulumi.Input<string>;
    subnetSelectorTerms: Array<{ tags: Record<string, string> }>;
    securityGroupSelectorTerms: Array<{ tags: Record<string, string> }>;
    ephemeralStorage: { size: string };
    networkPolicy: "DefaultAllow" | "DefaultDeny";
  };
}

/**
 * The Valkey NodeClass: the node role, private subnets and cluster security group by discovery tag, the node's disk.
 */
export function buildAutoNodeClass(input: {
  role: pulumi.Input<string>;
  discoveryTag: string;
  name?: string;
  ephemeralStorageGiB?: number;
}): AutoNodeClassManifest {
  const size = input.ephemeralStorageGiB ?? 80;
  if (!Number.isInteger(size) || size < 20)
    throw new Error(`ephemeral storage must be a whole number of GiB ≥ 20 (got ${size})`);
  const name = input.name ?? VALKEY_NODE_POOL;
  return {
    apiVersion: "eks.amazonaws.com/v1",
    kind: "NodeClass",
    metadata: { name },
    spec: {
      role: input.role,
      subnetSelectorTerms: [{ tags: { [DISCOVERY_TAG_KEY]: input.discoveryTag } }],
      securityGroupSelectorTerms: [{ tags: { [DISCOVERY_TAG_KEY]: input.discoveryTag } }],
      ephemeralStorage: { size: `${size}Gi` },
      // Pods no NetworkPolicy selects keep all traffic; the Valkey policies restrict the rest.
      networkPolicy: "DefaultAllow",
      // No `tags`: the Auto Mode managed policies on the cluster role do not permit user-defined
      // tags, and with them the NodeClass's instances never launch (EKS user guide, "Custom AWS tags
      // for EKS Auto resources", https://docs.aws.amazon.com/eks/latest/userguide/auto-cluster-iam-role.html#tag-prop;
      // aws/containers-roadmap#2487). Nodes are found by their `karpenter.sh/nodepool` label instead.
    },
  };
}

export type AutoNodePoolManifest = Omit<ReturnType<typeof buildValkeyNodePool>, "spec"> & {
  spec: Omit<ReturnType<typeof buildValkeyNodePool>["spec"], "template"> & {
    template: {
      spec: Omit<ReturnType<typeof buildValkeyNodePool>["spec"]["template"]["spec"], "nodeClassRef"> & {
        nodeClassRef: { group: "eks.amazonaws.com"; kind: "NodeClass"; name: string };
      };
    };
  };
};

/**
 * The same Valkey pool as on self-managed Karpenter (Graviton, on-demand, permitted types, the
 * configured zones, the Valkey taint, WhenEmpty consolidation, one node at a time), on the Auto
 * Mode NodeClass. `kubernetes.io/os` is left out (Auto Mode nodes are Linux only), and
 * `expireAfter` is {@link AUTO_MODE_EXPIRE_AFTER} because Auto Mode refuses "Never".
 */
export function buildAutoNodePool(input: {
  nodePool: KarpenterConfig["nodePool"];
  zones: string[];
  name?: string;
  extraRequirements?: NodeSelectorRequirement[];
}): AutoNodePoolManifest {
  const name = input.name ?? VALKEY_NODE_POOL;
  const base = buildValkeyNodePool({
    nodePool: input.nodePool,
    zones: input.zones,
    name,
    expireAfter: AUTO_MODE_EXPIRE_AFTER,
    extraRequirements: input.extraRequirements,
  });
  const { template } = base.spec;
  return {
    ...base,
    spec: {
      ...base.spec,
      template: {
        spec: {
          ...template.spec,
          nodeClassRef: { group: "eks.amazonaws.com", kind: "NodeClass", name },
          requirements: template.spec.requirements.filter((r) => r.key !== "kubernetes.io/os"),
        },
      },
    },
  };
}

/**
 * Auto Mode enforces NetworkPolicies only once this ConfigMap turns on the network policy
 * controller (EKS docs: "Use Network Policies with EKS Auto Mode"); without it the Valkey
 * NetworkPolicies would be objects nobody enforces.
 */
export function buildAutoModeNetworkPolicyConfigMap(): k8s.core.v1.ConfigMapArgs {
  return {
    metadata: { name: "amazon-vpc-cni", namespace: "kube-system" },
    data: { "enable-network-policy-controller": "true" },
  };
}

/** The default gp3 StorageClass on Auto Mode's EBS provisioner. */
export function buildAutoModeGp3StorageClass(): k8s.storage.v1.StorageClassArgs {
  return {
    metadata: { name: GP3_STORAGE_CLASS, annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
    provisioner: AUTO_MODE_EBS_PROVISIONER,
    parameters: { type: "gp3", encrypted: "true" },
    volumeBindingMode: "WaitForFirstConsumer",
    allowVolumeExpansion: true,
    reclaimPolicy: "Delete",
  };
}
