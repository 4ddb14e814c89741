/**
 * Karpenter: the controller's Pod Identity role and policy, the node role with its EC2_LINUX
 * access entry, the interruption queue and its EventBridge rules, the karpenter-crd and controller Helm releases on
 * the system nodes, and the Valkey KarpenterNodePool. Thin wiring over ./aws/ builders.
 *
 * Resource options, as pulumi-eks takes them: the cluster's Kubernetes provider goes in
 * `opts.providers` (or `opts.provider`) and reaches the Helm release and the node pool through
 * `{ parent: this }`; AWS children keep the ambient AWS provider unless `opts.providers` names one.
 * What the controller waits for (EksCluster.ready: the system nodes and the Pod Identity agent)
 * goes in `opts.dependsOn`: the component registers after it, and every child after the component.
 */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { KarpenterConfig } from "../config/types.js";
import { SYSTEM_NODE_LABELS } from "./aws/eks.js";
import {
  KARPENTER_NODE_POLICY_NAMES,
  accountOfArn,
  ec2TrustPolicy,
  managedPolicyArn,
  partitionOf,
  podIdentityTrustPolicy,
} from "./aws/iam.js";
import {
  KARPENTER_CHART,
  KARPENTER_CRD_CHART,
  KARPENTER_NAMESPACE,
  KARPENTER_SERVICE_ACCOUNT,
  buildKarpenterChartValues,
} from "./aws/karpenter-chart.js";
import { buildKarpenterControllerPolicy } from "./aws/karpenter-iam.js";
import {
  INTERRUPTION_MESSAGE_RETENTION_SECONDS,
  INTERRUPTION_RULES,
  buildInterruptionQueuePolicy,
} from "./aws/karpenter-interruption.js";
import { KarpenterNodePool, requireKubernetesProvider, type KarpenterNodePoolArgs } from "./karpenter-node-pool.js";

export interface KarpenterArgs {
  /** EKS cluster name (EksCluster.clusterName). */
  clusterName: string;
  /** AWS region of the cluster. */
  region: string;
  /** Zones the Valkey pool may launch in (aws.zones). */
  zones: string[];
  /** `karpenter` config: chart version, AMI alias and the Valkey node pool. */
  karpenter: KarpenterConfig;
  /** Controller replicas; keep ≤ the system node count (one per node). @default 2 */
  replicas?: number;
  /** Options passed to the Valkey KarpenterNodePool. @default {} */
  nodePoolOptions?: Pick<
    KarpenterNodePoolArgs,
    "amiAlias" | "rootVolumeGiB" | "consolidateAfter" | "expireAfter" | "extraRequirements"
  >;
  /** Tags on the AWS resources. @default {} */
  tags?: Record<string, string>;
}

/** What every Karpenter child shares: the component's name, the cluster, and `{ parent }`. */
interface KarpenterScope {
  name: string;
  clusterName: string;
  region: string;
  partition: string;
  tags: Record<string, string>;
  parent: { parent: pulumi.Resource };
}

/** The node role, its managed policies and its EC2_LINUX access entry. */
function nodeRoleWithAccess(s: KarpenterScope): {
  nodeRole: aws.iam.Role;
  nodePolicies: aws.iam.RolePolicyAttachment[];
  nodeAccess: aws.eks.AccessEntry;
} {
  const { name, tags, parent } = s;
  const nodeRole = new aws.iam.Role(
    `${name}-node-role`,
    { assumeRolePolicy: JSON.stringify(ec2TrustPolicy()), tags },
    parent,
  );
  const nodePolicies = KARPENTER_NODE_POLICY_NAMES.map(
    (policy) =>
      new aws.iam.RolePolicyAttachment(
        `${name}-node-${policy}`,
        { role: nodeRole.name, policyArn: managedPolicyArn(s.partition, policy) },
        parent,
      ),
  );
  const nodeAccess = new aws.eks.AccessEntry(
    `${name}-node-access`,
    { clusterName: s.clusterName, principalArn: nodeRole.arn, type: "EC2_LINUX", tags },
    parent,
  );
  return { nodeRole, nodePolicies, nodeAccess };
}

/** The interruption queue (named after the cluster), its policy, and the EventBridge rules that feed it. */
function interruptionQueue(s: KarpenterScope): aws.sqs.Queue {
  const { name, tags, parent } = s;
  const queue = new aws.sqs.Queue(
    `${name}-interruption`,
    {
      name: s.clusterName,
      messageRetentionSeconds: INTERRUPTION_MESSAGE_RETENTION_SECONDS,
      sqsManagedSseEnabled: true,
      tags,
    },
    parent,
  );
  new aws.sqs.QueuePolicy(
    `${name}-interruption-policy`,
    { queueUrl: queue.url, policy: queue.arn.apply((arn) => JSON.stringify(buildInterruptionQueuePolicy(arn))) },
    parent,
  );
  for (const rule of INTERRUPTION_RULES) {
    const eventRule = new aws.cloudwatch.EventRule(
      `${name}-${rule.part}`,
      {
        description: `Karpenter interruption: ${rule.description}`,
        eventPattern: JSON.stringify(rule.eventPattern),
        tags,
      },
      parent,
    );
    new aws.cloudwatch.EventTarget(
      `${name}-${rule.part}-target`,
      { rule: eventRule.name, arn: queue.arn, targetId: "KarpenterInterruptionQueueTarget" },
      parent,
    );
  }
  return queue;
}

/** The controller's role, its policy (queue and node role) and its Pod Identity association. */
function controllerIdentity(
  s: KarpenterScope,
  queue: aws.sqs.Queue,
  nodeRole: aws.iam.Role,
): { controllerRole: aws.iam.Role; controllerPolicy: aws.iam.RolePolicy; association: aws.eks.PodIdentityAssociation } {
  const { name, clusterName, tags, parent } = s;
  const controllerRole = new aws.iam.Role(
    `${name}-controller-role`,
    { assumeRolePolicy: JSON.stringify(podIdentityTrustPolicy()), tags },
    parent,
  );
  const controllerPolicy = new aws.iam.RolePolicy(
    `${name}-controller-policy`,
    {
      role: controllerRole.name,
      policy: pulumi.all([queue.arn, nodeRole.arn]).apply(([queueArn, nodeRoleArn]) =>
        JSON.stringify(
          buildKarpenterControllerPolicy({
            partition: s.partition,
            region: s.region,
            accountId: accountOfArn(nodeRoleArn),
            clusterName,
            queueArn,
            nodeRoleArn,
          }),
        ),
      ),
    },
    parent,
  );
  const association = new aws.eks.PodIdentityAssociation(
    `${name}-controller-identity`,
    {
      clusterName,
      namespace: KARPENTER_NAMESPACE,
      serviceAccount: KARPENTER_SERVICE_ACCOUNT,
      roleArn: controllerRole.arn,
      tags,
    },
    parent,
  );
  return { controllerRole, controllerPolicy, association };
}

/** The karpenter-crd release, then the controller's (after its identity, policy and queue). */
function karpenterReleases(
  s: KarpenterScope,
  args: KarpenterArgs,
  controllerDependsOn: pulumi.Resource[],
): { crdRelease: k8s.helm.v3.Release; release: k8s.helm.v3.Release } {
  const { name, clusterName } = s;
  // The CRDs as a release of their own, before the controller, so a chart bump upgrades them.
  const crdRelease = new k8s.helm.v3.Release(
    `${name}-crd`,
    {
      name: "karpenter-crd",
      chart: KARPENTER_CRD_CHART,
      version: args.karpenter.chartVersion,
      namespace: KARPENTER_NAMESPACE,
    },
    s.parent,
  );
  const release = new k8s.helm.v3.Release(
    `${name}-controller`,
    {
      name: "karpenter",
      chart: KARPENTER_CHART,
      version: args.karpenter.chartVersion,
      namespace: KARPENTER_NAMESPACE,
      // The queue is named after the cluster, so the values are plain and known at preview.
      values: buildKarpenterChartValues({
        clusterName,
        interruptionQueue: clusterName,
        region: s.region,
        systemNodeLabels: SYSTEM_NODE_LABELS,
        replicas: args.replicas ?? 2,
      }),
      // The karpenter-crd release owns the CRDs.
      skipCrds: true,
    },
    { ...s.parent, dependsOn: [...controllerDependsOn, crdRelease] },
  );
  return { crdRelease, release };
}

export class Karpenter extends pulumi.ComponentResource {
  readonly controllerRoleArn: pulumi.Output<string>;
  readonly nodeRoleName: pulumi.Output<string>;
  readonly nodeRoleArn: pulumi.Output<string>;
  readonly interruptionQueueName: pulumi.Output<string>;
  readonly release: k8s.helm.v3.Release;
  /** The karpenter-crd release: the CRDs, upgraded with the chart version. */
  readonly crdRelease: k8s.helm.v3.Release;
  /** The Valkey data pool. */
  readonly valkeyNodePool: KarpenterNodePool;

  constructor(name: string, args: KarpenterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:karpenter:Karpenter", name, {}, opts);
    requireKubernetesProvider(this, `Karpenter ${name}`);
    const { clusterName, region } = args;
    const scope: KarpenterScope = {
      name,
      clusterName,
      region,
      partition: partitionOf(region),
      tags: { "valkey-on-eks/cluster": clusterName, ...args.tags },
      parent: { parent: this },
    };

    const { nodeRole, nodePolicies, nodeAccess } = nodeRoleWithAccess(scope);
    const queue = interruptionQueue(scope);
    const { controllerRole, controllerPolicy, association } = controllerIdentity(scope, queue, nodeRole);
    const { crdRelease, release } = karpenterReleases(scope, args, [association, controllerPolicy, queue]);
    this.crdRelease = crdRelease;
    this.release = release;

    this.valkeyNodePool = new KarpenterNodePool(
      `${name}-valkey`,
      {
        nodePool: args.karpenter.nodePool,
        zones: args.zones,
        nodeRoleName: nodeRole.name,
        discoveryTag: clusterName,
        amiAlias: args.karpenter.amiAlias,
        ...args.nodePoolOptions,
      },
      // The CRDs come from the karpenter-crd release: the node pool registers once both are installed. The
      // node role's policies and access entry are dependencies too, so on destroy they outlive the
      // NodePool/EC2NodeClass: its nodes keep joining rights while Karpenter drains and deletes them.
      { parent: this, dependsOn: [this.crdRelease, this.release, ...nodePolicies, nodeAccess] },
    );

    this.controllerRoleArn = controllerRole.arn;
    this.nodeRoleName = nodeRole.name;
    this.nodeRoleArn = nodeRole.arn;
    this.interruptionQueueName = queue.name;
    this.registerOutputs({
      controllerRoleArn: this.controllerRoleArn,
      nodeRoleName: this.nodeRoleName,
      nodeRoleArn: this.nodeRoleArn,
      interruptionQueueName: this.interruptionQueueName,
    });
  }
}
