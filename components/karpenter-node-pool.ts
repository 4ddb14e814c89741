/**
 * KarpenterNodePool: the Valkey data pool (`NodePool` + `EC2NodeClass`) as Kubernetes custom
 * resources. Works on the cluster EksCluster makes (composed by Karpenter) and standalone on a
 * bring-your-own cluster that already runs Karpenter 1.x (`byo.manageKarpenterNodePool`).
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
  /** Kubernetes provider of the target cluster. */
  provider: k8s.Provider;
  /** IAM role name of the nodes (needs an EC2_LINUX access entry; on byo: `byo.karpenterNodeRole`). */
  nodeRoleName: pulumi.Input<string>;
  /** `karpenter.sh/discovery` tag value of the subnets and security groups (EKS: the cluster name; byo: `byo.karpenterDiscoveryTag`). */
  discoveryTag: string;
  /** NodePool and EC2NodeClass name. @default VALKEY_NODE_POOL ("valkey") */
  name?: string;
  /** AMI alias; see buildEc2NodeClass. @default "al2023@latest" */
  amiAlias?: string;
  /** Node root volume in GiB. @default 50 */
  rootVolumeGiB?: number;
  /** How long an empty node stays. @default "5m" */
  consolidateAfter?: string;
  /** Node lifetime. @default "Never" */
  expireAfter?: string;
  /** Extra NodePool requirements (restricted and config-driven keys are rejected). @default [] */
  extraRequirements?: NodeSelectorRequirement[];
  /** Resources the custom resources wait for (e.g. the Karpenter Helm release that installs the CRDs). @default [] */
  dependsOn?: pulumi.Resource[];
}

export class KarpenterNodePool extends pulumi.ComponentResource {
  /** The NodePool's name: pods select it with `karpenter.sh/nodepool: <name>`. */
  readonly nodePoolName: string;
  readonly nodeClassName: string;
  readonly nodePool: k8s.apiextensions.CustomResource;
  readonly nodeClass: k8s.apiextensions.CustomResource;

  constructor(name: string, args: KarpenterNodePoolArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:karpenter:KarpenterNodePool", name, {}, opts);
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
    const resourceOpts = { parent: this, provider: args.provider, dependsOn: args.dependsOn ?? [] };
    this.nodeClass = new k8s.apiextensions.CustomResource(`${name}-node-class`, nodeClass, resourceOpts);
    this.nodePool = new k8s.apiextensions.CustomResource(`${name}-node-pool`, nodePool, { ...resourceOpts, dependsOn: [...resourceOpts.dependsOn, this.nodeClass] });
    this.nodePoolName = poolName;
    this.nodeClassName = poolName;
    this.registerOutputs({ nodePoolName: poolName, nodeClassName: poolName });
  }
}
