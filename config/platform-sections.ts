/**
 * The platform sections of the stack-file schema (sections.ts composes them): `aws` (region,
 * zones, credentials), `eks` (the cluster), `karpenter` (the install and the Valkey NodePool) and
 * `network` (the VPC's NAT gateways). Same conventions as sections.ts: strict maps, defaults and
 * descriptions here, README's table rendered from them.
 */
import { z } from "zod";
import { versions } from "../versions.js";
import {
  ipv4Cidr,
  IAM_PRINCIPAL_RE,
  IAM_ROLE_ARN_RE,
  REGION_RE,
  ZONE_RE,
  count,
  cpuQuantity,
  flag,
  gravitonInstanceType,
  memoryQuantity,
  section,
  unique,
} from "./fields.js";
import { KNOWN_INSTANCE_SIZES, isGravitonFamily } from "./instance-types.js";

export const awsSchema = section(
  {
    region: z
      .string()
      .regex(REGION_RE, { error: "must be an AWS region such as us-west-2" })
      .optional()
      .describe("AWS region.")
      .meta({ defaultText: '`aws:region`, else "us-west-2"' }),
    zones: z
      .array(z.string().regex(ZONE_RE, { error: "must be an availability zone such as us-west-2a" }))
      .min(1)
      .superRefine(unique("zone"))
      .optional()
      .describe(
        "Availability zones Valkey pods spread over (hard AZ spread, DoNotSchedule); unique, and in `region` on eks.",
      )
      .meta({ defaultText: "`<region>a`, `<region>b`, `<region>c`" }),
    profile: z
      .string()
      .regex(/^[\w+=,.@-]{1,128}$/, { error: "must be a profile name from ~/.aws/config (letters, digits, _+=,.@-)" })
      .optional()
      .describe(
        "AWS CLI profile of the AWS provider and of every kubeconfig the stack writes (`aws eks get-token --profile`: the Kubernetes provider, the post-deploy steps, the `kubeconfig` output).",
      )
      .meta({ defaultText: "the ambient credentials (AWS_PROFILE, env, instance role)" }),
    roleArn: z
      .string()
      .regex(IAM_ROLE_ARN_RE, { error: "must be an IAM role ARN such as arn:aws:iam::123456789012:role/deployer" })
      .optional()
      .describe(
        "IAM role the AWS provider assumes; every kubeconfig the stack writes gets its cluster token as the same role.",
      )
      .meta({ defaultText: "none" }),
  },
  "AWS region, availability zones and credentials (platform eks).",
);

/** One EKS add-on's version (`aws eks describe-addon-versions --addon-name <name>` lists them), optional. */
const addonVersion = (addon: string) =>
  z
    .string()
    .regex(/^v\d+\.\d+\.\d+-eksbuild\.\d+$/, { error: 'must be an EKS add-on version such as "v1.20.4-eksbuild.1"' })
    .optional()
    .describe(
      `Version of the ${addon} add-on (\`aws eks describe-addon-versions --addon-name ${addon} --kubernetes-version <eks.version>\`). Unset: EKS's default for eks.version, kept once installed.`,
    );

export const eksSchema = section(
  {
    version: z
      .string()
      .regex(/^1\.\d{2}$/, { error: 'must be a Kubernetes minor version such as "1.33"' })
      .default(versions.EKS_VERSION)
      .describe("EKS Kubernetes version."),
    vpcCidr: ipv4Cidr("must be an IPv4 CIDR with a /16 to /24 prefix", 16, 24)
      .default("10.0.0.0/16")
      .describe("CIDR of the new VPC."),
    autoMode: flag(false).describe(
      "EKS Auto Mode: EKS runs Karpenter, the node add-ons and EBS CSI; the stack adds the Valkey NodePool on its own NodeClass (no Karpenter Helm release, no interruption queue, no system node group).",
    ),
    publicEndpoint: flag(true).describe(
      "Whether the API server endpoint is reachable from the internet; false needs `checks.connector: direct` and a deploy from inside the VPC.",
    ),
    publicAccessCidrs: z
      .array(ipv4Cidr("must be an IPv4 CIDR such as 203.0.113.0/24"))
      .min(1)
      .superRefine(unique("CIDR"))
      .default(["0.0.0.0/0"])
      .describe(
        "CIDRs that may reach the public API endpoint (IAM authentication still applies). The default admits any address because CI runners have no fixed IP; narrow it to your egress IPs.",
      ),
    adminPrincipalArns: z
      .array(
        z.string().regex(IAM_PRINCIPAL_RE, {
          error: "must be an IAM role or user ARN such as arn:aws:iam::123456789012:role/admin",
        }),
      )
      .superRefine(unique("principal"))
      .default([])
      .describe(
        "More IAM roles/users given cluster-admin access entries (AmazonEKSClusterAdminPolicy); the deploying identity is admin already and must not be listed.",
      ),
    // Match Karpenter 1.14 and today's EKS: no silent extended-support billing.
    supportType: z
      .enum(["STANDARD", "EXTENDED"])
      .default("STANDARD")
      .describe(
        "EKS upgrade policy: STANDARD (auto-upgraded when standard support ends) or EXTENDED (kept on the version at the extended-support rate).",
      ),
    addonVersions: section(
      {
        vpcCni: addonVersion("vpc-cni"),
        kubeProxy: addonVersion("kube-proxy"),
        podIdentityAgent: addonVersion("eks-pod-identity-agent"),
        ebsCsiDriver: addonVersion("aws-ebs-csi-driver"),
        coredns: addonVersion("coredns"),
      },
      "The EKS add-ons' versions. Unset, each is EKS's default for `eks.version` when first installed, then kept in the stack's state (the AddonPins step): a new default EKS publishes moves nothing; a change of `eks.version` moves them all, a key set here moves that one (without Auto Mode; Auto Mode runs its own).",
    ),
    systemNodes: section(
      {
        instanceType: gravitonInstanceType
          .default("m7g.large")
          .describe("Graviton instance type of the managed node group for system pods (CoreDNS, Karpenter)."),
        count: count(1, 2).describe("Nodes in the system node group."),
        diskSizeGiB: count(20, 50).describe("Root volume size of each system node in GiB."),
      },
      "The managed node group for system pods.",
    ),
  },
  "The EKS cluster (platform eks only).",
);

export const karpenterSchema = section(
  {
    chartVersion: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, { error: 'must be a chart version such as "1.14.1"' })
      .default(versions.KARPENTER_CHART_VERSION)
      .describe("Karpenter Helm chart version."),
    // No surprise node replacement: a pinned AMI release by default.
    amiAlias: z
      .string()
      .regex(/^al2023@(latest|v\d{8})$/, {
        error: 'must be an AL2023 alias: "al2023@vYYYYMMDD" (pinned) or "al2023@latest"',
      })
      .default(versions.KARPENTER_AMI_ALIAS)
      .describe(
        "EC2NodeClass AMI alias of the Valkey nodes; `al2023@latest` follows every new EKS AMI (and drifts the nodes to it when drift is allowed).",
      ),
    nodePool: section(
      {
        instanceFamilies: z
          .array(
            z.string().refine(isGravitonFamily, { error: "must be a Graviton (arm64) instance family such as r7g" }),
          )
          .min(1)
          .superRefine(unique("family"))
          .default(["r7g"])
          .describe("Instance families the Valkey NodePool may launch."),
        networkOptimized: flag(false).describe(
          "Also permit each family's network-optimised sibling (r8g → r8gn; EC2 has them for c6g, c7g, c8g, m8g and r8g only, not r7g or m7g).",
        ),
        instanceTypes: z
          .array(gravitonInstanceType)
          .min(1)
          .superRefine(unique("instance type"))
          .optional()
          .describe("Explicit instance types; when set they replace families × sizes.")
          .meta({ defaultText: "families × sizes" }),
        instanceSizes: z
          .array(z.enum(KNOWN_INSTANCE_SIZES as [string, ...string[]]))
          .min(1)
          .superRefine(unique("size"))
          .default(["large", "xlarge", "2xlarge"])
          .describe("Instance sizes combined with instanceFamilies."),
        capacityType: z
          .literal("on-demand", { error: 'must be "on-demand": spot interruptions would fail over Valkey primaries' })
          .default("on-demand")
          .describe("Capacity type; only on-demand is accepted for the Valkey data pool."),
        architecture: z
          .literal("arm64", { error: 'must be "arm64": the NodePool launches Graviton instances only' })
          .default("arm64")
          .describe("CPU architecture; only arm64 (Graviton) is accepted."),
        allowDrift: flag(false).describe(
          "Let Karpenter replace drifted Valkey nodes (changed AMI, EC2NodeClass or NodePool), one at a time; off: a `Drifted` budget of 0 nodes blocks it.",
        ),
        limits: section(
          {
            cpu: cpuQuantity("64").describe("Total vCPU the NodePool may provision."),
            memory: memoryQuantity("512Gi").describe("Total memory the NodePool may provision."),
          },
          "NodePool limits.",
        ),
      },
      "The Karpenter NodePool for Valkey and benchmark pods.",
    ),
  },
  "Karpenter install and the Valkey data NodePool (platform eks, or byo with manageKarpenterNodePool).",
);

/**
 * NAT gateways of the new VPC: every node in a private subnet reaches the internet (image pulls,
 * AWS APIs without a VPC endpoint) through them. One per zone is AWS's advice for resilience: "if
 * the NAT gateway's Availability Zone is down, resources in the other Availability Zones lose
 * internet access" (https://docs.aws.amazon.com/vpc/latest/userguide/nat-gateway-basics.html);
 * each gateway is billed by the hour and by the GB processed. `single` stays the default: this is
 * a benchmark stack, and a Valkey zone fault already fails over inside the cluster; the cost
 * estimate counts whichever is chosen.
 */
export const networkSchema = section(
  {
    natGateways: z
      .enum(["single", "perZone"])
      .default("single")
      .describe(
        "NAT gateways of the VPC (platform eks): `single` (one, in the first zone: cheapest; nodes in the other zones lose internet egress, i.e. new image pulls and AWS API calls, while that zone is down, and their egress crosses zones) or `perZone` (one per zone in `aws.zones`: no cross-zone egress, one gateway-hour per zone).",
      ),
  },
  "The VPC's network (platform eks).",
);
