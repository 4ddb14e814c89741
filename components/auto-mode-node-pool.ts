/**
 * AutoModeNodePool: the Valkey data pool on EKS Auto Mode (`eks.autoMode: true`): a node role
 * with its `EC2` access entry and AmazonEKSAutoNodePolicy (a custom NodeClass needs them; EKS
 * creates them only for its built-in pools), our `NodeClass` (eks.amazonaws.com/v1) and the
 * Valkey `NodePool` (karpenter.sh/v1) that EKS's own Karpenter runs. No Helm release, no queue.
 *
 * Resource options as for Karpenter: the cluster's Kubernetes provider and the AWS provider in
 * `opts.providers`, reaching the children through `{ parent: this }`; the cluster's readiness
 * in `opts.dependsOn`.
 */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { KarpenterConfig } from "../config/types.js";
import {
  AUTO_NODE_ACCESS_POLICY,
  AUTO_NODE_POLICY_NAMES,
  buildAutoNodeClass,
  buildAutoNodePool,
} from "./aws/auto-mode.js";
import { ec2TrustPolicy, managedPolicyArn, partitionOf } from "./aws/iam.js";
import { requireKubernetesProvider } from "./karpenter-node-pool.js";
import { VALKEY_NODE_POOL } from "./shared.js";

export interface AutoModeNodePoolArgs {
  /** EKS cluster name (also the `karpenter.sh/discovery` tag value of its private subnets and security group). */
  clusterName: string;
  /** AWS region of the cluster (for the partition). */
  region: string;
  /** Zones the pool may launch in (aws.zones). */
  zones: string[];
  /** `karpenter.nodePool` config: the same keys as on self-managed Karpenter. */
  nodePool: KarpenterConfig["nodePool"];
  /** NodePool and NodeClass name. @default VALKEY_NODE_POOL ("valkey") */
  name?: string;
  /** Tags on the AWS resources. @default {} */
  tags?: Record<string, string>;
}

export class AutoModeNodePool extends pulumi.ComponentResource {
  readonly nodePoolName: string;
  readonly nodeRoleName: pulumi.Output<string>;

  constructor(name: string, args: AutoModeNodePoolArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:aws:AutoModeNodePool", name, {}, opts);
    requireKubernetesProvider(this, `AutoModeNodePool ${name}`);
    const parent = { parent: this };
    const poolName = args.name ?? VALKEY_NODE_POOL;
    const partition = partitionOf(args.region);
    const tags = { "valkey-on-eks/cluster": args.clusterName, ...args.tags };

    const role = new aws.iam.Role(
      `${name}-node-role`,
      { assumeRolePolicy: JSON.stringify(ec2TrustPolicy()), tags },
      parent,
    );
    const policies = AUTO_NODE_POLICY_NAMES.map(
      (policy) =>
        new aws.iam.RolePolicyAttachment(
          `${name}-node-${policy}`,
          { role: role.name, policyArn: managedPolicyArn(partition, policy) },
          parent,
        ),
    );
    const entry = new aws.eks.AccessEntry(
      `${name}-node-access`,
      { clusterName: args.clusterName, principalArn: role.arn, type: "EC2", tags },
      parent,
    );
    const association = new aws.eks.AccessPolicyAssociation(
      `${name}-node-access-policy`,
      {
        clusterName: args.clusterName,
        principalArn: role.arn,
        policyArn: `arn:${partition}:eks::aws:cluster-access-policy/${AUTO_NODE_ACCESS_POLICY}`,
        accessScope: { type: "cluster" },
      },
      { parent: this, dependsOn: [entry] },
    );

    // The role, its policies and its access entry outlive the pool on destroy, so nodes can drain.
    const nodeClass = new k8s.apiextensions.CustomResource(
      `${name}-node-class`,
      buildAutoNodeClass({ role: role.name, discoveryTag: args.clusterName, name: poolName }),
      { parent: this, dependsOn: [...policies, entry, association] },
    );
    new k8s.apiextensions.CustomResource(
      `${name}-node-pool`,
      buildAutoNodePool({ nodePool: args.nodePool, zones: args.zones, name: poolName }),
      {
        parent: this,
        dependsOn: [nodeClass],
      },
    );

    this.nodePoolName = poolName;
    this.nodeRoleName = role.name;
    this.registerOutputs({ nodePoolName: poolName, nodeRoleName: this.nodeRoleName });
  }
}
