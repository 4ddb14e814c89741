/**
 * EKS test fixtures: cluster args built from the default stack config, and an EksCluster
 * deployed under the installed Pulumi mocks (the component is imported on first use, after
 * installMocks()).
 */
import { buildClusterArgs, type ClusterBuildInput } from "../../components/aws/eks.js";
import type { EksClusterArgs } from "../../components/eks-cluster.js";
import { parseStackConfig } from "../../config/schema.js";
import { settle, valueOf, type MockRecorder } from "./pulumi-mocks.js";

/**
 * buildClusterArgs for the default stack config's `eks` section (us-west-2) with placeholder
 * network ids, no admins and no tags; `over` replaces any input.
 */
export function defaultClusterArgs(over: Partial<ClusterBuildInput> = {}): ReturnType<typeof buildClusterArgs> {
  const { config } = parseStackConfig({ "aws:region": "us-west-2" });
  return buildClusterArgs({
    clusterName: "c",
    eks: config.eks,
    vpcId: "v",
    publicSubnetIds: [],
    privateSubnetIds: [],
    adminPrincipalArns: [],
    partition: "aws",
    tags: {},
    ...over,
  });
}

/** Resets `mocks`, then builds EksCluster "eks" for cluster "valkey-test" and waits until its kubeconfig resolved. */
export async function deployEksCluster(mocks: MockRecorder, args: Omit<EksClusterArgs, "clusterName">) {
  const { EksCluster } = await import("../../components/eks-cluster.js");
  mocks.reset();
  const cluster = new EksCluster("eks", { ...args, clusterName: "valkey-test" });
  await settle();
  await valueOf(cluster.kubeconfig);
  await settle();
  return cluster;
}
