/**
 * `eks.autoMode: true` under Pulumi mocks: the cluster gets pulumi-eks `autoMode`, EKS's own
 * Karpenter runs our Valkey NodePool on our NodeClass (eks.amazonaws.com/v1) with its node role's
 * EC2 access entry; no Karpenter Helm release, no interruption queue or rules, no system node
 * group or add-on resources; the same Valkey, checks and benchmark on top; the preflight skips
 * the system node type. Plus the pure builders.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { awsMockInvokes, awsMockOutputs, installMocks, settle } from "../support/pulumi-mocks.js";

const recorder = installMocks({ outputs: awsMockOutputs, invokes: awsMockInvokes });
const { loadStackFile, parseStackConfig } = await import("../../config/schema.js");
const { runProgram } = await import("../../stacks/program.js");
const { requiredInstanceTypes } = await import("../../stacks/preflight.js");
const { estimateVcpus } = await import("../../components/capacity/preflight.js");
const { buildAutoNodePool, buildAutoNodeClass } = await import("../../components/aws/auto-mode.js");
const pulumi = await import("@pulumi/pulumi");

function autoConfig() {
  const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
  return { ...config, eks: { ...config.eks, autoMode: true } };
}

async function deploy(config = autoConfig()) {
  recorder.reset();
  const out = runProgram({ stack: "cluster", config, password: pulumi.secret("pw-auto") });
  await settle();
  return out;
}

const types = () => new Set(recorder.resources.map((r) => r.type));

beforeEach(() => recorder.reset());

describe("EKS Auto Mode under mocks", () => {
  it("enables pulumi-eks autoMode with only the built-in system pool, and no self-managed Karpenter or node group", async () => {
    await deploy();
    const cluster = recorder.get("eks:index:Cluster", "eks-cluster");
    expect(cluster.inputs.autoMode).toEqual({
      enabled: true,
      createNodeRole: true,
      computeConfig: { nodePools: ["system"] },
    });
    const t = types();
    for (const absent of [
      "kubernetes:helm.sh/v3:Release",
      "aws:sqs/queue:Queue",
      "aws:cloudwatch/eventRule:EventRule",
      "eks:index:ManagedNodeGroup",
      "aws:eks/addon:Addon",
      "aws:eks/podIdentityAssociation:PodIdentityAssociation",
      "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
      "valkey-on-eks:karpenter:Karpenter",
    ]) {
      expect(t.has(absent), absent).toBe(false);
    }
  });

  it("creates the Valkey NodePool on our Auto Mode NodeClass, with the node role's EC2 access entry and policy", async () => {
    await deploy();
    const nodeClass = recorder.get("kubernetes:eks.amazonaws.com/v1:NodeClass", "auto-mode-valkey-node-class");
    expect(nodeClass.inputs).toMatchObject({
      metadata: { name: "valkey" },
      spec: {
        role: "auto-mode-valkey-node-role",
        subnetSelectorTerms: [{ tags: { "karpenter.sh/discovery": "valkey-test" } }],
        securityGroupSelectorTerms: [{ tags: { "karpenter.sh/discovery": "valkey-test" } }],
      },
    });
    const pool = recorder.get("kubernetes:karpenter.sh/v1:NodePool", "auto-mode-valkey-node-pool");
    const spec = (
      pool.inputs.spec as {
        template: {
          spec: {
            nodeClassRef: unknown;
            requirements: Array<{ key: string; values?: string[] }>;
            taints: unknown;
            expireAfter: string;
          };
        };
      }
    ).template.spec;
    expect(spec.nodeClassRef).toEqual({ group: "eks.amazonaws.com", kind: "NodeClass", name: "valkey" });
    expect(Object.fromEntries(spec.requirements.map((r) => [r.key, r.values]))).toEqual({
      "kubernetes.io/arch": ["arm64"],
      "karpenter.sh/capacity-type": ["on-demand"],
      "node.kubernetes.io/instance-type": ["r7g.large"],
      "topology.kubernetes.io/zone": ["us-west-2a", "us-west-2b", "us-west-2c"],
    });
    expect(spec.taints).toEqual([{ key: "workload", value: "valkey", effect: "NoSchedule" }]);
    expect(spec.expireAfter).toBe("480h");
    expect((nodeClass.inputs.spec as { networkPolicy: string }).networkPolicy).toBe("DefaultAllow");
    // NetworkPolicies are enforced only with Auto Mode's network policy controller turned on.
    expect(recorder.get("kubernetes:core/v1:ConfigMap", "eks-network-policy").inputs).toMatchObject({
      metadata: { name: "amazon-vpc-cni", namespace: "kube-system" },
      data: { "enable-network-policy-controller": "true" },
    });
    expect(recorder.get("aws:eks/accessEntry:AccessEntry", "auto-mode-valkey-node-access").inputs).toMatchObject({
      clusterName: "valkey-test",
      type: "EC2",
    });
    expect(
      recorder.get("aws:eks/accessPolicyAssociation:AccessPolicyAssociation", "auto-mode-valkey-node-access-policy")
        .inputs,
    ).toMatchObject({
      policyArn: "arn:aws:eks::aws:cluster-access-policy/AmazonEKSAutoNodePolicy",
      accessScope: { type: "cluster" },
    });
    const policies = recorder
      .ofType("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
      .map((p) => p.inputs.policyArn);
    expect(policies.sort()).toEqual(
      ["AmazonEC2ContainerRegistryPullOnly", "AmazonEKSWorkerNodeMinimalPolicy"].map(
        (p) => `arn:aws:iam::aws:policy/${p}`,
      ),
    );
    expect(nodeClass.provider).toMatch(/::eks-k8s::/);
  });

  it("puts the default gp3 class on Auto Mode's EBS provisioner, runs the same Valkey, checks and benchmark, one AWS provider, no plain password", async () => {
    const out = await deploy();
    expect(recorder.get("kubernetes:storage.k8s.io/v1:StorageClass", "eks-gp3").inputs).toMatchObject({
      metadata: { name: "gp3" },
      provisioner: "ebs.csi.eks.amazonaws.com",
      parameters: { type: "gp3", encrypted: "true" },
    });
    const t = types();
    for (const want of [
      "valkey-on-eks:valkey:Cluster",
      "kubernetes:apps/v1:StatefulSet",
      "valkey-on-eks:steps:TopologyCheck",
      "valkey-on-eks:benchmark:BenchmarkJob",
      "kubernetes:batch/v1:Job",
    ]) {
      expect(t.has(want), want).toBe(true);
    }
    const statefulSet = recorder.ofType("kubernetes:apps/v1:StatefulSet")[0];
    expect(JSON.stringify(statefulSet?.inputs)).toContain('"karpenter.sh/nodepool":"valkey"');
    for (const r of recorder.resources.filter((x) => x.type.startsWith("aws:")))
      expect(r.provider, `${r.type} ${r.name}`).toMatch(/::pulumi:providers:aws::aws::/);
    for (const r of recorder.resources)
      expect(JSON.stringify(r.redacted), `${r.type} ${r.name}`).not.toContain("pw-auto");
    const report = await new Promise<{ versions: { karpenterChart: string | null } }>((resolve) =>
      out.report.apply((v) => resolve(v as never)),
    );
    expect(report.versions.karpenterChart).toBeNull();
  });

  it("checks only the pool's types in each zone and counts no system nodes", () => {
    const config = autoConfig();
    expect(requiredInstanceTypes(config)).toEqual([
      { key: "karpenter.nodePool (permitted instance types)", types: ["r7g.large"] },
    ]);
    expect(estimateVcpus(config)).toMatchObject({ system: 0, min: 14, max: 14 });
  });

  it("is a stack-file key, off by default", () => {
    expect(parseStackConfig({}).config.eks.autoMode).toBe(false);
    expect(parseStackConfig({ eks: { autoMode: true } }).config.eks.autoMode).toBe(true);
  });
});

describe("Auto Mode builders", () => {
  it("drops the os requirement, keeps the pool's limits and disruption", () => {
    const { config } = parseStackConfig({});
    const pool = buildAutoNodePool({ nodePool: config.karpenter.nodePool, zones: ["us-west-2a"] });
    expect(pool.spec.template.spec.requirements.map((r) => r.key)).not.toContain("kubernetes.io/os");
    expect(pool.spec.limits).toEqual({ cpu: "64", memory: "512Gi" });
    expect(pool.spec.disruption).toEqual({
      consolidationPolicy: "WhenEmpty",
      consolidateAfter: "5m",
      budgets: [{ nodes: "1" }, { nodes: "0", reasons: ["Drifted"] }],
    });
    expect(buildAutoNodeClass({ role: "r", discoveryTag: "c" }).spec.ephemeralStorage).toEqual({ size: "80Gi" });
    expect(() => buildAutoNodeClass({ role: "r", discoveryTag: "c", ephemeralStorageGiB: 10 })).toThrow(/≥ 20/);
  });
});
