/**
 * Pure builders for the EKS cluster: the @pulumi/eks Cluster arguments, the system managed node
 * group, the managed add-ons and the default gp3 StorageClass. Plain values in, plain args out.
 */
import type * as aws from "@pulumi/aws";
import type * as eks from "@pulumi/eks";
import type * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import type { EksConfig } from "../../config/types.js";
import { GP3_STORAGE_CLASS } from "../shared.js";
import { buildAutoModeOptions, buildNetworkAddonOptions } from "./auto-mode.js";

/** Node label of the system managed node group; the Karpenter controller is pinned to it. */
export const SYSTEM_NODE_LABEL_KEY = "valkey-on-eks/node-role";
export const SYSTEM_NODE_LABELS: Readonly<Record<string, string>> = { [SYSTEM_NODE_LABEL_KEY]: "system" };
/** The access policy cluster administrators get. */
export const CLUSTER_ADMIN_POLICY = "AmazonEKSClusterAdminPolicy";
/** The EBS CSI controller's service account (fixed by the add-on). */
export const EBS_CSI_SERVICE_ACCOUNT = "ebs-csi-controller-sa";

export interface ClusterBuildInput {
  clusterName: string;
  /** The stored versions of pulumi-eks's VPC CNI and kube-proxy add-ons (AddonPins); absent in Auto Mode. */
  addonVersions?: Pick<Record<PinnedAddon, pulumi.Input<string>>, "vpcCni" | "kubeProxy">;
  eks: Pick<EksConfig, "version" | "publicEndpoint" | "publicAccessCidrs" | "supportType"> & { autoMode?: boolean };
  /** The AWS provider's profile / role: the kubeconfig's `aws eks get-token` uses the same identity. */
  credentials?: { profile?: string; roleArn?: string };
  vpcId: pulumi.Input<string>;
  publicSubnetIds: pulumi.Input<pulumi.Input<string>[]>;
  privateSubnetIds: pulumi.Input<pulumi.Input<string>[]>;
  /** IAM principals (roles/users) granted cluster-admin through access entries. */
  adminPrincipalArns: pulumi.Input<string>[];
  partition: string;
  tags: Record<string, string>;
}

/** Access entries granting each admin principal AmazonEKSClusterAdminPolicy cluster-wide. */
export function buildAdminAccessEntries(
  partition: string,
  principals: pulumi.Input<string>[],
): Record<string, eks.types.input.AccessEntryArgs> {
  return Object.fromEntries(
    principals.map((principalArn, index) => [
      `admin-${index}`,
      {
        principalArn,
        type: "STANDARD",
        accessPolicies: {
          admin: {
            policyArn: `arn:${partition}:eks::aws:cluster-access-policy/${CLUSTER_ADMIN_POLICY}`,
            accessScope: { type: "cluster" },
          },
        },
      },
    ]),
  );
}

/**
 * The @pulumi/eks Cluster: access entries only (authentication mode API), no default node group,
 * no Pulumi-made security groups (nodes and Karpenter use the EKS-created cluster security group),
 * no OIDC provider (Pod Identity instead of IRSA), nodes in private subnets.
 */
export function buildClusterArgs(input: ClusterBuildInput): eks.ClusterArgs {
  return {
    name: input.clusterName,
    version: input.eks.version,
    vpcId: input.vpcId,
    publicSubnetIds: input.publicSubnetIds,
    privateSubnetIds: input.privateSubnetIds,
    authenticationMode: "API",
    accessEntries: buildAdminAccessEntries(input.partition, input.adminPrincipalArns),
    skipDefaultNodeGroup: true,
    skipDefaultSecurityGroups: true,
    createOidcProvider: false,
    endpointPublicAccess: input.eks.publicEndpoint,
    ...(input.eks.publicEndpoint ? { publicAccessCidrs: [...input.eks.publicAccessCidrs] } : {}),
    ...buildCredentialOpts(input.credentials),
    ...(input.eks.autoMode === true ? { autoMode: buildAutoModeOptions() } : {}),
    endpointPrivateAccess: true,
    tags: { ...input.tags },
    // Standard support by default: a version past standard support is upgraded, not billed at the extended rate.
    upgradePolicy: { supportType: input.eks.supportType },
    // Last: in Auto Mode it turns pulumi-eks's CoreDNS and VPC CNI add-ons off (auto-mode.ts).
    ...buildNetworkAddonOptions(input.eks.autoMode === true, input.addonVersions),
  };
}

/**
 * The identity of every kubeconfig the stack uses: the AWS provider's profile and role, so the
 * identity that gets a cluster token (`aws eks get-token`) is the one that created the cluster
 * (the creator's admin access entry). Empty when neither is set: both use the ambient credentials.
 */
export function kubeconfigOptions(credentials: ClusterBuildInput["credentials"]): eks.KubeconfigOptions {
  const profileName = credentials?.profile;
  const roleArn = credentials?.roleArn;
  return { ...(profileName === undefined ? {} : { profileName }), ...(roleArn === undefined ? {} : { roleArn }) };
}

/**
 * `providerCredentialOpts`: what pulumi-eks's own Kubernetes provider (inside the component) uses.
 * NOT the kubeconfig the stack's provider and steps get: pulumi-eks v4.3.0 builds
 * `kubeconfigJson` without the profile (nodejs/eks/cluster/cluster.ts: `generateKubeconfig(...,
 * includeProfile = false)` for the exported `kubeconfigWithoutProfile`); only
 * `cluster.getKubeconfig({ profileName, roleArn })` passes `--profile` (EksCluster uses it).
 * Omitted when neither is set.
 */
export function buildCredentialOpts(
  credentials: ClusterBuildInput["credentials"],
): Pick<eks.ClusterArgs, "providerCredentialOpts"> {
  const opts = kubeconfigOptions(credentials);
  return Object.keys(opts).length === 0 ? {} : { providerCredentialOpts: opts };
}

/** The system node group's shape (without cluster, role and subnets, which are resources). */
export function buildSystemNodeGroupShape(
  nodes: EksConfig["systemNodes"],
): Pick<
  eks.ManagedNodeGroupArgs,
  "amiType" | "capacityType" | "instanceTypes" | "diskSize" | "scalingConfig" | "labels"
> {
  return {
    amiType: "AL2023_ARM_64_STANDARD",
    capacityType: "ON_DEMAND",
    instanceTypes: [nodes.instanceType],
    diskSize: nodes.diskSizeGiB,
    scalingConfig: { minSize: nodes.count, maxSize: nodes.count, desiredSize: nodes.count },
    labels: { ...SYSTEM_NODE_LABELS },
  };
}

/** The managed add-ons the stack installs on a cluster without Auto Mode (their EKS names). */
export const MANAGED_ADDONS = {
  podIdentityAgent: "eks-pod-identity-agent",
  ebsCsiDriver: "aws-ebs-csi-driver",
  coredns: "coredns",
} as const;
export type ManagedAddon = keyof typeof MANAGED_ADDONS;

/** Every EKS add-on whose version the stack pins (AddonPins): its own, and pulumi-eks's VPC CNI and kube-proxy. */
export const PINNED_ADDONS = { ...MANAGED_ADDONS, vpcCni: "vpc-cni", kubeProxy: "kube-proxy" } as const;
export type PinnedAddon = keyof typeof PINNED_ADDONS;

/**
 * The `aws.eks.getAddonVersion` query for an add-on on the configured Kubernetes version: the
 * version EKS marks as the default for that Kubernetes version (`mostRecent: false`; "Determines
 * if the most recent or default version of the addon should be returned", @pulumi/aws
 * eks/getAddonVersion; the same list as `aws eks describe-addon-versions --kubernetes-version`).
 * Asked at every preview with the plain config version; what is installed is what the AddonPins
 * step stored when it last ran (components/steps/addon-pins/), so an `eks.version` bump moves every
 * add-on and a new default alone moves none. pulumi-eks, left to itself, resolves its VPC CNI and
 * kube-proxy add-ons to the most recent version at every preview (v4.3.0
 * nodejs/eks/addons/cni-addon.ts, cluster.ts: `mostRecent: true`); the stack hands it the pins.
 */
export function addonVersionQuery(addon: PinnedAddon, kubernetesVersion: string): aws.eks.GetAddonVersionArgs {
  return { addonName: PINNED_ADDONS[addon], kubernetesVersion, mostRecent: false };
}

/**
 * The managed add-ons: the Pod Identity agent, the EBS CSI driver using Pod Identity, and CoreDNS
 * as the Amazon EKS add-on instead of the self-managed copy EKS bootstraps ("We recommend adding
 * the Amazon EKS type of the add-on to your cluster instead of using the self-managed type",
 * https://docs.aws.amazon.com/eks/latest/userguide/coredns-add-on-self-managed-update.html; created
 * over the self-managed Deployment with OVERWRITE,
 * https://docs.aws.amazon.com/eks/latest/userguide/coredns-add-on-create.html). Each at the version
 * resolved for the cluster's Kubernetes version ({@link addonVersionQuery}).
 */
export function buildAddonArgs(
  clusterName: pulumi.Input<string>,
  ebsCsiRoleArn: pulumi.Input<string>,
  versions: Record<ManagedAddon, pulumi.Input<string>>,
): Record<ManagedAddon, aws.eks.AddonArgs> {
  const common = { clusterName, resolveConflictsOnCreate: "OVERWRITE", resolveConflictsOnUpdate: "OVERWRITE" };
  return {
    podIdentityAgent: {
      ...common,
      addonName: MANAGED_ADDONS.podIdentityAgent,
      addonVersion: versions.podIdentityAgent,
    },
    ebsCsiDriver: {
      ...common,
      addonName: MANAGED_ADDONS.ebsCsiDriver,
      addonVersion: versions.ebsCsiDriver,
      podIdentityAssociations: [{ roleArn: ebsCsiRoleArn, serviceAccount: EBS_CSI_SERVICE_ACCOUNT }],
    },
    coredns: { ...common, addonName: MANAGED_ADDONS.coredns, addonVersion: versions.coredns },
  };
}

/** The cluster's default StorageClass: encrypted gp3 EBS volumes bound in the pod's zone. */
export function buildGp3StorageClass(): k8s.storage.v1.StorageClassArgs {
  return {
    metadata: { name: GP3_STORAGE_CLASS, annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
    provisioner: "ebs.csi.aws.com",
    parameters: { "type": "gp3", "encrypted": "true", "csi.storage.k8s.io/fstype": "ext4" },
    volumeBindingMode: "WaitForFirstConsumer",
    allowVolumeExpansion: true,
    reclaimPolicy: "Delete",
  };
}
