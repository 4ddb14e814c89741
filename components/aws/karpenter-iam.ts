/**
 * The Karpenter controller's IAM policy, statement for statement as Karpenter v1.14 documents it
 * (website/content/en/v1.14/getting-started/getting-started-with-karpenter/cloudformation.yaml:
 * NodeLifecyclePolicy, IAMIntegrationPolicy, EKSIntegrationPolicy, InterruptionPolicy,
 * ZonalShiftPolicy, ResourceDiscoveryPolicy merged into one document), scoped to one cluster,
 * region and account. tests/components/karpenter-iam.test.ts compares its actions with the AWS APIs the
 * controller of the pinned module calls (pkg/aws/sdk.go), so a chart bump shows the drift.
 */
import { eksClusterArn, type PolicyDocument, type PolicyStatement } from "./iam.js";

export interface ControllerPolicyInput {
  partition: string;
  region: string;
  accountId: string;
  clusterName: string;
  /** ARN of the interruption queue. */
  queueArn: string;
  /** ARN of the node role Karpenter passes to the instances it launches. */
  nodeRoleArn: string;
}

/** The statements that launch, tag and delete instances and launch templates of this cluster. */
function ec2Statements(ec2: string, clusterName: string): PolicyStatement[] {
  const owned = { [`aws:ResourceTag/kubernetes.io/cluster/${clusterName}`]: "owned" };
  const requestOwned = {
    [`aws:RequestTag/kubernetes.io/cluster/${clusterName}`]: "owned",
    "aws:RequestTag/eks:eks-cluster-name": clusterName,
  };
  const taggedResources = [
    "fleet",
    "instance",
    "volume",
    "network-interface",
    "launch-template",
    "spot-instances-request",
  ].map((r) => `${ec2}:*:${r}/*`);
  return [
    {
      Sid: "AllowScopedEC2InstanceAccessActions",
      Effect: "Allow",
      // Capacity reservations (ODCR) and placement groups an EC2NodeClass may select (Karpenter ≥ 1.3 / 1.11).
      Resource: [
        `${ec2}::image/*`,
        `${ec2}::snapshot/*`,
        `${ec2}:*:security-group/*`,
        `${ec2}:*:subnet/*`,
        `${ec2}:*:capacity-reservation/*`,
        `${ec2}:*:placement-group/*`,
      ],
      Action: ["ec2:RunInstances", "ec2:CreateFleet"],
    },
    {
      Sid: "AllowScopedEC2LaunchTemplateAccessActions",
      Effect: "Allow",
      Resource: `${ec2}:*:launch-template/*`,
      Action: ["ec2:RunInstances", "ec2:CreateFleet"],
      Condition: { StringEquals: owned, StringLike: { "aws:ResourceTag/karpenter.sh/nodepool": "*" } },
    },
    {
      Sid: "AllowScopedEC2InstanceActionsWithTags",
      Effect: "Allow",
      Resource: taggedResources,
      Action: ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
      Condition: { StringEquals: requestOwned, StringLike: { "aws:RequestTag/karpenter.sh/nodepool": "*" } },
    },
    {
      Sid: "AllowScopedResourceCreationTagging",
      Effect: "Allow",
      Resource: taggedResources,
      Action: "ec2:CreateTags",
      Condition: {
        StringEquals: { ...requestOwned, "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"] },
        StringLike: { "aws:RequestTag/karpenter.sh/nodepool": "*" },
      },
    },
    {
      Sid: "AllowScopedResourceTagging",
      Effect: "Allow",
      Resource: `${ec2}:*:instance/*`,
      Action: "ec2:CreateTags",
      Condition: {
        "StringEquals": owned,
        "StringLike": { "aws:ResourceTag/karpenter.sh/nodepool": "*" },
        "StringEqualsIfExists": { "aws:RequestTag/eks:eks-cluster-name": clusterName },
        "ForAllValues:StringEquals": { "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"] },
      },
    },
    {
      Sid: "AllowScopedDeletion",
      Effect: "Allow",
      Resource: [`${ec2}:*:instance/*`, `${ec2}:*:launch-template/*`],
      Action: ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
      Condition: { StringEquals: owned, StringLike: { "aws:ResourceTag/karpenter.sh/nodepool": "*" } },
    },
  ];
}

/** The statements that manage the instance profiles Karpenter creates from the EC2NodeClass role. */
function instanceProfileStatements(profiles: string, clusterName: string, region: string): PolicyStatement[] {
  const requestTags = {
    [`aws:RequestTag/kubernetes.io/cluster/${clusterName}`]: "owned",
    "aws:RequestTag/eks:eks-cluster-name": clusterName,
    "aws:RequestTag/topology.kubernetes.io/region": region,
  };
  const resourceTags = {
    [`aws:ResourceTag/kubernetes.io/cluster/${clusterName}`]: "owned",
    "aws:ResourceTag/topology.kubernetes.io/region": region,
  };
  return [
    {
      Sid: "AllowScopedInstanceProfileCreationActions",
      Effect: "Allow",
      Resource: profiles,
      Action: ["iam:CreateInstanceProfile"],
      Condition: { StringEquals: requestTags, StringLike: { "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*" } },
    },
    {
      Sid: "AllowScopedInstanceProfileTagActions",
      Effect: "Allow",
      Resource: profiles,
      Action: ["iam:TagInstanceProfile"],
      Condition: {
        StringEquals: { ...resourceTags, ...requestTags },
        StringLike: {
          "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*",
          "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*",
        },
      },
    },
    {
      Sid: "AllowScopedInstanceProfileActions",
      Effect: "Allow",
      Resource: profiles,
      Action: ["iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"],
      Condition: { StringEquals: resourceTags, StringLike: { "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*" } },
    },
    {
      Sid: "AllowUnscopedInstanceProfileListAction",
      Effect: "Allow",
      Resource: "*",
      Action: "iam:ListInstanceProfiles",
    },
    { Sid: "AllowInstanceProfileReadActions", Effect: "Allow", Resource: profiles, Action: "iam:GetInstanceProfile" },
  ];
}

/** Karpenter's documented controller policy for one cluster. */
export function buildKarpenterControllerPolicy(input: ControllerPolicyInput): PolicyDocument {
  const { partition, region, accountId, clusterName } = input;
  const ec2 = `arn:${partition}:ec2:${region}`;
  const clusterArn = eksClusterArn(partition, region, accountId, clusterName);
  return {
    Version: "2012-10-17",
    Statement: [
      ...ec2Statements(ec2, clusterName),
      {
        Sid: "AllowRegionalReadActions",
        Effect: "Allow",
        Resource: "*",
        Action: [
          "ec2:DescribeCapacityReservations",
          "ec2:DescribeImages",
          "ec2:DescribeInstances",
          "ec2:DescribeInstanceStatus",
          "ec2:DescribeInstanceTypeOfferings",
          "ec2:DescribeInstanceTypes",
          "ec2:DescribeLaunchTemplates",
          "ec2:DescribePlacementGroups",
          "ec2:DescribeSecurityGroups",
          "ec2:DescribeSpotPriceHistory",
          "ec2:DescribeSubnets",
        ],
        Condition: { StringEquals: { "aws:RequestedRegion": region } },
      },
      {
        Sid: "AllowSSMReadActions",
        Effect: "Allow",
        Resource: `arn:${partition}:ssm:${region}::parameter/aws/service/*`,
        Action: "ssm:GetParameter",
      },
      { Sid: "AllowPricingReadActions", Effect: "Allow", Resource: "*", Action: "pricing:GetProducts" },
      {
        Sid: "AllowInterruptionQueueActions",
        Effect: "Allow",
        Resource: input.queueArn,
        Action: ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
      },
      {
        Sid: "AllowPassingInstanceRole",
        Effect: "Allow",
        Resource: input.nodeRoleArn,
        Action: "iam:PassRole",
        Condition: { StringEquals: { "iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"] } },
      },
      ...instanceProfileStatements(`arn:${partition}:iam::${accountId}:instance-profile/*`, clusterName, region),
      { Sid: "AllowAPIServerEndpointDiscovery", Effect: "Allow", Resource: clusterArn, Action: "eks:DescribeCluster" },
      {
        // The controller reads whether ARC zonal autoshift covers the cluster (operator start-up).
        Sid: "AllowZonalShiftStatusReadOnly",
        Effect: "Allow",
        Resource: "*",
        Action: "arc-zonal-shift:GetManagedResource",
        Condition: { StringEquals: { "arc-zonal-shift:ResourceIdentifier": clusterArn } },
      },
    ],
  };
}
