/**
 * Where Valkey runs: a new EKS cluster with Karpenter (platform `eks`; with `eks.autoMode` the
 * Karpenter EKS runs, and only our Valkey NodePool), or a Kubernetes cluster
 * the user brings (platform `byo`: no EKS, no Karpenter install, no AWS resource; the Valkey
 * NodePool/EC2NodeClass only when `byo.manageKarpenterNodePool`). Either way the rest of the
 * program gets a Kubernetes provider, the kubeconfig (secret) for the post-deploy checks, the
 * pod placement, and the resources Valkey must wait for.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import type * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { AutoModeNodePool } from "../components/auto-mode-node-pool.js";
import { EksCluster } from "../components/eks-cluster.js";
import { Karpenter } from "../components/karpenter.js";
import { KarpenterNodePool } from "../components/karpenter-node-pool.js";
import { ManagedPrometheus } from "../components/managed-prometheus.js";
import { stackRuleFile } from "../core/metrics/rule-file.js";
import type { AmpPart } from "./metrics-output.js";
import { VALKEY_NODE_POOL, VALKEY_TAINT, type Placement } from "../components/shared.js";
import type { StackConfig } from "../config/types.js";
import { PROVIDER_BEHAVIOUR } from "../components/kubernetes/provider-args.js";

export interface PlatformResult {
  provider: k8s.Provider;
  /** Kubeconfig contents, secret: the dynamic check resources reach the cluster with it. */
  kubeconfig: pulumi.Output<string>;
  /** kubeconfig context (byo only). */
  context: string | undefined;
  placement: Placement;
  /** What Valkey must wait for (node group, add-ons, StorageClass, Karpenter, NodePool). */
  ready: pulumi.Resource[];
  /** Platform eks: the cluster's name and the AWS provider (Pod Identity associations, S3). */
  eks?: { clusterName: pulumi.Input<string>; awsProvider: aws.Provider };
  /** Platform eks with `metrics.amp.enabled`: the workspace, collector and rules (the report's metrics.amp). */
  amp?: pulumi.Output<AmpPart>;
}

/** Placement on the Karpenter Valkey pool: its label and its taint. */
export function karpenterPlacement(config: StackConfig): Placement {
  return {
    zones: config.aws.zones,
    nodeSelector: { "karpenter.sh/nodepool": VALKEY_NODE_POOL },
    tolerations: [{ key: VALKEY_TAINT.key, operator: "Equal", value: VALKEY_TAINT.value, effect: VALKEY_TAINT.effect }],
    storageClass: config.valkey.persistence.storageClass,
    membersPerNode: "one",
  };
}

/** Placement on a byo cluster: only what the stack configures. */
export function byoPlacement(config: StackConfig): Placement {
  return {
    zones: config.aws.zones,
    nodeSelector: config.byo.nodeSelector,
    tolerations: config.byo.tolerations,
    storageClass: config.valkey.persistence.storageClass,
  };
}

/** The kubeconfig file a byo stack names, or the one kubectl would use. */
export function byoKubeconfigPath(config: StackConfig, env: NodeJS.ProcessEnv = process.env): string {
  const configured = config.byo.kubeconfig ?? env.KUBECONFIG?.split(":")[0];
  const path = configured ?? "~/.kube/config";
  return resolve(path.startsWith("~/") ? `${homedir()}${path.slice(1)}` : path);
}

/** EKS + Karpenter; every AWS resource of both (and of the components inside them) uses `awsProvider`. */
export function eksPlatform(config: StackConfig, awsProvider: aws.Provider): PlatformResult {
  const cluster = new EksCluster(
    "eks",
    { aws: config.aws, eks: config.eks, natGateways: config.network.natGateways },
    { providers: [awsProvider] },
  );
  const amp = managedPrometheus(config, cluster, awsProvider);
  // The Kubernetes side is ready once the cluster and whatever provides the Valkey nodes are.
  const onEks = (nodes: pulumi.Resource): PlatformResult => ({
    provider: cluster.provider,
    kubeconfig: cluster.kubeconfig,
    context: undefined,
    placement: karpenterPlacement(config),
    ready: [...cluster.ready, nodes],
    eks: { clusterName: cluster.clusterName, awsProvider },
    ...(amp === undefined ? {} : { amp }),
  });
  if (config.eks.autoMode) {
    // EKS runs Karpenter: only the Valkey NodePool on our NodeClass.
    const pool = new AutoModeNodePool(
      "auto-mode-valkey",
      {
        clusterName: cluster.clusterName,
        region: config.aws.region,
        zones: config.aws.zones,
        nodePool: config.karpenter.nodePool,
      },
      { providers: [cluster.provider, awsProvider], dependsOn: cluster.ready },
    );
    return onEks(pool);
  }
  const karpenter = new Karpenter(
    "karpenter",
    {
      clusterName: cluster.clusterName,
      region: config.aws.region,
      zones: config.aws.zones,
      karpenter: config.karpenter,
      replicas: Math.min(2, config.eks.systemNodes.count),
    },
    { providers: [cluster.provider, awsProvider], dependsOn: cluster.ready },
  );
  return onEks(karpenter);
}

/** With `metrics.enabled` and `metrics.amp.enabled`: the AMP workspace, rules and managed collector on the cluster. */
function managedPrometheus(
  config: StackConfig,
  cluster: EksCluster,
  awsProvider: aws.Provider,
): pulumi.Output<AmpPart> | undefined {
  const m = config.metrics;
  if (!m.enabled || !m.amp.enabled) return undefined;
  const amp = new ManagedPrometheus(
    "amp",
    {
      clusterName: cluster.clusterName,
      region: config.aws.region,
      subnetIds: cluster.privateSubnetIds,
      securityGroupIds: [cluster.clusterSecurityGroupId],
      namespaces: [config.valkey.namespace],
      rules: stackRuleFile(config.valkey),
      alias: cluster.clusterName,
      ...(m.amp.workspaceArn === undefined ? {} : { workspaceArn: m.amp.workspaceArn }),
    },
    { providers: [cluster.provider, awsProvider], dependsOn: cluster.ready },
  );
  return pulumi
    .all([amp.workspaceArn, amp.prometheusEndpoint, amp.scraperArn, amp.scraperRoleArn, amp.ruleNamespace])
    .apply(([workspaceArn, prometheusEndpoint, scraperArn, scraperRoleArn, ruleNamespace]) => ({
      workspaceArn,
      prometheusEndpoint,
      scraperArn,
      scraperRoleArn,
      ruleNamespace,
    }));
}

export function byoPlatform(config: StackConfig): PlatformResult {
  const path = byoKubeconfigPath(config);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new pulumi.RunError(`byo.kubeconfig: cannot read ${path}: ${(err as Error).message}`);
  }
  const kubeconfig = pulumi.secret(text);
  const provider = new k8s.Provider("byo", { kubeconfig, context: config.byo.context, ...PROVIDER_BEHAVIOUR });
  const ready: pulumi.Resource[] = [];
  if (config.byo.manageKarpenterNodePool) {
    // The schema requires both when manageKarpenterNodePool is set.
    ready.push(
      new KarpenterNodePool(
        "karpenter-node-pool",
        {
          nodePool: config.karpenter.nodePool,
          zones: config.aws.zones,
          nodeRoleName: config.byo.karpenterNodeRole as string,
          discoveryTag: config.byo.karpenterDiscoveryTag as string,
          amiAlias: config.karpenter.amiAlias,
        },
        { provider },
      ),
    );
  }
  const placement = config.byo.manageKarpenterNodePool ? byoKarpenterPlacement(config) : byoPlacement(config);
  return { provider, kubeconfig, context: config.byo.context, placement, ready };
}

/** With a managed NodePool on byo, pods target that pool; configured selectors/tolerations add to it. */
function byoKarpenterPlacement(config: StackConfig): Placement {
  const base = karpenterPlacement(config);
  return {
    ...base,
    nodeSelector: { ...base.nodeSelector, ...config.byo.nodeSelector },
    tolerations: [...base.tolerations, ...config.byo.tolerations],
  };
}
