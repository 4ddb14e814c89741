/**
 * The Karpenter component under Pulumi mocks: IAM roles and trust, the node access entry, the
 * interruption queue and its five EventBridge rules, the controller policy, Pod Identity and the
 * Helm release; the provider and dependencies it takes as resource options; and the pure
 * builders behind them.
 */
import type * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { versions } from "../../versions.js";
import {
  awsMockOutputs,
  installMocks,
  MOCK_ACCOUNT,
  settle,
  valueOf,
  type RecordedResource,
} from "../support/pulumi-mocks.js";

const ACCOUNT = MOCK_ACCOUNT;
const mocks = installMocks({ outputs: awsMockOutputs });
const k8s = await import("@pulumi/kubernetes");
const { Karpenter } = await import("../../components/karpenter.js");
const { buildKarpenterControllerPolicy } = await import("../../components/aws/karpenter-iam.js");
const { partitionOf, accountOfArn } = await import("../../components/aws/iam.js");

const { config } = parseStackConfig({
  "aws:region": "us-west-2",
  "karpenter": { nodePool: { networkOptimized: true, instanceFamilies: ["r8g"] } },
});
const ARGS = { clusterName: "valkey-test", region: "us-west-2", zones: config.aws.zones, karpenter: config.karpenter };

async function deploy() {
  mocks.reset();
  const provider = new k8s.Provider("eks", { kubeconfig: "{}" });
  const karpenter = new Karpenter("karpenter", ARGS, { providers: [provider] });
  await settle();
  await valueOf(karpenter.nodeRoleArn);
  await settle();
  return karpenter;
}

const json = (r: RecordedResource, key: string) => JSON.parse(String(r.inputs[key])) as Record<string, unknown>;
type Statement = {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource?: string | string[];
  Principal?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};

describe("Karpenter", () => {
  it("gives the controller a Pod Identity role (AssumeRole + TagSession) bound to kube-system/karpenter", async () => {
    await deploy();
    const role = mocks.get("aws:iam/role:Role", "karpenter-controller-role");
    expect(json(role, "assumeRolePolicy")).toEqual({
      Version: "2012-10-17",
      Statement: [
        {
          Effect: "Allow",
          Principal: { Service: "pods.eks.amazonaws.com" },
          Action: ["sts:AssumeRole", "sts:TagSession"],
        },
      ],
    });
    const association = mocks.get(
      "aws:eks/podIdentityAssociation:PodIdentityAssociation",
      "karpenter-controller-identity",
    );
    expect(association.inputs).toMatchObject({
      clusterName: "valkey-test",
      namespace: "kube-system",
      serviceAccount: "karpenter",
      roleArn: `arn:aws:iam::${ACCOUNT}:role/karpenter-controller-role`,
    });
  });

  it("scopes the controller policy to the cluster, queue and node role", async () => {
    await deploy();
    const policy = json(mocks.get("aws:iam/rolePolicy:RolePolicy", "karpenter-controller-policy"), "policy") as {
      Statement: Statement[];
    };
    const sid = (s: string) => policy.Statement.find((x) => x.Sid === s);
    expect(sid("AllowInterruptionQueueActions")?.Resource).toBe(`arn:aws:sqs:us-west-2:${ACCOUNT}:valkey-test`);
    expect(sid("AllowPassingInstanceRole")).toMatchObject({
      Action: "iam:PassRole",
      Resource: `arn:aws:iam::${ACCOUNT}:role/karpenter-node-role`,
    });
    expect(sid("AllowAPIServerEndpointDiscovery")?.Resource).toBe(
      `arn:aws:eks:us-west-2:${ACCOUNT}:cluster/valkey-test`,
    );
    expect(sid("AllowScopedDeletion")?.Condition?.StringEquals).toEqual({
      "aws:ResourceTag/kubernetes.io/cluster/valkey-test": "owned",
    });
    expect(sid("AllowScopedInstanceProfileCreationActions")?.Resource).toBe(
      `arn:aws:iam::${ACCOUNT}:instance-profile/*`,
    );
    expect(policy.Statement.map((s) => s.Sid)).toEqual([
      "AllowScopedEC2InstanceAccessActions",
      "AllowScopedEC2LaunchTemplateAccessActions",
      "AllowScopedEC2InstanceActionsWithTags",
      "AllowScopedResourceCreationTagging",
      "AllowScopedResourceTagging",
      "AllowScopedDeletion",
      "AllowRegionalReadActions",
      "AllowSSMReadActions",
      "AllowPricingReadActions",
      "AllowInterruptionQueueActions",
      "AllowPassingInstanceRole",
      "AllowScopedInstanceProfileCreationActions",
      "AllowScopedInstanceProfileTagActions",
      "AllowScopedInstanceProfileActions",
      "AllowUnscopedInstanceProfileListAction",
      "AllowInstanceProfileReadActions",
      "AllowAPIServerEndpointDiscovery",
      "AllowZonalShiftStatusReadOnly",
    ]);
  });

  it("creates the node role with the four policies and an EC2_LINUX access entry", async () => {
    await deploy();
    const role = mocks.get("aws:iam/role:Role", "karpenter-node-role");
    expect(json(role, "assumeRolePolicy")).toMatchObject({
      Statement: [{ Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" }],
    });
    const attached = mocks.ofType("aws:iam/rolePolicyAttachment:RolePolicyAttachment").map((r) => r.inputs.policyArn);
    expect(attached.sort()).toEqual(
      [
        "AmazonEC2ContainerRegistryPullOnly",
        "AmazonEKSWorkerNodePolicy",
        "AmazonEKS_CNI_Policy",
        "AmazonSSMManagedInstanceCore",
      ].map((p) => `arn:aws:iam::aws:policy/${p}`),
    );
    const entry = mocks.get("aws:eks/accessEntry:AccessEntry", "karpenter-node-access");
    expect(entry.inputs).toMatchObject({
      clusterName: "valkey-test",
      type: "EC2_LINUX",
      principalArn: `arn:aws:iam::${ACCOUNT}:role/karpenter-node-role`,
    });
  });

  it("creates an encrypted interruption queue, its policy and the five rules targeting it", async () => {
    await deploy();
    const queue = mocks.get("aws:sqs/queue:Queue", "karpenter-interruption");
    expect(queue.inputs).toMatchObject({
      name: "valkey-test",
      sqsManagedSseEnabled: true,
      messageRetentionSeconds: 300,
    });
    const queueArn = `arn:aws:sqs:us-west-2:${ACCOUNT}:valkey-test`;
    const policy = json(mocks.get("aws:sqs/queuePolicy:QueuePolicy", "karpenter-interruption-policy"), "policy") as {
      Statement: Statement[];
    };
    expect(policy.Statement[0]).toMatchObject({
      Effect: "Allow",
      Principal: { Service: ["events.amazonaws.com", "sqs.amazonaws.com"] },
      Action: "sqs:SendMessage",
      Resource: queueArn,
    });
    expect(policy.Statement[1]).toMatchObject({
      Effect: "Deny",
      Condition: { Bool: { "aws:SecureTransport": false } },
    });
    const patterns = Object.fromEntries(
      mocks.ofType("aws:cloudwatch/eventRule:EventRule").map((r) => [r.name, json(r, "eventPattern")]),
    );
    expect(patterns).toEqual({
      "karpenter-scheduled-change": { "source": ["aws.health"], "detail-type": ["AWS Health Event"] },
      "karpenter-spot-interruption": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Spot Instance Interruption Warning"],
      },
      "karpenter-rebalance": { "source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"] },
      "karpenter-instance-state-change": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Instance State-change Notification"],
      },
      "karpenter-capacity-reservation-interruption": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"],
      },
    });
    const targets = mocks.ofType("aws:cloudwatch/eventTarget:EventTarget");
    expect(targets.map((t) => [t.name, t.inputs.rule, t.inputs.arn])).toEqual(
      Object.keys(patterns).map((rule) => [`${rule}-target`, rule, queueArn]),
    );
  });

  it("installs the pinned chart in kube-system with the cluster, queue and system-node placement", async () => {
    await deploy();
    const release = mocks.get("kubernetes:helm.sh/v3:Release", "karpenter-controller");
    expect(release.provider).toMatch(/::eks::/);
    expect(release.inputs).toMatchObject({
      name: "karpenter",
      chart: "oci://public.ecr.aws/karpenter/karpenter",
      version: versions.KARPENTER_CHART_VERSION,
      namespace: "kube-system",
    });
    const values = release.inputs.values as Record<string, unknown>;
    expect(values.settings).toEqual({ clusterName: "valkey-test", interruptionQueue: "valkey-test" });
    expect(values.serviceAccount).toEqual({ create: true, name: "karpenter" });
    expect(values.controller).toMatchObject({
      resources: { requests: { cpu: "500m", memory: "512Mi" }, limits: { cpu: "1", memory: "1Gi" } },
    });
    expect(values.affinity).toMatchObject({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            {
              matchExpressions: [
                { key: "karpenter.sh/nodepool", operator: "DoesNotExist" },
                { key: "valkey-on-eks/node-role", operator: "In", values: ["system"] },
              ],
            },
          ],
        },
      },
    });
  });

  it("composes the Valkey node pool with the Karpenter node role and the cluster's discovery tag", async () => {
    const karpenter = await deploy();
    expect(karpenter.valkeyNodePool.nodePoolName).toBe("valkey");
    const nodeClass = mocks.get("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "karpenter-valkey-node-class");
    expect(nodeClass.inputs).toMatchObject({
      spec: {
        role: "karpenter-node-role",
        securityGroupSelectorTerms: [{ tags: { "karpenter.sh/discovery": "valkey-test" } }],
      },
    });
    const pool = mocks.get("kubernetes:karpenter.sh/v1:NodePool", "karpenter-valkey-node-pool");
    const requirements = (
      pool.inputs.spec as { template: { spec: { requirements: Array<{ key: string; values: string[] }> } } }
    ).template.spec.requirements;
    expect(requirements.find((r) => r.key === "node.kubernetes.io/instance-type")?.values).toEqual(
      config.karpenter.nodePool.permittedInstanceTypes,
    );
    expect(config.karpenter.nodePool.permittedInstanceTypes).toContain("r8gn.large");
  });
});

describe("Karpenter's resource options", () => {
  const K8S_TYPES = [
    "kubernetes:helm.sh/v3:Release",
    "kubernetes:helm.sh/v3:Release",
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
    "kubernetes:karpenter.sh/v1:NodePool",
  ];

  it("sends every Kubernetes child (CRD and controller Helm releases, EC2NodeClass, NodePool) through the provider in opts.providers, and no AWS child through it", async () => {
    await deploy();
    const kubernetes = mocks.resources.filter((r) => r.type.startsWith("kubernetes:"));
    expect(kubernetes.map((r) => r.type).sort()).toEqual(K8S_TYPES);
    for (const r of kubernetes)
      expect(r.provider, `${r.type} ${r.name}`).toMatch(/::pulumi:providers:kubernetes::eks::/);
    const awsChildren = mocks.resources.filter((r) => r.type.startsWith("aws:"));
    expect(awsChildren.length).toBeGreaterThanOrEqual(15);
    for (const r of awsChildren) expect(r.provider ?? "", `${r.type} ${r.name}`).not.toMatch(/kubernetes/);
  });

  it("refuses to start without a Kubernetes provider instead of falling back to the ambient kubeconfig", () => {
    expect(() => new Karpenter("no-provider", ARGS)).toThrow(
      /Karpenter no-provider: pass the target cluster's Kubernetes provider as a resource option/,
    );
  });

  it("registers none of its resources until opts.dependsOn is ready, then all of them", async () => {
    mocks.reset();
    const provider = new k8s.Provider("eks", { kubeconfig: "{}" });
    let open: (ready: pulumi.Resource[]) => void = () => undefined;
    const ready = new Promise<pulumi.Resource[]>((resolve) => (open = resolve));
    new Karpenter("gated", ARGS, { providers: [provider], dependsOn: ready });
    await settle();
    expect(mocks.resources.filter((r) => r.name.startsWith("gated")).map((r) => r.name)).toEqual([]);
    open([provider]);
    await settle();
    const names = mocks.resources.filter((r) => r.name.startsWith("gated")).map((r) => r.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "gated",
        "gated-node-access",
        "gated-controller-identity",
        "gated-controller",
        "gated-valkey-node-class",
        "gated-valkey-node-pool",
      ]),
    );
  });

  it("registers the Valkey node pool only after the Helm release that installs its CRDs", async () => {
    await deploy();
    await settle();
    const index = (name: string) => mocks.resources.findIndex((r) => r.name === name);
    expect(index("karpenter-controller")).toBeGreaterThanOrEqual(0);
    for (const name of ["karpenter-valkey", "karpenter-valkey-node-class", "karpenter-valkey-node-pool"]) {
      expect(index(name), name).toBeGreaterThan(index("karpenter-controller"));
    }
  });
});

describe("IAM helpers", () => {
  it("derives partitions and accounts", () => {
    expect(partitionOf("us-west-2")).toBe("aws");
    expect(partitionOf("cn-north-1")).toBe("aws-cn");
    expect(partitionOf("us-gov-west-1")).toBe("aws-us-gov");
    expect(accountOfArn("arn:aws:iam::123456789012:role/x")).toBe("123456789012");
    expect(() => accountOfArn("not-an-arn")).toThrow(/account ID/);
  });

  it("writes the partition into every ARN of the controller policy", () => {
    const doc = buildKarpenterControllerPolicy({
      partition: "aws-cn",
      region: "cn-north-1",
      accountId: ACCOUNT,
      clusterName: "c",
      queueArn: "q",
      nodeRoleArn: "n",
    });
    const arns = doc.Statement.flatMap((s) => [s.Resource ?? []].flat()).filter((r) => r.startsWith("arn:"));
    expect(arns.length).toBeGreaterThan(10);
    for (const arn of arns) expect(arn).toMatch(/^arn:aws-cn:/);
  });
});
