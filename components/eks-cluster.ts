/**
 * EksCluster: the VPC, the EKS control plane (access entries only), a small Graviton managed node
 * group for system pods and the Karpenter controller, the Pod Identity agent, EBS CSI and CoreDNS
 * managed add-ons (each at the version resolved for `eks.version`), the Karpenter discovery tag on
 * the cluster security group, and the default gp3 StorageClass. The kubeconfig of the Kubernetes
 * provider and of every post-deploy step carries the AWS provider's profile and role.
 * Thin wiring over the builders in ./aws/.
 */
import * as aws from "@pulumi/aws";
import * as awsx from "@pulumi/awsx";
import * as eks from "@pulumi/eks";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { AwsConfig, EksConfig } from "../config/types.js";
import { buildAutoModeGp3StorageClass, buildAutoModeNetworkPolicyConfigMap } from "./aws/auto-mode.js";
import {
  addonVersionQuery,
  buildAddonArgs,
  buildClusterArgs,
  buildGp3StorageClass,
  buildSystemNodeGroupShape,
  kubeconfigOptions,
  PINNED_ADDONS,
  type PinnedAddon,
} from "./aws/eks.js";
import {
  EBS_CSI_POLICY_PATH,
  NODE_POLICY_NAMES,
  ec2TrustPolicy,
  managedPolicyArn,
  partitionOf,
  podIdentityTrustPolicy,
} from "./aws/iam.js";
import { DISCOVERY_TAG_KEY, buildVpcArgs, type NatGateways } from "./aws/vpc.js";
import { PROVIDER_BEHAVIOUR } from "./kubernetes/provider-args.js";
import { AddonPins } from "./steps/addon-pins/component.js";

export { SYSTEM_NODE_LABELS } from "./aws/eks.js";
export { GP3_STORAGE_CLASS } from "./shared.js";

export interface EksClusterArgs {
  /** `aws` config: region and the zones the VPC spans. */
  aws: AwsConfig;
  /** `eks` config: version, VPC CIDR, endpoint access, system nodes. */
  eks: EksConfig;
  /** EKS cluster name (also the `karpenter.sh/discovery` tag value). @default `valkey-${pulumi.getStack()}` */
  clusterName?: string;
  /**
   * IAM principal ARNs given cluster-admin access entries (the deploying identity is admin already).
   * @default args.eks.adminPrincipalArns
   */
  adminPrincipalArns?: pulumi.Input<string>[];
  /** NAT gateways: one shared, or one per zone (config `network.natGateways`). @default "single" */
  natGateways?: NatGateways;
  /** Tags on the cluster and VPC. @default {} */
  tags?: Record<string, string>;
}

interface SelfManagedComputeInput {
  cluster: eks.Cluster;
  subnetIds: pulumi.Input<pulumi.Input<string>[]>;
  systemNodes: EksConfig["systemNodes"];
  pins: AddonPins;
  clusterName: string;
  partition: string;
  tags: Record<string, string>;
  remote: pulumi.CustomResourceOptions;
}

/** What the VPC and the control plane are built with. */
interface ClusterScope {
  clusterName: string;
  partition: string;
  tags: Record<string, string>;
  /** Options of the multi-language children (awsx, pulumi-eks): the parent and the AWS provider. */
  remote: pulumi.ComponentResourceOptions;
  /** The stored add-on versions (AddonPins); absent in Auto Mode. */
  pins?: AddonPins;
}

/** The VPC and the EKS control plane in it. */
function vpcAndControlPlane(
  name: string,
  args: EksClusterArgs,
  s: ClusterScope,
): { vpc: awsx.ec2.Vpc; cluster: eks.Cluster } {
  const { clusterName } = s;
  const vpc = new awsx.ec2.Vpc(
    `${name}-vpc`,
    buildVpcArgs({
      cidr: args.eks.vpcCidr,
      zones: args.aws.zones,
      clusterName,
      natGateways: args.natGateways ?? "single",
    }),
    s.remote,
  );
  const cluster = new eks.Cluster(
    `${name}-cluster`,
    buildClusterArgs({
      clusterName,
      eks: args.eks,
      ...(s.pins === undefined
        ? {}
        : { addonVersions: { vpcCni: pinOf(s.pins, "vpcCni"), kubeProxy: pinOf(s.pins, "kubeProxy") } }),
      vpcId: vpc.vpcId,
      publicSubnetIds: vpc.publicSubnetIds,
      privateSubnetIds: vpc.privateSubnetIds,
      adminPrincipalArns: args.adminPrincipalArns ?? args.eks.adminPrincipalArns,
      credentials: { profile: args.aws.profile, roleArn: args.aws.roleArn },
      partition: s.partition,
      tags: s.tags,
    }),
    s.remote,
  );
  return { vpc, cluster };
}

/** One add-on's stored version. */
const pinOf = (pins: AddonPins, addon: PinnedAddon): pulumi.Output<string> =>
  pins.versions.apply((v) => {
    const version = v[addon];
    if (version === undefined) throw new Error(`AddonPins stored no version for the ${PINNED_ADDONS[addon]} add-on`);
    return version;
  });

/**
 * The AddonPins step of a cluster without Auto Mode: EKS's default version of every add-on for
 * `eks.version`, asked now through the stack's AWS provider, stored when the step runs.
 */
function addonPins(name: string, parent: pulumi.ComponentResource, eksConfig: EksConfig): AddonPins {
  const awsProvider = parent.getProvider("aws::");
  const invokeOpts = { parent, ...(awsProvider === undefined ? {} : { provider: awsProvider }) };
  const addons = Object.keys(PINNED_ADDONS) as PinnedAddon[];
  const resolved = pulumi
    .all(addons.map((a) => aws.eks.getAddonVersionOutput(addonVersionQuery(a, eksConfig.version), invokeOpts).version))
    .apply((versions) => Object.fromEntries(addons.map((a, i) => [a, versions[i] ?? ""])));
  const overrides = Object.fromEntries(
    Object.entries(eksConfig.addonVersions).filter((e): e is [string, string] => e[1] !== undefined),
  );
  return new AddonPins(`${name}-addon-pins`, { kubernetesVersion: eksConfig.version, overrides, resolved }, { parent });
}

/** The EKS cluster's name unless `clusterName` is given: what the preflight reads the live cluster by. */
export const defaultClusterName = (stack: string): string => `valkey-${stack}`;

/**
 * The default gp3 StorageClass (after the compute, or the cluster in Auto Mode) and, in Auto Mode,
 * the ConfigMap that turns on its network policy enforcement.
 */
function inClusterDefaults(
  name: string,
  parent: pulumi.Resource,
  provider: k8s.Provider,
  autoMode: boolean,
  compute: pulumi.Resource[],
  cluster: eks.Cluster,
): { gp3: k8s.storage.v1.StorageClass; networkPolicy: k8s.core.v1.ConfigMap[] } {
  const gp3 = new k8s.storage.v1.StorageClass(
    `${name}-gp3`,
    autoMode ? buildAutoModeGp3StorageClass() : buildGp3StorageClass(),
    {
      parent,
      provider,
      dependsOn: compute.length > 0 ? compute : [cluster],
    },
  );
  const networkPolicy = autoMode
    ? [
        new k8s.core.v1.ConfigMap(`${name}-network-policy`, buildAutoModeNetworkPolicyConfigMap(), {
          parent,
          provider,
          dependsOn: [cluster],
        }),
      ]
    : [];
  return { gp3, networkPolicy };
}

export class EksCluster extends pulumi.ComponentResource {
  /** The EKS cluster name (plain: known before deployment). */
  readonly clusterName: string;
  /** The kubeconfig as a JSON string (secret). */
  readonly kubeconfig: pulumi.Output<string>;
  /** Kubernetes provider for this cluster. */
  readonly provider: k8s.Provider;
  /** The EKS-created cluster security group (tagged for Karpenter discovery). */
  readonly clusterSecurityGroupId: pulumi.Output<string>;
  readonly vpcId: pulumi.Output<string>;
  readonly privateSubnetIds: pulumi.Output<string[]>;
  readonly publicSubnetIds: pulumi.Output<string[]>;
  /** The system managed node group, the add-ons and the StorageClass: what in-cluster workloads wait for. */
  readonly ready: pulumi.Resource[];

  constructor(name: string, args: EksClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:aws:EksCluster", name, {}, opts);
    const parent = { parent: this };
    const clusterName = args.clusterName ?? defaultClusterName(pulumi.getStack());
    const partition = partitionOf(args.aws.region);
    const tags = { "valkey-on-eks/cluster": clusterName, ...args.tags };
    // Custom AWS children inherit the AWS provider through `parent`; multi-language components
    // (awsx, pulumi-eks) do not: the engine only forwards the providers their own options name.
    const awsProvider = this.getProvider("aws::");
    const remote = { parent: this, ...(awsProvider === undefined ? {} : { providers: [awsProvider] }) };
    // Auto Mode: EKS runs the nodes' add-ons; otherwise each at the version stored in the state.
    const pins = args.eks.autoMode ? undefined : addonPins(name, this, args.eks);
    const { vpc, cluster } = vpcAndControlPlane(name, args, {
      clusterName,
      partition,
      tags,
      remote,
      ...(pins === undefined ? {} : { pins }),
    });

    const sgTag = new aws.ec2.Tag(
      `${name}-cluster-sg-discovery`,
      { resourceId: cluster.clusterSecurityGroupId, key: DISCOVERY_TAG_KEY, value: clusterName },
      parent,
    );

    // Auto Mode: EKS runs the nodes' add-ons and Karpenter; no node group, no add-on resources.
    const compute =
      pins === undefined
        ? []
        : this.selfManagedCompute(name, {
            cluster,
            subnetIds: vpc.privateSubnetIds,
            systemNodes: args.eks.systemNodes,
            pins,
            clusterName,
            partition,
            tags,
            remote,
          });

    // Not `cluster.kubeconfigJson`: pulumi-eks leaves the profile out of it (see buildCredentialOpts).
    this.kubeconfig = pulumi.secret(
      cluster.getKubeconfig(kubeconfigOptions({ profile: args.aws.profile, roleArn: args.aws.roleArn })).result,
    );
    this.provider = new k8s.Provider(
      `${name}-k8s`,
      { kubeconfig: this.kubeconfig, enableServerSideApply: true, ...PROVIDER_BEHAVIOUR },
      parent,
    );
    const { gp3, networkPolicy } = inClusterDefaults(name, this, this.provider, args.eks.autoMode, compute, cluster);

    this.clusterName = clusterName;
    this.clusterSecurityGroupId = cluster.clusterSecurityGroupId;
    this.vpcId = vpc.vpcId;
    this.privateSubnetIds = vpc.privateSubnetIds;
    this.publicSubnetIds = vpc.publicSubnetIds;
    this.ready = [...compute, ...networkPolicy, gp3, sgTag];
    this.registerOutputs({
      clusterName,
      kubeconfig: this.kubeconfig,
      clusterSecurityGroupId: this.clusterSecurityGroupId,
      vpcId: this.vpcId,
      privateSubnetIds: this.privateSubnetIds,
      publicSubnetIds: this.publicSubnetIds,
    });
  }

  /**
   * The system managed node group and its role, the Pod Identity agent, EBS CSI and CoreDNS add-ons (platform eks
   * without Auto Mode).
   */
  private selfManagedCompute(name: string, c: SelfManagedComputeInput): pulumi.Resource[] {
    const parent = { parent: this };
    const { partition, tags, clusterName } = c;
    const nodeRole = new aws.iam.Role(
      `${name}-system-node-role`,
      { assumeRolePolicy: JSON.stringify(ec2TrustPolicy()), tags },
      parent,
    );
    const nodePolicies = NODE_POLICY_NAMES.map(
      (policy) =>
        new aws.iam.RolePolicyAttachment(
          `${name}-system-node-${policy}`,
          { role: nodeRole.name, policyArn: managedPolicyArn(partition, policy) },
          parent,
        ),
    );
    const systemNodes = new eks.ManagedNodeGroup(
      `${name}-system`,
      { ...buildSystemNodeGroupShape(c.systemNodes), cluster: c.cluster, nodeRole, subnetIds: c.subnetIds, tags },
      { ...c.remote, dependsOn: nodePolicies },
    );

    const ebsRole = new aws.iam.Role(
      `${name}-ebs-csi-role`,
      { assumeRolePolicy: JSON.stringify(podIdentityTrustPolicy()), tags },
      parent,
    );
    const ebsPolicy = new aws.iam.RolePolicyAttachment(
      `${name}-ebs-csi-policy`,
      { role: ebsRole.name, policyArn: managedPolicyArn(partition, EBS_CSI_POLICY_PATH) },
      parent,
    );
    // Each add-on at its stored version (AddonPins). Plain cluster name: the add-ons wait for the
    // node group, which waits for the cluster.
    const addonArgs = buildAddonArgs(clusterName, ebsRole.arn, {
      podIdentityAgent: pinOf(c.pins, "podIdentityAgent"),
      ebsCsiDriver: pinOf(c.pins, "ebsCsiDriver"),
      coredns: pinOf(c.pins, "coredns"),
    });
    const podIdentityAgent = new aws.eks.Addon(`${name}-pod-identity-agent`, addonArgs.podIdentityAgent, {
      parent: this,
      dependsOn: [systemNodes],
    });
    const ebsCsi = new aws.eks.Addon(`${name}-ebs-csi`, addonArgs.ebsCsiDriver, {
      parent: this,
      dependsOn: [systemNodes, podIdentityAgent, ebsPolicy],
    });
    const coredns = new aws.eks.Addon(`${name}-coredns`, addonArgs.coredns, { parent: this, dependsOn: [systemNodes] });
    return [systemNodes, podIdentityAgent, ebsCsi, coredns];
  }
}
