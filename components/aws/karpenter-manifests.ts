/**
 * The Valkey data pool as Karpenter objects: a `NodePool` (karpenter.sh/v1) and its
 * `EC2NodeClass` (karpenter.k8s.aws/v1). Pure: plain config in, plain manifests out, checked
 * against the CRDs' openAPIV3Schema in the tests.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { KarpenterConfig } from "../../config/types.js";
import { versions } from "../../versions.js";
import { VALKEY_NODE_POOL, VALKEY_TAINT } from "../shared.js";
import { DISCOVERY_TAG_KEY } from "./vpc.js";

export interface NodeSelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" | "Gte" | "Lte";
  values?: string[];
  minValues?: number;
}

export interface NodePoolManifest {
  apiVersion: "karpenter.sh/v1";
  kind: "NodePool";
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    template: {
      metadata?: { labels?: Record<string, string> };
      spec: {
        nodeClassRef: { group: "karpenter.k8s.aws"; kind: "EC2NodeClass"; name: string };
        requirements: NodeSelectorRequirement[];
        taints: Array<{ key: string; value: string; effect: string }>;
        expireAfter: string;
      };
    };
    disruption: {
      consolidationPolicy: "WhenEmpty" | "WhenEmptyOrUnderutilized";
      consolidateAfter: string;
      budgets: DisruptionBudget[];
    };
    limits: { cpu: string; memory: string };
  };
}

export interface Ec2NodeClassManifest {
  apiVersion: "karpenter.k8s.aws/v1";
  kind: "EC2NodeClass";
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    role: pulumi.Input<string>;
    amiSelectorTerms: Array<{ alias: string }>;
    subnetSelectorTerms: Array<{ tags: Record<string, string> }>;
    securityGroupSelectorTerms: Array<{ tags: Record<string, string> }>;
    blockDeviceMappings: Array<{
      deviceName: string;
      rootVolume: boolean;
      ebs: { volumeSize: string; volumeType: "gp3"; encrypted: boolean; deleteOnTermination: boolean };
    }>;
    metadataOptions: {
      httpEndpoint: "enabled";
      httpTokens: "required";
      httpPutResponseHopLimit: number;
      httpProtocolIPv6: "disabled";
    };
    tags: Record<string, string>;
  };
}

/** A NodePool disruption budget; with `reasons`, it applies to those disruption reasons only. */
export interface DisruptionBudget {
  nodes: string;
  reasons?: Array<"Empty" | "Drifted" | "Underutilized">;
}

/**
 * The Valkey pool's budgets: one node at a time for any reason, and none for drift unless
 * `allowDrift` (a new AMI, or an edited EC2NodeClass/NodePool, would otherwise replace data nodes
 * on Karpenter's schedule, not the operator's).
 */
export function valkeyDisruptionBudgets(allowDrift: boolean): DisruptionBudget[] {
  return allowDrift ? [{ nodes: "1" }] : [{ nodes: "1" }, { nodes: "0", reasons: ["Drifted"] }];
}

/** Labels a NodePool requirement may not use (Karpenter's CEL rules reject them at admission). */
const RESTRICTED_LABELS = ["karpenter.sh/nodepool", "kubernetes.io/hostname"];
const ALLOWED_KARPENTER_SH = ["karpenter.sh/capacity-type"];
/** Keys this builder sets itself; extra requirements on them would contradict the config. */
const MANAGED_KEYS = [
  "kubernetes.io/arch",
  "kubernetes.io/os",
  "karpenter.sh/capacity-type",
  "node.kubernetes.io/instance-type",
  "topology.kubernetes.io/zone",
];

export interface NodePoolBuildInput {
  nodePool: KarpenterConfig["nodePool"];
  /** Zones the pool may launch in (aws.zones). */
  zones: string[];
  /** NodePool and EC2NodeClass name. @default VALKEY_NODE_POOL */
  name?: string;
  /** How long an empty node stays before Karpenter removes it. @default "5m" */
  consolidateAfter?: string;
  /** Node lifetime before forced replacement; "Never" keeps Valkey data nodes until emptied. @default "Never" */
  expireAfter?: string;
  /** Extra requirements, e.g. on karpenter.k8s.aws/instance-generation. @default [] */
  extraRequirements?: NodeSelectorRequirement[];
}

/** Throws on requirements Karpenter would reject or that clash with the config-driven ones. */
export function checkExtraRequirements(requirements: NodeSelectorRequirement[]): void {
  for (const { key, operator, values } of requirements) {
    const domain = key.split("/")[0] ?? "";
    if (
      RESTRICTED_LABELS.includes(key) ||
      (domain.endsWith("karpenter.sh") && key.includes("/") && !ALLOWED_KARPENTER_SH.includes(key))
    ) {
      throw new Error(`NodePool requirement on "${key}" is restricted by Karpenter`);
    }
    if (MANAGED_KEYS.includes(key))
      throw new Error(
        `NodePool requirement on "${key}" comes from the stack config; change karpenter.nodePool or aws.zones instead`,
      );
    if (operator === "In" && (values === undefined || values.length === 0))
      throw new Error(`NodePool requirement "${key}" In needs at least one value`);
  }
}

/** The Valkey NodePool: Graviton, on-demand, permitted types only, in the given zones, tainted for Valkey. */
export function buildValkeyNodePool(input: NodePoolBuildInput): NodePoolManifest {
  const { nodePool } = input;
  const name = input.name ?? VALKEY_NODE_POOL;
  const extra = input.extraRequirements ?? [];
  checkExtraRequirements(extra);
  if (nodePool.permittedInstanceTypes.length === 0) throw new Error("the NodePool permits no instance types");
  if (input.zones.length === 0) throw new Error("the NodePool needs at least one zone");
  return {
    apiVersion: "karpenter.sh/v1",
    kind: "NodePool",
    metadata: { name },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: "karpenter.k8s.aws", kind: "EC2NodeClass", name },
          requirements: [
            { key: "kubernetes.io/arch", operator: "In", values: [nodePool.architecture] },
            { key: "kubernetes.io/os", operator: "In", values: ["linux"] },
            { key: "karpenter.sh/capacity-type", operator: "In", values: [nodePool.capacityType] },
            { key: "node.kubernetes.io/instance-type", operator: "In", values: [...nodePool.permittedInstanceTypes] },
            { key: "topology.kubernetes.io/zone", operator: "In", values: [...input.zones] },
            ...extra.map((r) => ({ ...r, ...(r.values ? { values: [...r.values] } : {}) })),
          ],
          taints: [{ ...VALKEY_TAINT }],
          expireAfter: input.expireAfter ?? "Never",
        },
      },
      // Valkey pods hold data: never move them to pack nodes tighter, only remove empty nodes.
      disruption: {
        consolidationPolicy: "WhenEmpty",
        consolidateAfter: input.consolidateAfter ?? "5m",
        budgets: valkeyDisruptionBudgets(nodePool.allowDrift),
      },
      limits: { cpu: nodePool.limits.cpu, memory: nodePool.limits.memory },
    },
  };
}

export interface Ec2NodeClassBuildInput {
  /** IAM role name of the nodes (Karpenter makes the instance profile). */
  role: pulumi.Input<string>;
  /** Value of the `karpenter.sh/discovery` tag on the subnets and security groups to use. */
  discoveryTag: string;
  /** @default VALKEY_NODE_POOL */
  name?: string;
  /**
   * AMI alias. Pinned by default (versions.env KARPENTER_AMI_ALIAS, config `karpenter.amiAlias`):
   * `al2023@latest` follows new EKS-optimised AL2023 releases, which drift the nodes.
   * @default versions.KARPENTER_AMI_ALIAS
   */
  amiAlias?: string;
  /** Root volume size in GiB. @default 50 */
  rootVolumeGiB?: number;
  /** Extra EC2 tags on launched resources. @default {} */
  tags?: Record<string, string>;
}

/** The EC2NodeClass of the Valkey pool: AL2023, discovery-tag selectors, encrypted gp3 root, IMDSv2 only. */
export function buildEc2NodeClass(input: Ec2NodeClassBuildInput): Ec2NodeClassManifest {
  const alias = input.amiAlias ?? versions.KARPENTER_AMI_ALIAS;
  if (!/^al2023@(latest|v\d{8})$/.test(alias))
    throw new Error(`AMI alias "${alias}" must be an al2023 alias (al2023@latest or al2023@vYYYYMMDD)`);
  const size = input.rootVolumeGiB ?? 50;
  if (!Number.isInteger(size) || size < 20)
    throw new Error(`root volume must be a whole number of GiB ≥ 20 (got ${size})`);
  const selector = [{ tags: { [DISCOVERY_TAG_KEY]: input.discoveryTag } }];
  return {
    apiVersion: "karpenter.k8s.aws/v1",
    kind: "EC2NodeClass",
    metadata: { name: input.name ?? VALKEY_NODE_POOL },
    spec: {
      role: input.role,
      amiSelectorTerms: [{ alias }],
      subnetSelectorTerms: selector,
      securityGroupSelectorTerms: selector.map((s) => ({ tags: { ...s.tags } })),
      blockDeviceMappings: [
        {
          deviceName: "/dev/xvda",
          rootVolume: true,
          ebs: { volumeSize: `${size}Gi`, volumeType: "gp3", encrypted: true, deleteOnTermination: true },
        },
      ],
      // Hop limit 1: pods cannot reach the node's IMDS credentials (they use Pod Identity).
      metadataOptions: {
        httpEndpoint: "enabled",
        httpTokens: "required",
        httpPutResponseHopLimit: 1,
        httpProtocolIPv6: "disabled",
      },
      tags: { "valkey-on-eks/node-pool": input.name ?? VALKEY_NODE_POOL, ...input.tags },
    },
  };
}
