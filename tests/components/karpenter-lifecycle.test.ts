/**
 * Karpenter's Valkey pool over its life: no surprise node replacement (a pinned AMI
 * alias by default, drift blocked by a `Drifted` budget of 0 unless `karpenter.nodePool.allowDrift`),
 * and a destroy order that lets nodes drain (the NodePool/EC2NodeClass depend on the node role's
 * policy attachments and EC2_LINUX access entry, which therefore outlive them). Pure builders,
 * the Karpenter 1.14.1 NodePool CRD schema, and the components under Pulumi mocks with the
 * dependencies each registration carries.
 */
import { readFileSync } from "node:fs";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { parseStackConfig } from "../../config/schema.js";
import { versions } from "../../versions.js";
import { recordDependencies } from "../support/dependency-recorder.js";
import { awsMockOutputs, installMocks, settle, valueOf } from "../support/pulumi-mocks.js";
import { KARPENTER_CRD_DIR, requireInstalled } from "../support/toolchain.js";

const mocks = installMocks({ outputs: awsMockOutputs });
const deps = recordDependencies(mocks);
const k8s = await import("@pulumi/kubernetes");
const { Karpenter } = await import("../../components/karpenter.js");
const { buildValkeyNodePool, buildEc2NodeClass } = await import("../../components/aws/karpenter-manifests.js");
const { KARPENTER_NODE_POLICY_NAMES } = await import("../../components/aws/iam.js");

const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"];
const parse = (raw: Record<string, unknown> = {}) => parseStackConfig({ "aws:region": "us-west-2", ...raw }).config;

async function deploy(raw: Record<string, unknown> = {}) {
  const config = parse(raw);
  mocks.reset();
  deps.reset();
  const provider = new k8s.Provider("eks", { kubeconfig: "{}" });
  const karpenter = new Karpenter(
    "karpenter",
    { clusterName: "valkey-test", region: "us-west-2", zones: ZONES, karpenter: config.karpenter },
    { providers: [provider] },
  );
  await settle();
  await valueOf(karpenter.nodeRoleArn);
  await settle();
  return karpenter;
}

describe("no surprise node replacement", () => {
  it("pins the EC2NodeClass AMI alias to versions.env KARPENTER_AMI_ALIAS by default (config karpenter.amiAlias)", () => {
    expect(versions.KARPENTER_AMI_ALIAS).toMatch(/^al2023@v\d{8}$/);
    expect(parse().karpenter.amiAlias).toBe(versions.KARPENTER_AMI_ALIAS);
    expect(buildEc2NodeClass({ role: "r", discoveryTag: "t" }).spec.amiSelectorTerms).toEqual([
      { alias: versions.KARPENTER_AMI_ALIAS },
    ]);
    expect(parse({ karpenter: { amiAlias: "al2023@latest" } }).karpenter.amiAlias).toBe("al2023@latest");
    expect(() => parse({ karpenter: { amiAlias: "al2023@v2026" } })).toThrow(/karpenter\.amiAlias/);
    expect(() => parse({ karpenter: { amiAlias: "bottlerocket@latest" } })).toThrow(/karpenter\.amiAlias/);
  });

  it("blocks drift with a Drifted budget of 0 nodes unless karpenter.nodePool.allowDrift", () => {
    const blocked = buildValkeyNodePool({ nodePool: parse().karpenter.nodePool, zones: ZONES });
    expect(blocked.spec.disruption.budgets).toEqual([{ nodes: "1" }, { nodes: "0", reasons: ["Drifted"] }]);
    const allowed = buildValkeyNodePool({
      nodePool: parse({ karpenter: { nodePool: { allowDrift: true } } }).karpenter.nodePool,
      zones: ZONES,
    });
    expect(allowed.spec.disruption.budgets).toEqual([{ nodes: "1" }]);
    expect(() => parse({ karpenter: { nodePool: { allowDrift: "yes" } } })).toThrow(/karpenter\.nodePool\.allowDrift/);
  });

  it("both budget shapes are valid NodePools for the Karpenter CRD, and a bogus reason is not", () => {
    const crd = parseYaml(
      readFileSync(`${requireInstalled(KARPENTER_CRD_DIR, "Karpenter CRDs")}/karpenter.sh_nodepools.yaml`, "utf8"),
    ) as {
      spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: object } }> };
    };
    const schema = crd.spec.versions.find((v) => v.name === "v1")?.schema.openAPIV3Schema;
    const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(schema as object);
    for (const allowDrift of [false, true]) {
      const pool = buildValkeyNodePool({
        nodePool: parse({ karpenter: { nodePool: { allowDrift } } }).karpenter.nodePool,
        zones: ZONES,
      });
      expect(validate(pool), JSON.stringify(validate.errors)).toBe(true);
    }
    const bogus = buildValkeyNodePool({ nodePool: parse().karpenter.nodePool, zones: ZONES });
    (bogus.spec.disruption.budgets[1] as { reasons: string[] }).reasons = ["Drift"];
    expect(validate(bogus)).toBe(false);
  });

  it("the Karpenter component passes karpenter.amiAlias and the drift budget to the cluster", async () => {
    await deploy({ karpenter: { amiAlias: "al2023@v20260625" } });
    const nodeClass = mocks.get("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "karpenter-valkey-node-class");
    expect((nodeClass.inputs.spec as { amiSelectorTerms: unknown }).amiSelectorTerms).toEqual([
      { alias: "al2023@v20260625" },
    ]);
    const pool = mocks.get("kubernetes:karpenter.sh/v1:NodePool", "karpenter-valkey-node-pool");
    expect((pool.inputs.spec as { disruption: { budgets: unknown } }).disruption.budgets).toEqual([
      { nodes: "1" },
      { nodes: "0", reasons: ["Drifted"] },
    ]);
  });
});

describe("destroy order", () => {
  // The engine deletes a resource's children before it and it before its dependencies, so the
  // NodePool and EC2NodeClass (children of the KarpenterNodePool component) go before the
  // attachments and the access entry the component depends on.
  it("the Valkey KarpenterNodePool depends on every node-role policy attachment and the EC2_LINUX access entry", async () => {
    await deploy();
    const keep = [
      ...KARPENTER_NODE_POLICY_NAMES.map((p) => `karpenter-node-${p}`),
      "karpenter-node-access",
      "karpenter-controller",
    ];
    const missing = keep.filter((k) => !deps.dependsOn("karpenter-valkey", k));
    expect(missing, `karpenter-valkey depends on ${deps.of("karpenter-valkey").join(", ")}`).toEqual([]);
    for (const custom of ["karpenter-valkey-node-pool", "karpenter-valkey-node-class"])
      expect(deps.parentOf(custom)).toBe("karpenter-valkey");
  });
});

describe("CRDs upgraded with the chart", () => {
  it("installs karpenter-crd at the chart version as its own release, before a controller that skips the chart's crds/", async () => {
    await deploy();
    const crd = mocks.get("kubernetes:helm.sh/v3:Release", "karpenter-crd");
    expect(crd.inputs).toMatchObject({
      name: "karpenter-crd",
      chart: "oci://public.ecr.aws/karpenter/karpenter-crd",
      version: versions.KARPENTER_CHART_VERSION,
      namespace: "kube-system",
    });
    expect(crd.provider).toMatch(/::eks::/);
    const controller = mocks.get("kubernetes:helm.sh/v3:Release", "karpenter-controller");
    expect(controller.inputs.skipCrds).toBe(true);
    expect(deps.dependsOn("karpenter-controller", "karpenter-crd")).toBe(true);
    expect(deps.dependsOn("karpenter-valkey", "karpenter-crd")).toBe(true);
  });
});
