/**
 * Pure builders for the EKS cluster: the @pulumi/eks Cluster arguments, the system managed node
 * group, the managed add-ons and the default gp3 StorageClass. Plain values in, plain args out.
 */
import type * as aws from "@pulumi/aws";
import type * as eks from "@pulumi/eks";
import type * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import type { EksConfig } from "../../config/types.js";
import { buildAutoModeOptions, buildNetworkAddonOptions } from "./auto-mode.js";

/** Node label of the system managed node group; the Karpenter controller is pinned to it. */
export const SYSTEM_NODE_LABEL_KEY = "valkey-on-eks/node-role";
export const SYSTEM_NODE_LABELS: Readonly<Record<string, string>> = { [SYSTEM_NODE_LABEL_KEY]: "system" };
/** The access policy cluster administrators get. */
export const CLUSTER_ADMIN_POLICY = "AmazonEKSClusterAdminPolicy";
/** The EBS CSI controller's service account (fixed by the add-on). */
export const EBS_CSI_SERVICE_ACCOUNT = "ebs-csi-controller-sa";
/** Name of the default StorageClass (config `valkey.persistence.storageClass` defaults to it on eks). */
export const GP3_STORAGE_CLASS = "gp3";

export interface ClusterBuildInput {
  clusterName: string;
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
export function buildAdminAccessEntries(partition: string, principals: pulumi.Input<string>[]): Record<string, eks.types.input.AccessEntryArgs> {
  return Object.fromEntries(
    principals.map((principalArn, index) => [
      `admin-${index}`,
      {
        principalArn,
        type: "STANDARD",
        accessPolicies: {
          admin: { policyArn: `arn:${partition}:eks::aws:cluster-access-policy/${CLUSTER_ADMIN_POLICY}`, accessScope: { type: "cluster" } },
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
    ...buildNetworkAddonOptions(input.eks.autoMode === true),
  };
}

/**
 * `providerCredentialOpts` for the kubeconfig pulumi-eks writes (`aws eks get-token` with
 * `AWS_PROFILE` and `--role-arn`), so the identity that gets a cluster token is the one the AWS
 * provider created the cluster with (the cluster creator's admin access entry). Omitted when
 * neither is set: both then use the ambient credentials.
 */
export function buildCredentialOpts(credentials: ClusterBuildInput["credentials"]): Pick<eks.ClusterArgs, "providerCredentialOpts"> {
  const profileName = credentials?.profile;
  const roleArn = credentials?.roleArn;
  if (profileName === undefined && roleArn === undefined) return {};
  return { providerCredentialOpts: { ...(profileName === undefined ? {} : { profileName }), ...(roleArn === undefined ? {} : { roleArn }) } };
}

/** The system node group's shape (without cluster, role and subnets, which are resources). */
export function buildSystemNodeGroupShape(
  nodes: EksConfig["systemNodes"],
): Pick<eks.ManagedNodeGroupArgs, "amiType" | "capacityType" | "instanceTypes" | "diskSize" | "scalingConfig" | "labels"> {
  return {
    amiType: "AL2023_ARM_64_STANDARD",
    capacityType: "ON_DEMAND",
    instanceTypes: [nodes.instanceType],
    diskSize: nodes.diskSizeGiB,
    scalingConfig: { minSize: nodes.count, maxSize: nodes.count, desiredSize: nodes.count },
    labels: { ...SYSTEM_NODE_LABELS },
  };
}

/** The managed add-ons: the Pod Identity agent, and the EBS CSI driver using Pod Identity. */
export function buildAddonArgs(
  clusterName: pulumi.Input<string>,
  ebsCsiRoleArn: pulumi.Input<string>,
): { podIdentityAgent: aws.eks.AddonArgs; ebsCsiDriver: aws.eks.AddonArgs } {
  const common = { clusterName, resolveConflictsOnCreate: "OVERWRITE", resolveConflictsOnUpdate: "OVERWRITE" };
  return {
    podIdentityAgent: { ...common, addonName: "eks-pod-identity-agent" },
    ebsCsiDriver: {
      ...common,
      addonName: "aws-ebs-csi-driver",
      podIdentityAssociations: [{ roleArn: ebsCsiRoleArn, serviceAccount: EBS_CSI_SERVICE_ACCOUNT }],
    },
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
