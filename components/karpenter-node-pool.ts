/**
 * KarpenterNodePool: the Valkey data pool (`NodePool` + `EC2NodeClass`) as Kubernetes custom
 * resources. Works on the cluster EksCluster makes (composed by Karpenter) and standalone on a
 * bring-your-own cluster that already runs Karpenter 1.x (`byo.manageKarpenterNodePool`).
 *
 * The target cluster's Kubernetes provider comes through resource options (`opts.provider`, or
 * inherited from a parent such as Karpenter), and so does what the custom resources wait for
 * (`opts.dependsOn`, e.g. the Karpenter Helm release that installs the CRDs).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { KarpenterConfig } from "../config/types.js";
import { buildEc2NodeClass, buildValkeyNodePool, type NodeSelectorRequirement } from "./aws/karpenter-manifests.js";
import { VALKEY_NODE_POOL } from "./shared.js";

export type { NodeSelectorRequirement } from "./aws/karpenter-manifests.js";

export interface KarpenterNodePoolArgs {
  /** `karpenter.nodePool` config. */
  nodePool: KarpenterConfig["nodePool"];
  /** Zones the pool may launch in (aws.zones). */
  zones: string[];
  /** IAM role name of the nodes (needs an EC2_LINUX access entry; on byo: `byo.karpenterNodeRole`). */
  nodeRoleName: pulumi.Input<string>;
  /**
   * `karpenter.sh/discovery` tag value of the subnets and security groups (EKS: the cluster name; byo:
   * `byo.karpenterDiscoveryTag`).
   */
  discoveryTag: string;
  /** NodePool and EC2NodeClass name. @default VALKEY_NODE_POOL ("valkey") */
  name?: string;
  /** AMI alias (config `karpenter.amiAlias`); see buildEc2NodeClass. @default versions.env KARPENTER_AMI_ALIAS */
  amiAlias?: string;
  /** Node root volume in GiB. @default 50 */
  rootVolumeGiB?: number;
  /** How long an empty node stays. @default "5m" */
  consolidateAfter?: string;
  /** Node lifetime. @default "Never" */
  expireAfter?: string;
  /** Extra NodePool requirements (restricted and config-driven keys are rejected). @default [] */
  extraRequirements?: NodeSelectorRequirement[];
}

/**
 * Throws unless `component` has a Kubernetes provider (its own `opts.provider`/`opts.providers`
 * or its parent's): without one, its children would silently go to the ambient kubeconfig's
 * cluster instead of the one the stack targets.
 */
export function requireKubernetesProvider(component: pulumi.ComponentResource, what: string): void {
  if (component.getProvider("kubernetes::") === undefined) {
    throw new Error(
      `${what}: pass the target cluster's Kubernetes provider as a resource option (opts.provider or opts.providers), or create it under a parent that has one`,
    );
  }
}

export class KarpenterNodePool extends pulumi.ComponentResource {
  /** The NodePool's name: pods select it with `karpenter.sh/nodepool: <name>`. */
  readonly nodePoolName: string;
  readonly nodeClassName: string;
  readonly nodePool: k8s.apiextensions.CustomResource;
  readonly nodeClass: k8s.apiextensions.CustomResource;

  constructor(name: string, args: KarpenterNodePoolArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:karpenter:KarpenterNodePool", name, {}, opts);
    requireKubernetesProvider(this, `KarpenterNodePool ${name}`);
    const poolName = args.name ?? VALKEY_NODE_POOL;
    const nodeClass = buildEc2NodeClass({
      role: args.nodeRoleName,
      discoveryTag: args.discoveryTag,
      name: poolName,
      amiAlias: args.amiAlias,
      rootVolumeGiB: args.rootVolumeGiB,
    });
    const nodePool = buildValkeyNodePool({
      nodePool: args.nodePool,
      zones: args.zones,
      name: poolName,
      consolidateAfter: args.consolidateAfter,
      expireAfter: args.expireAfter,
      extraRequirements: args.extraRequirements,
    });
    this.nodeClass = new k8s.apiextensions.CustomResource(`${name}-node-class`, nodeClass, { parent: this });
    this.nodePool = new k8s.apiextensions.CustomResource(`${name}-node-pool`, nodePool, {
      parent: this,
      dependsOn: [this.nodeClass],
    });
    this.nodePoolName = poolName;
    this.nodeClassName = poolName;
    this.registerOutputs({ nodePoolName: poolName, nodeClassName: poolName });
  }
}
