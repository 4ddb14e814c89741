/**
 * The VPC's arguments: private subnets (nodes, internal load balancers, Karpenter discovery) and
 * public subnets (internet-facing load balancers, NAT) in every configured zone.
 */
import type * as awsx from "@pulumi/awsx";

/** Tag Karpenter's EC2NodeClass selects subnets and security groups by. */
export const DISCOVERY_TAG_KEY = "karpenter.sh/discovery";
/** Subnet role tags the AWS load balancer integrations look for. */
export const INTERNAL_ELB_TAG = "kubernetes.io/role/internal-elb";
export const PUBLIC_ELB_TAG = "kubernetes.io/role/elb";
/** The smallest subnet AWS allows. */
const MAX_SUBNET_PREFIX = 28;

/** Config `network.natGateways`: one NAT gateway for the VPC, or one in each zone. */
export type NatGateways = "single" | "perZone";

/** awsx's NAT strategy for {@link NatGateways} ("Single" / "OnePerAz", @pulumi/awsx ec2.NatGatewayStrategy). */
export function natStrategy(natGateways: NatGateways): "Single" | "OnePerAz" {
  return natGateways === "perZone" ? "OnePerAz" : "Single";
}

/** How many NAT gateways the VPC gets (each billed by the hour): one, or one per zone. */
export function natGatewayCount(natGateways: NatGateways, zones: number): number {
  return natGateways === "perZone" ? zones : 1;
}

export interface VpcBuildInput {
  /** VPC CIDR, e.g. "10.0.0.0/16". */
  cidr: string;
  /** Availability zones (one private and one public subnet each). */
  zones: string[];
  /** EKS cluster name: the value of the private subnets' `karpenter.sh/discovery` tag. */
  clusterName: string;
  /** NAT gateways (config `network.natGateways`): one shared, or one per zone. */
  natGateways: NatGateways;
}

/** Prefix lengths: each zone gets a block; private subnets take half of it, public a quarter. */
export function subnetPrefixes(cidr: string, zoneCount: number): { zone: number; private: number; public: number } {
  const vpcPrefix = Number(cidr.split("/")[1]);
  if (!Number.isInteger(vpcPrefix) || vpcPrefix < 16 || vpcPrefix > 24)
    throw new Error(`VPC CIDR ${cidr} must have a /16 to /24 prefix`);
  if (zoneCount < 1) throw new Error("at least one zone is needed");
  const zone = vpcPrefix + Math.ceil(Math.log2(zoneCount));
  const prefixes = { zone, private: zone + 1, public: zone + 2 };
  if (prefixes.public > MAX_SUBNET_PREFIX) {
    throw new Error(
      `VPC CIDR ${cidr} is too small for ${zoneCount} zones (public subnets would be /${prefixes.public}, AWS allows at most /${MAX_SUBNET_PREFIX})`,
    );
  }
  return prefixes;
}

/** awsx.ec2.Vpc arguments over exactly the configured zones. */
export function buildVpcArgs(input: VpcBuildInput): awsx.ec2.VpcArgs {
  const prefixes = subnetPrefixes(input.cidr, input.zones.length);
  return {
    cidrBlock: input.cidr,
    availabilityZoneNames: [...input.zones],
    availabilityZoneCidrMask: prefixes.zone,
    subnetStrategy: "Auto",
    enableDnsHostnames: true,
    enableDnsSupport: true,
    natGateways: { strategy: natStrategy(input.natGateways) },
    subnetSpecs: [
      {
        type: "Private",
        name: "private",
        cidrMask: prefixes.private,
        tags: { [DISCOVERY_TAG_KEY]: input.clusterName, [INTERNAL_ELB_TAG]: "1" },
      },
      { type: "Public", name: "public", cidrMask: prefixes.public, tags: { [PUBLIC_ELB_TAG]: "1" } },
    ],
    tags: { Name: input.clusterName },
  };
}
