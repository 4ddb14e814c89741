/**
 * The Valkey NodePool / EC2NodeClass builders, checked field by field and against the Karpenter
 * 1.14.1 CRDs' openAPIV3Schema (ajv; the CRDs' CEL x-kubernetes-validations are not evaluated by
 * ajv, so the restricted-label rules are covered by the builder's own check instead), and the
 * KarpenterNodePool component used standalone as on a bring-your-own cluster.
 */
import { readFileSync } from "node:fs";
import type * as pulumi from "@pulumi/pulumi";
import { join } from "node:path";
import { Ajv, type ValidateFunction } from "ajv";
import { beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { parseStackConfig } from "../../config/schema.js";
import { versions } from "../../versions.js";
import { installMocks, settle, type MockRecorder } from "../support/pulumi-mocks.js";
import { KARPENTER_CRD_DIR, requireInstalled } from "../support/toolchain.js";

const mocks: MockRecorder = installMocks();
const { buildEc2NodeClass, buildValkeyNodePool } = await import("../../components/aws/karpenter-manifests.js");
const { KarpenterNodePool } = await import("../../components/karpenter-node-pool.js");
const k8s = await import("@pulumi/kubernetes");

const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"];

function crdValidator(file: string): ValidateFunction {
  requireInstalled(join(KARPENTER_CRD_DIR, file), "Karpenter's CRD");
  const crd = parseYaml(readFileSync(join(KARPENTER_CRD_DIR, file), "utf8")) as {
    spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: object } }> };
  };
  const v1 = crd.spec.versions.find((v) => v.name === "v1");
  if (!v1) throw new Error(`${file} has no v1`);
  return new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(v1.schema.openAPIV3Schema);
}

const nodePoolConfig = (raw: Record<string, unknown> = {}) =>
  parseStackConfig({ "aws:region": "us-west-2", ...raw }).config.karpenter.nodePool;

describe("buildValkeyNodePool", () => {
  it("sets every requirement, the taint, disruption, limits and the node class", () => {
    const pool = buildValkeyNodePool({ nodePool: nodePoolConfig(), zones: ZONES });
    expect(pool.metadata.name).toBe("valkey");
    expect(pool.spec.template.spec.requirements).toEqual([
      { key: "kubernetes.io/arch", operator: "In", values: ["arm64"] },
      { key: "kubernetes.io/os", operator: "In", values: ["linux"] },
      { key: "karpenter.sh/capacity-type", operator: "In", values: ["on-demand"] },
      { key: "node.kubernetes.io/instance-type", operator: "In", values: ["r7g.large", "r7g.xlarge", "r7g.2xlarge"] },
      { key: "topology.kubernetes.io/zone", operator: "In", values: ZONES },
    ]);
    expect(pool.spec.template.spec.taints).toEqual([{ key: "workload", value: "valkey", effect: "NoSchedule" }]);
    expect(pool.spec.template.spec.nodeClassRef).toEqual({
      group: "karpenter.k8s.aws",
      kind: "EC2NodeClass",
      name: "valkey",
    });
    expect(pool.spec.template.spec.expireAfter).toBe("Never");
    expect(pool.spec.disruption).toEqual({
      consolidationPolicy: "WhenEmpty",
      consolidateAfter: "5m",
      budgets: [{ nodes: "1" }, { nodes: "0", reasons: ["Drifted"] }],
    });
    expect(pool.spec.limits).toEqual({ cpu: "64", memory: "512Gi" });
  });

  it("permits the network-optimised siblings and the configured limits", () => {
    const config = nodePoolConfig({
      karpenter: {
        nodePool: {
          networkOptimized: true,
          instanceFamilies: ["r8g"],
          instanceSizes: ["large"],
          limits: { cpu: 32, memory: "256Gi" },
        },
      },
    });
    const pool = buildValkeyNodePool({
      nodePool: config,
      zones: ["us-west-2a", "us-west-2b"],
      consolidateAfter: "10m",
    });
    expect(
      pool.spec.template.spec.requirements.find((r) => r.key === "node.kubernetes.io/instance-type")?.values,
    ).toEqual(["r8g.large", "r8gn.large"]);
    expect(pool.spec.template.spec.requirements.find((r) => r.key === "topology.kubernetes.io/zone")?.values).toEqual([
      "us-west-2a",
      "us-west-2b",
    ]);
    expect(pool.spec.limits).toEqual({ cpu: "32", memory: "256Gi" });
    expect(pool.spec.disruption.consolidateAfter).toBe("10m");
  });

  it("appends valid extra requirements and rejects restricted or config-owned keys", () => {
    const extra = [{ key: "karpenter.k8s.aws/instance-generation", operator: "Gt" as const, values: ["6"] }];
    expect(
      buildValkeyNodePool({
        nodePool: nodePoolConfig(),
        zones: ZONES,
        extraRequirements: extra,
      }).spec.template.spec.requirements.at(-1),
    ).toEqual(extra[0]);
    const build = (key: string) => () =>
      buildValkeyNodePool({
        nodePool: nodePoolConfig(),
        zones: ZONES,
        extraRequirements: [{ key, operator: "Exists" }],
      });
    expect(build("karpenter.sh/nodepool")).toThrow(/karpenter.sh\/nodepool" is restricted/);
    expect(build("kubernetes.io/hostname")).toThrow(/restricted/);
    expect(build("karpenter.sh/anything")).toThrow(/restricted/);
    expect(build("kubernetes.io/arch")).toThrow(/comes from the stack config/);
    expect(() =>
      buildValkeyNodePool({
        nodePool: nodePoolConfig(),
        zones: ZONES,
        extraRequirements: [{ key: "example.com/x", operator: "In", values: [] }],
      }),
    ).toThrow(/at least one value/);
    expect(() => buildValkeyNodePool({ nodePool: nodePoolConfig(), zones: [] })).toThrow(/zone/);
  });
});

describe("buildEc2NodeClass", () => {
  it("selects subnets and security groups by the discovery tag, AL2023, encrypted gp3 root, IMDSv2", () => {
    const nodeClass = buildEc2NodeClass({ role: "valkey-node-role", discoveryTag: "valkey-test" });
    expect(nodeClass.metadata.name).toBe("valkey");
    expect(nodeClass.spec.role).toBe("valkey-node-role");
    expect(nodeClass.spec.amiSelectorTerms).toEqual([{ alias: versions.KARPENTER_AMI_ALIAS }]);
    expect(nodeClass.spec.subnetSelectorTerms).toEqual([{ tags: { "karpenter.sh/discovery": "valkey-test" } }]);
    expect(nodeClass.spec.securityGroupSelectorTerms).toEqual([{ tags: { "karpenter.sh/discovery": "valkey-test" } }]);
    expect(nodeClass.spec.blockDeviceMappings).toEqual([
      {
        deviceName: "/dev/xvda",
        rootVolume: true,
        ebs: { volumeSize: "50Gi", volumeType: "gp3", encrypted: true, deleteOnTermination: true },
      },
    ]);
    expect(nodeClass.spec.metadataOptions.httpTokens).toBe("required");
  });

  it("takes a pinned alias and volume size, and rejects other AMI families", () => {
    const nodeClass = buildEc2NodeClass({
      role: "r",
      discoveryTag: "t",
      amiAlias: "al2023@v20250715",
      rootVolumeGiB: 100,
    });
    expect(nodeClass.spec.amiSelectorTerms).toEqual([{ alias: "al2023@v20250715" }]);
    expect(nodeClass.spec.blockDeviceMappings[0]?.ebs.volumeSize).toBe("100Gi");
    expect(() => buildEc2NodeClass({ role: "r", discoveryTag: "t", amiAlias: "bottlerocket@latest" })).toThrow(
      /al2023/,
    );
    expect(() => buildEc2NodeClass({ role: "r", discoveryTag: "t", rootVolumeGiB: 8 })).toThrow(/≥ 20/);
  });
});

describe("the built objects against the Karpenter 1.14.1 CRD schemas", () => {
  let validateNodePool: ValidateFunction;
  let validateNodeClass: ValidateFunction;
  beforeAll(() => {
    validateNodePool = crdValidator("karpenter.sh_nodepools.yaml");
    validateNodeClass = crdValidator("karpenter.k8s.aws_ec2nodeclasses.yaml");
  });

  it("accepts the NodePool and EC2NodeClass for default and network-optimised configs", () => {
    for (const raw of [{}, { karpenter: { nodePool: { networkOptimized: true, instanceFamilies: ["r8g", "m8g"] } } }]) {
      const pool = buildValkeyNodePool({ nodePool: nodePoolConfig(raw), zones: ZONES });
      expect(validateNodePool(pool), JSON.stringify(validateNodePool.errors)).toBe(true);
    }
    const nodeClass = buildEc2NodeClass({ role: "valkey-node-role", discoveryTag: "valkey-test" });
    expect(validateNodeClass(nodeClass), JSON.stringify(validateNodeClass.errors)).toBe(true);
  });

  it("rejects objects that break the schema", () => {
    const pool = buildValkeyNodePool({ nodePool: nodePoolConfig(), zones: ZONES });
    const badOperator = structuredClone(pool);
    (badOperator.spec.template.spec.requirements[0] as { operator: string }).operator = "Equals";
    expect(validateNodePool(badOperator)).toBe(false);
    const badPolicy = structuredClone(pool);
    (badPolicy.spec.disruption as { consolidationPolicy: string }).consolidationPolicy = "WhenIdle";
    expect(validateNodePool(badPolicy)).toBe(false);
    const badLimit = structuredClone(pool);
    badLimit.spec.limits.memory = "lots";
    expect(validateNodePool(badLimit)).toBe(false);
    const nodeClass = buildEc2NodeClass({ role: "r", discoveryTag: "t" });
    const badTokens = structuredClone(nodeClass);
    (badTokens.spec.metadataOptions as { httpTokens: string }).httpTokens = "sometimes";
    expect(validateNodeClass(badTokens)).toBe(false);
    const badVolume = structuredClone(nodeClass);
    (badVolume.spec.blockDeviceMappings[0]?.ebs as { volumeType: string }).volumeType = "gp9";
    expect(validateNodeClass(badVolume)).toBe(false);
  });
});

describe("KarpenterNodePool on a bring-your-own cluster", () => {
  it("creates the EC2NodeClass and NodePool through the given provider from byo config", async () => {
    mocks.reset();
    const { config } = parseStackConfig({
      "platform": "byo",
      "aws:region": "eu-west-1",
      "byo": {
        manageKarpenterNodePool: true,
        karpenterNodeRole: "KarpenterNodeRole-prod",
        karpenterDiscoveryTag: "prod",
      },
    });
    const provider = new k8s.Provider("byo", { kubeconfig: "{}" });
    const pool = new KarpenterNodePool(
      "valkey-pool",
      {
        nodePool: config.karpenter.nodePool,
        zones: config.aws.zones,
        nodeRoleName: config.byo.karpenterNodeRole ?? "",
        discoveryTag: config.byo.karpenterDiscoveryTag ?? "",
      },
      { provider },
    );
    await settle();
    expect(pool.nodePoolName).toBe("valkey");
    const crs = mocks.ofType("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass");
    expect(crs.map((r) => r.name)).toEqual(["valkey-pool-node-class"]);
    const nodeClass = mocks.get("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "valkey-pool-node-class");
    expect(nodeClass.provider).toMatch(/::byo::/);
    expect(nodeClass.inputs).toMatchObject({
      metadata: { name: "valkey" },
      spec: { role: "KarpenterNodeRole-prod", subnetSelectorTerms: [{ tags: { "karpenter.sh/discovery": "prod" } }] },
    });
    const nodePool = mocks.get("kubernetes:karpenter.sh/v1:NodePool", "valkey-pool-node-pool");
    expect(nodePool.provider).toMatch(/::byo::/);
    const spec = nodePool.inputs.spec as {
      template: { spec: { requirements: Array<{ key: string; values: string[] }> } };
    };
    expect(spec.template.spec.requirements.find((r) => r.key === "topology.kubernetes.io/zone")?.values).toEqual([
      "eu-west-1a",
      "eu-west-1b",
      "eu-west-1c",
    ]);
  });

  const ARGS = {
    nodePool: nodePoolConfig(),
    zones: ZONES,
    nodeRoleName: "KarpenterNodeRole-prod",
    discoveryTag: "prod",
  };

  it("refuses to start without a Kubernetes provider instead of falling back to the ambient kubeconfig", () => {
    expect(() => new KarpenterNodePool("no-provider", ARGS)).toThrow(
      /KarpenterNodePool no-provider: pass the target cluster's Kubernetes provider as a resource option/,
    );
  });

  it("creates its custom resources only once opts.dependsOn is ready (e.g. the release that installs the CRDs)", async () => {
    mocks.reset();
    const provider = new k8s.Provider("byo", { kubeconfig: "{}" });
    let open: (ready: pulumi.Resource[]) => void = () => undefined;
    const ready = new Promise<pulumi.Resource[]>((resolve) => (open = resolve));
    new KarpenterNodePool("gated-pool", ARGS, { provider, dependsOn: ready });
    await settle();
    expect(mocks.resources.filter((r) => r.name.startsWith("gated-pool")).map((r) => r.name)).toEqual([]);
    open([provider]);
    await settle();
    const created = mocks.resources.filter((r) => r.name.startsWith("gated-pool-"));
    expect(created.map((r) => r.name).sort()).toEqual(["gated-pool-node-class", "gated-pool-node-pool"]);
    for (const r of created) expect(r.provider, r.name).toMatch(/::pulumi:providers:kubernetes::byo::/);
  });

  it("the byo config requires the node role and discovery tag with manageKarpenterNodePool", () => {
    expect(() => parseStackConfig({ platform: "byo", byo: { manageKarpenterNodePool: true } })).toThrow(
      /byo.karpenterNodeRole: is required[\s\S]*byo.karpenterDiscoveryTag: is required/,
    );
    expect(() =>
      parseStackConfig({
        platform: "byo",
        byo: { manageKarpenterNodePool: true, karpenterNodeRole: "arn:aws:iam::1:role/x", karpenterDiscoveryTag: "t" },
      }),
    ).toThrow(/IAM role name/);
  });
});
