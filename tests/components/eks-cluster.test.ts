/**
 * The EksCluster component under Pulumi mocks (awsx.ec2.Vpc, eks.Cluster and
 * eks.ManagedNodeGroup are multi-language components: recorded as one resource with their
 * inputs; eks.Cluster's getKubeconfig method and the add-on version lookups are answered by
 * awsMockInvokes, any other invoke throws), and the pure VPC / cluster builders.
 */
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { versions } from "../../versions.js";
import { deployEksCluster } from "../support/eks-fixtures.js";
import {
  EKS_GET_KUBECONFIG,
  GET_ADDON_VERSION,
  awsMockInvokes,
  awsMockOutputs,
  installMocks,
  isSecretOutput,
  mockAddonVersion,
  mockKubeconfig,
  valueOf,
} from "../support/pulumi-mocks.js";

const mocks = installMocks({ outputs: awsMockOutputs, invokes: awsMockInvokes });
const { buildVpcArgs, natGatewayCount, subnetPrefixes } = await import("../../components/aws/vpc.js");

const { config } = parseStackConfig({
  "aws:region": "us-west-2",
  "eks": { systemNodes: { instanceType: "m7g.xlarge", count: 3, diskSizeGiB: 80 } },
});

async function deploy(
  extra: { adminPrincipalArns?: string[] } = {},
  over: { aws?: Partial<typeof config.aws>; eks?: Partial<typeof config.eks> } = {},
) {
  return deployEksCluster(mocks, {
    aws: { ...config.aws, ...over.aws },
    eks: { ...config.eks, ...over.eks },
    ...extra,
  });
}

describe("EksCluster", () => {
  it("builds the VPC over the configured zones with discovery and ELB tags", async () => {
    await deploy();
    const vpc = mocks.get("awsx:ec2:Vpc", "eks-vpc");
    expect(vpc.inputs).toMatchObject({
      cidrBlock: "10.0.0.0/16",
      availabilityZoneNames: ["us-west-2a", "us-west-2b", "us-west-2c"],
      subnetStrategy: "Auto",
      natGateways: { strategy: "Single" },
    });
    expect(vpc.inputs.subnetSpecs).toEqual([
      {
        type: "Private",
        name: "private",
        cidrMask: 19,
        tags: { "karpenter.sh/discovery": "valkey-test", "kubernetes.io/role/internal-elb": "1" },
      },
      { type: "Public", name: "public", cidrMask: 20, tags: { "kubernetes.io/role/elb": "1" } },
    ]);
  });

  it("creates the cluster with API authentication, access entries and no default node group", async () => {
    await deploy({ adminPrincipalArns: ["arn:aws:iam::123456789012:role/admin"] });
    const cluster = mocks.get("eks:index:Cluster", "eks-cluster");
    expect(cluster.inputs).toMatchObject({
      name: "valkey-test",
      version: versions.EKS_VERSION,
      upgradePolicy: { supportType: "STANDARD" },
      authenticationMode: "API",
      skipDefaultNodeGroup: true,
      skipDefaultSecurityGroups: true,
      createOidcProvider: false,
      endpointPublicAccess: true,
      endpointPrivateAccess: true,
      vpcId: "vpc-1",
      privateSubnetIds: ["subnet-p1", "subnet-p2", "subnet-p3"],
      publicSubnetIds: ["subnet-u1", "subnet-u2", "subnet-u3"],
    });
    expect(cluster.inputs.accessEntries).toEqual({
      "admin-0": {
        principalArn: "arn:aws:iam::123456789012:role/admin",
        type: "STANDARD",
        accessPolicies: {
          admin: {
            policyArn: "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
            accessScope: { type: "cluster" },
          },
        },
      },
    });
  });

  it("adds the Graviton system node group from config.eks.systemNodes in private subnets", async () => {
    await deploy();
    const group = mocks.get("eks:index:ManagedNodeGroup", "eks-system");
    expect(group.inputs).toMatchObject({
      amiType: "AL2023_ARM_64_STANDARD",
      capacityType: "ON_DEMAND",
      instanceTypes: ["m7g.xlarge"],
      diskSize: 80,
      scalingConfig: { minSize: 3, maxSize: 3, desiredSize: 3 },
      labels: { "valkey-on-eks/node-role": "system" },
      subnetIds: ["subnet-p1", "subnet-p2", "subnet-p3"],
    });
    const policies = mocks
      .ofType("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
      .filter((r) => r.name.startsWith("eks-system-node-"));
    expect(policies.map((p) => p.inputs.policyArn).sort()).toEqual(
      ["AmazonEC2ContainerRegistryPullOnly", "AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy"].map(
        (p) => `arn:aws:iam::aws:policy/${p}`,
      ),
    );
  });

  it("installs the Pod Identity agent, the EBS CSI driver with a Pod Identity role and the managed CoreDNS add-on", async () => {
    await deploy();
    const v = (addon: string) => mockAddonVersion(addon, versions.EKS_VERSION);
    expect(mocks.get("aws:eks/addon:Addon", "eks-pod-identity-agent").inputs).toMatchObject({
      clusterName: "valkey-test",
      addonName: "eks-pod-identity-agent",
      addonVersion: v("eks-pod-identity-agent"),
    });
    expect(mocks.get("aws:eks/addon:Addon", "eks-ebs-csi").inputs).toMatchObject({
      clusterName: "valkey-test",
      addonName: "aws-ebs-csi-driver",
      addonVersion: v("aws-ebs-csi-driver"),
      podIdentityAssociations: [
        { roleArn: "arn:aws:iam::123456789012:role/eks-ebs-csi-role", serviceAccount: "ebs-csi-controller-sa" },
      ],
    });
    // The Amazon EKS type of CoreDNS, over the self-managed Deployment EKS bootstraps; pulumi-eks installs none.
    const coredns = mocks.get("aws:eks/addon:Addon", "eks-coredns");
    expect(coredns.inputs).toMatchObject({
      clusterName: "valkey-test",
      addonName: "coredns",
      addonVersion: v("coredns"),
      resolveConflictsOnCreate: "OVERWRITE",
    });
    expect(coredns.dependsOn).toContain("eks-system");
    expect(mocks.get("eks:index:Cluster", "eks-cluster").inputs.corednsAddonOptions).toMatchObject({ enabled: false });
    const role = mocks.get("aws:iam/role:Role", "eks-ebs-csi-role");
    expect(JSON.parse(String(role.inputs.assumeRolePolicy))).toEqual({
      Version: "2012-10-17",
      Statement: [
        {
          Effect: "Allow",
          Principal: { Service: "pods.eks.amazonaws.com" },
          Action: ["sts:AssumeRole", "sts:TagSession"],
        },
      ],
    });
    expect(mocks.get("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "eks-ebs-csi-policy").inputs.policyArn).toBe(
      "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy",
    );
  });

  it("pins every add-on, pulumi-eks's VPC CNI and kube-proxy too, at EKS's default for eks.version: a version bump moves all five", async () => {
    const pinned = (): Record<string, string> => {
      const cluster = mocks.get("eks:index:Cluster", "eks-cluster").inputs as {
        vpcCniOptions: { addonVersion: string };
        kubeProxyAddonOptions: { version: string };
      };
      return {
        ...Object.fromEntries(
          mocks.ofType("aws:eks/addon:Addon").map((a) => [String(a.inputs.addonName), String(a.inputs.addonVersion)]),
        ),
        "vpc-cni": cluster.vpcCniOptions.addonVersion,
        "kube-proxy": cluster.kubeProxyAddonOptions.version,
      };
    };
    await deploy({}, { eks: { version: "1.35" } });
    const queries = mocks.invokes.filter((c) => c.token === GET_ADDON_VERSION).map((c) => c.inputs);
    const names = ["eks-pod-identity-agent", "aws-ebs-csi-driver", "coredns", "vpc-cni", "kube-proxy"];
    expect(queries).toEqual(names.map((addonName) => ({ addonName, kubernetesVersion: "1.35", mostRecent: false })));
    // Through the AddonPins step, whose stored versions the add-ons read.
    expect(mocks.ofType("valkey-on-eks:steps:AddonPins").map((r) => [r.name, r.parent])).toEqual([
      ["eks-addon-pins", "eks"],
    ]);
    const pins = mocks.get("pulumi-nodejs:dynamic:Resource", "eks-addon-pins-run");
    expect(pins.inputs).toMatchObject({ kubernetesVersion: "1.35", overrides: {} });
    const before = pinned();
    expect(Object.keys(before).sort()).toEqual([...names].sort());
    await deploy({}, { eks: { version: "1.36" } });
    const after = pinned();
    for (const [addon, version] of Object.entries(after)) {
      expect(version, addon).toBe(mockAddonVersion(addon, "1.36"));
      expect(version, addon).not.toBe(before[addon]);
    }
  });

  it("an add-on version set in eks.addonVersions wins over EKS's default", async () => {
    await deploy({}, { eks: { addonVersions: { kubeProxy: "v1.36.0-eksbuild.9", coredns: "v1.12.1-eksbuild.2" } } });
    const cluster = mocks.get("eks:index:Cluster", "eks-cluster").inputs as {
      kubeProxyAddonOptions: { version: string };
      vpcCniOptions: { addonVersion: string };
    };
    expect(cluster.kubeProxyAddonOptions.version).toBe("v1.36.0-eksbuild.9");
    expect(cluster.vpcCniOptions.addonVersion).toBe(mockAddonVersion("vpc-cni", versions.EKS_VERSION));
    expect(mocks.get("aws:eks/addon:Addon", "eks-coredns").inputs.addonVersion).toBe("v1.12.1-eksbuild.2");
  });

  it("Auto Mode installs no add-on and asks for no add-on version", async () => {
    await deploy({}, { eks: { autoMode: true } });
    expect(mocks.ofType("aws:eks/addon:Addon")).toEqual([]);
    expect(mocks.ofType("valkey-on-eks:steps:AddonPins")).toEqual([]);
    expect(mocks.calls).not.toContain(GET_ADDON_VERSION);
  });

  it("tags the cluster security group for Karpenter discovery", async () => {
    await deploy();
    expect(mocks.get("aws:ec2/tag:Tag", "eks-cluster-sg-discovery").inputs).toEqual({
      resourceId: "sg-cluster",
      key: "karpenter.sh/discovery",
      value: "valkey-test",
    });
  });

  it("creates the default gp3 StorageClass through the cluster's provider and keeps the kubeconfig secret", async () => {
    const cluster = await deploy();
    const sc = mocks.get("kubernetes:storage.k8s.io/v1:StorageClass", "eks-gp3");
    expect(sc.provider).toMatch(/::eks-k8s::/);
    expect(sc.inputs).toMatchObject({
      metadata: { name: "gp3", annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
      provisioner: "ebs.csi.aws.com",
      parameters: { type: "gp3", encrypted: "true" },
      volumeBindingMode: "WaitForFirstConsumer",
      allowVolumeExpansion: true,
    });
    expect(await isSecretOutput(cluster.kubeconfig)).toBe(true);
    expect(await valueOf(cluster.kubeconfig)).toBe(mockKubeconfig({}));
    expect(mocks.get("pulumi:providers:kubernetes", "eks-k8s").redacted.kubeconfig).toBe("[secret]");
    // A script change updates the release's ConfigMap in place (provider-args.ts), never replaces it.
    expect(mocks.get("pulumi:providers:kubernetes", "eks-k8s").inputs.enableConfigMapMutable).toBe("true");
    expect(cluster.clusterName).toBe("valkey-test");
  });

  it("builds the kubeconfig with getKubeconfig from aws.profile / aws.roleArn, not kubeconfigJson (which pulumi-eks writes without the profile)", async () => {
    const roleArn = "arn:aws:iam::123456789012:role/deployer";
    const cluster = await deploy({}, { aws: { profile: "ops", roleArn } });
    const call = mocks.invokes.find((c) => c.token === EKS_GET_KUBECONFIG);
    expect(call).toMatchObject({ self: "eks-cluster", inputs: { profileName: "ops", roleArn } });
    const expected = mockKubeconfig({ profileName: "ops", roleArn });
    expect(expected).toContain('"--profile","ops"');
    expect(await valueOf(cluster.kubeconfig)).toBe(expected);
    expect(mocks.get("pulumi:providers:kubernetes", "eks-k8s").inputs.kubeconfig).toBe(expected);
  });
});

describe("VPC builders", () => {
  it("sizes subnets from the VPC prefix and zone count", () => {
    expect(subnetPrefixes("10.0.0.0/16", 3)).toEqual({ zone: 18, private: 19, public: 20 });
    expect(subnetPrefixes("10.0.0.0/16", 2)).toEqual({ zone: 17, private: 18, public: 19 });
    expect(subnetPrefixes("10.0.0.0/24", 3)).toEqual({ zone: 26, private: 27, public: 28 });
    expect(() => subnetPrefixes("10.0.0.0/24", 5)).toThrow(/too small/);
  });

  it("uses one NAT gateway per zone when asked (network.natGateways: perZone), one for the VPC by default", () => {
    const args = buildVpcArgs({
      cidr: "10.1.0.0/20",
      zones: ["eu-west-1a", "eu-west-1b"],
      clusterName: "c",
      natGateways: "perZone",
    });
    expect(args.natGateways).toEqual({ strategy: "OnePerAz" });
    expect(args.availabilityZoneCidrMask).toBe(21);
    expect(
      buildVpcArgs({ cidr: "10.1.0.0/20", zones: ["eu-west-1a"], clusterName: "c", natGateways: "single" }).natGateways,
    ).toEqual({ strategy: "Single" });
    expect([natGatewayCount("single", 3), natGatewayCount("perZone", 3)]).toEqual([1, 3]);
  });
});
