/**
 * Pure IAM building blocks shared by the EKS and Karpenter components: the partition of a
 * region, AWS-managed policy ARNs and the trust policies the roles need. Plain values only.
 */

/** An IAM policy document (the subset this project writes). */
export interface PolicyDocument {
  Version: "2012-10-17";
  Id?: string;
  Statement: PolicyStatement[];
}

export interface PolicyStatement {
  Sid?: string;
  Effect: "Allow" | "Deny";
  Principal?: { Service: string | string[] } | "*";
  Action: string | string[];
  Resource?: string | string[];
  Condition?: Record<string, Record<string, string | string[] | boolean>>;
}

/** The EKS Pod Identity service principal. */
export const POD_IDENTITY_PRINCIPAL = "pods.eks.amazonaws.com";

/** The AWS partition a region belongs to ("aws", "aws-cn", "aws-us-gov"). */
export function partitionOf(region: string): string {
  if (region.startsWith("cn-")) return "aws-cn";
  if (region.startsWith("us-gov-")) return "aws-us-gov";
  return "aws";
}

/** An EKS cluster's ARN from its name (the stack's clusters are named, not auto-named). */
export function eksClusterArn(partition: string, region: string, accountId: string, clusterName: string): string {
  return `arn:${partition}:eks:${region}:${accountId}:cluster/${clusterName}`;
}

/** The ARN of an AWS-managed policy, e.g. `arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy`. */
export function managedPolicyArn(partition: string, path: string): string {
  return `arn:${partition}:iam::aws:policy/${path}`;
}

/** Trust policy of a role assumed through EKS Pod Identity (sts:AssumeRole + sts:TagSession). */
export function podIdentityTrustPolicy(): PolicyDocument {
  return {
    Version: "2012-10-17",
    Statement: [
      { Effect: "Allow", Principal: { Service: POD_IDENTITY_PRINCIPAL }, Action: ["sts:AssumeRole", "sts:TagSession"] },
    ],
  };
}

/** Trust policy of an EC2 node role. */
export function ec2TrustPolicy(): PolicyDocument {
  return {
    Version: "2012-10-17",
    Statement: [{ Effect: "Allow", Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" }],
  };
}

/**
 * The policies every EKS worker node role needs; Karpenter's nodes add SSM (as Karpenter v1.14's
 * KarpenterNodeRole). Image pulls need only AmazonEC2ContainerRegistryPullOnly (ECR's pull-only
 * managed policy, which the EKS and Karpenter docs now name instead of the wider ReadOnly).
 */
export const NODE_POLICY_NAMES = [
  "AmazonEKSWorkerNodePolicy",
  "AmazonEKS_CNI_Policy",
  "AmazonEC2ContainerRegistryPullOnly",
] as const;
export const KARPENTER_NODE_POLICY_NAMES = [...NODE_POLICY_NAMES, "AmazonSSMManagedInstanceCore"] as const;
/** The EBS CSI driver's AWS-managed policy (under `service-role/`). */
export const EBS_CSI_POLICY_PATH = "service-role/AmazonEBSCSIDriverPolicy";

/** The account ID inside an IAM ARN (`arn:aws:iam::123456789012:role/x` → "123456789012"). */
export function accountOfArn(arn: string): string {
  const account = arn.split(":")[4];
  if (account === undefined || !/^\d{12}$/.test(account)) throw new Error(`not an IAM ARN with an account ID: ${arn}`);
  return account;
}
