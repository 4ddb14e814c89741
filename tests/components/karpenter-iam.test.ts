/**
 * The Karpenter controller policy and interruption rules against Karpenter itself, at the chart
 * version the program installs (versions.env KARPENTER_CHART_VERSION):
 *
 * - against the Go module github.com/aws/karpenter-provider-aws from the Go module cache
 *   (tests/support/karpenter-module.ts): every AWS API the controller's SDK interfaces call
 *   (pkg/aws/sdk.go) is granted, nothing else is, and there is one EventBridge rule per message
 *   the controller parses (pkg/controllers/interruption/messages/<kind>/parser.go). A chart bump
 *   (new module) that adds an API or a message fails here.
 * - per statement, against the getting-started CloudFormation of v1.14
 *   (website/content/en/v1.14/getting-started/getting-started-with-karpenter/cloudformation.yaml
 *   in aws/karpenter-provider-aws; the website is a separate nested Go module, so it is not in
 *   the module zip, and its actions/resources are transcribed below).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildKarpenterControllerPolicy } from "../../components/aws/karpenter-iam.js";
import { INTERRUPTION_RULES } from "../../components/aws/karpenter-interruption.js";
import { KARPENTER_NODE_POLICY_NAMES, type PolicyStatement } from "../../components/aws/iam.js";
import { versions } from "../../versions.js";
import {
  karpenterInterruptionEvents,
  karpenterKubernetesRange,
  karpenterModuleDir,
  karpenterSdkActions,
} from "../support/karpenter-module.js";

const INPUT = {
  partition: "aws",
  region: "us-west-2",
  accountId: "123456789012",
  clusterName: "valkey-test",
  queueArn: "arn:aws:sqs:us-west-2:123456789012:valkey-test",
  nodeRoleArn: "arn:aws:iam::123456789012:role/node",
};
const policy = buildKarpenterControllerPolicy(INPUT);
const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? [...v] : [v]).sort();
const granted = [...new Set(policy.Statement.flatMap((s) => list(s.Action)))].sort();

/**
 * APIs in pkg/aws/sdk.go the documented policy does not grant, and why. Each must still be in the
 * module (checked below), so the list cannot go stale silently.
 */
const NOT_GRANTED: Readonly<Record<string, string>> = {
  "iam:GetRole": "declared in IAMAPI but not called by the controller (only by its test fakes)",
  "sqs:SendMessage": "the controller only receives from the queue; EventBridge sends (queue policy)",
  "timestream:WriteRecords": "Karpenter's own scale-test metrics, not the controller",
};

describe(`Karpenter v${versions.KARPENTER_CHART_VERSION} Go module`, () => {
  // The first run may download the module from the Go module proxy (a few MB).
  beforeAll(() => void karpenterModuleDir(), 300_000);

  it("is found in the Go module cache (downloaded through the module proxy when missing)", () => {
    expect(karpenterModuleDir()).toMatch(
      new RegExp(`karpenter-provider-aws@v${versions.KARPENTER_CHART_VERSION.replaceAll(".", "\\.")}$`),
    );
  });

  it("the controller policy grants every AWS API the controller calls, and nothing more", () => {
    const calls = karpenterSdkActions();
    for (const action of Object.keys(NOT_GRANTED))
      expect(calls, `${action} is listed in NOT_GRANTED but no longer in pkg/aws/sdk.go`).toContain(action);
    const needed = calls.filter((a) => !(a in NOT_GRANTED));
    expect(
      needed.filter((a) => !granted.includes(a)),
      "APIs the controller calls that the policy does not grant",
    ).toEqual([]);
    // iam:PassRole is not an API call of its own: RunInstances/CreateFleet with the node role need it.
    expect(
      granted.filter((a) => !needed.includes(a) && a !== "iam:PassRole"),
      "actions granted that the controller never calls",
    ).toEqual([]);
  });

  it("ships the NodePool, NodeClaim and EC2NodeClass CRDs as templates of the karpenter-crd chart (so helm upgrade upgrades them)", () => {
    const templates = readdirSync(join(karpenterModuleDir(), "charts/karpenter-crd/templates"));
    expect(templates).toEqual(
      expect.arrayContaining([
        "karpenter.sh_nodepools.yaml",
        "karpenter.sh_nodeclaims.yaml",
        "karpenter.k8s.aws_ec2nodeclasses.yaml",
      ]),
    );
  });

  it("supports the default EKS version (versions.env EKS_VERSION) per its compatibility matrix", () => {
    const range = karpenterKubernetesRange(versions.KARPENTER_CHART_VERSION.split(".").slice(0, 2).join("."));
    const minor = (v: string) => Number(v.split(".")[1]);
    expect(minor(versions.EKS_VERSION), `Karpenter supports ${range.min}-${range.max}`).toBeGreaterThanOrEqual(
      minor(range.min),
    );
    expect(minor(versions.EKS_VERSION), `Karpenter supports ${range.min}-${range.max}`).toBeLessThanOrEqual(
      minor(range.max),
    );
  });

  it("has one EventBridge rule per interruption message the controller parses, with its source and detail-type", () => {
    const upstream = karpenterInterruptionEvents().map((e) => ({
      "source": [e.source],
      "detail-type": [e.detailType],
    }));
    const ours = INTERRUPTION_RULES.map((r) => r.eventPattern);
    const key = (p: { "source": string[]; "detail-type": string[] }) => `${p.source.join()}|${p["detail-type"].join()}`;
    expect(ours.map(key).sort()).toEqual(upstream.map(key).sort());
    expect(new Set(INTERRUPTION_RULES.map((r) => r.part)).size).toBe(INTERRUPTION_RULES.length);
  });
});

describe("controller policy, statement by statement as the v1.14 CloudFormation", () => {
  // The regional reads are read from the Go module (downloaded on first use, as above).
  beforeAll(() => void karpenterModuleDir(), 300_000);
  const ec2 = "arn:aws:ec2:us-west-2";
  const profiles = "arn:aws:iam::123456789012:instance-profile/*";
  const tagged = ["fleet", "instance", "volume", "network-interface", "launch-template", "spot-instances-request"].map(
    (r) => `${ec2}:*:${r}/*`,
  );
  // Actions are a list, or (regional reads) a function of the controller's SDK, read when the test runs.
  const expected: Record<string, { Action: string[] | (() => string[]); Resource: string[] }> = {
    AllowScopedEC2InstanceAccessActions: {
      Action: ["ec2:RunInstances", "ec2:CreateFleet"],
      // The CloudFormation's account-less public resources (images, snapshots), then the account's own.
      Resource: [
        ...["image", "snapshot"].map((r) => `${ec2}::${r}/*`),
        ...["security-group", "subnet", "capacity-reservation", "placement-group"].map((r) => `${ec2}:*:${r}/*`),
      ],
    },
    AllowScopedEC2LaunchTemplateAccessActions: {
      Action: ["ec2:RunInstances", "ec2:CreateFleet"],
      Resource: [`${ec2}:*:launch-template/*`],
    },
    AllowScopedEC2InstanceActionsWithTags: {
      Action: ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
      Resource: tagged,
    },
    AllowScopedResourceCreationTagging: { Action: ["ec2:CreateTags"], Resource: tagged },
    AllowScopedResourceTagging: { Action: ["ec2:CreateTags"], Resource: [`${ec2}:*:instance/*`] },
    AllowScopedDeletion: {
      Action: ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
      Resource: [`${ec2}:*:instance/*`, `${ec2}:*:launch-template/*`],
    },
    AllowPassingInstanceRole: { Action: ["iam:PassRole"], Resource: [INPUT.nodeRoleArn] },
    AllowScopedInstanceProfileCreationActions: { Action: ["iam:CreateInstanceProfile"], Resource: [profiles] },
    AllowScopedInstanceProfileTagActions: { Action: ["iam:TagInstanceProfile"], Resource: [profiles] },
    AllowScopedInstanceProfileActions: {
      Action: ["iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"],
      Resource: [profiles],
    },
    AllowAPIServerEndpointDiscovery: {
      Action: ["eks:DescribeCluster"],
      Resource: ["arn:aws:eks:us-west-2:123456789012:cluster/valkey-test"],
    },
    AllowInterruptionQueueActions: {
      Action: ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
      Resource: [INPUT.queueArn],
    },
    AllowZonalShiftStatusReadOnly: { Action: ["arc-zonal-shift:GetManagedResource"], Resource: ["*"] },
    // The CloudFormation's eleven ec2:Describe* actions are exactly those of the controller's
    // EC2API (pkg/aws/sdk.go at the pinned version): derived from there, not copied from our policy.
    AllowRegionalReadActions: {
      Action: () => karpenterSdkActions().filter((a) => a.startsWith("ec2:Describe")),
      Resource: ["*"],
    },
    AllowSSMReadActions: { Action: ["ssm:GetParameter"], Resource: ["arn:aws:ssm:us-west-2::parameter/aws/service/*"] },
    AllowPricingReadActions: { Action: ["pricing:GetProducts"], Resource: ["*"] },
    AllowUnscopedInstanceProfileListAction: { Action: ["iam:ListInstanceProfiles"], Resource: ["*"] },
    AllowInstanceProfileReadActions: { Action: ["iam:GetInstanceProfile"], Resource: [profiles] },
  };

  it("has exactly the documented statements", () => {
    expect(policy.Statement.map((s) => s.Sid).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.entries(expected))("%s: same actions and resources", (sid, want) => {
    const statement = policy.Statement.find((s) => s.Sid === sid) as PolicyStatement;
    const actions = typeof want.Action === "function" ? want.Action() : want.Action;
    expect({ Action: list(statement.Action), Resource: list(statement.Resource) }).toEqual({
      Action: [...actions].sort(),
      Resource: [...want.Resource].sort(),
    });
  });

  it("scopes the regional reads to the region and the zonal-shift read to this cluster", () => {
    const sid = (s: string) => policy.Statement.find((x) => x.Sid === s);
    expect(sid("AllowRegionalReadActions")?.Condition).toEqual({
      StringEquals: { "aws:RequestedRegion": "us-west-2" },
    });
    expect(sid("AllowZonalShiftStatusReadOnly")?.Condition).toEqual({
      StringEquals: { "arc-zonal-shift:ResourceIdentifier": "arn:aws:eks:us-west-2:123456789012:cluster/valkey-test" },
    });
  });
});

describe("node role, as the v1.14 CloudFormation's KarpenterNodeRole", () => {
  it("has exactly its managed policies (ECR pull-only, not ReadOnly)", () => {
    expect([...KARPENTER_NODE_POLICY_NAMES].sort()).toEqual([
      "AmazonEC2ContainerRegistryPullOnly",
      "AmazonEKSWorkerNodePolicy",
      "AmazonEKS_CNI_Policy",
      "AmazonSSMManagedInstanceCore",
    ]);
  });
});
