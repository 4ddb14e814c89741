/**
 * Every Kubernetes object every stack renders, validated by kubeconform in strict mode against the
 * official Kubernetes JSON schemas of EKS_VERSION (PyPI kubernetes-validate), Karpenter's CRDs
 * (the Karpenter Go module at the chart version) and the Prometheus Operator's PodMonitor and
 * PrometheusRule CRDs (its Go module at PROMETHEUS_OPERATOR_VERSION): the three example stacks, each in both Valkey
 * modes (the eks ones with backup on, all with restore.from set), run under Pulumi mocks; each recorded
 * pulumi-kubernetes resource is turned back into its
 * manifest and all of them go through ONE kubeconform process. Helm releases are not objects of
 * this program (Helm renders the chart) and are left out, by name. Objects with a bogus field, a
 * wrong type or an unknown kind, injected into the same run, must come out invalid: the check can fail.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { awsMockInvokes, awsMockOutputs, installMocks, settle, valueOf } from "../support/pulumi-mocks.js";
import { kubeconform, manifestOf, type KubeconformResult, type Manifest } from "../support/kube-schemas.js";
import { requireInstalled } from "../support/toolchain.js";

const recorder = installMocks({ outputs: awsMockOutputs, invokes: awsMockInvokes });
const { parseStackConfig, rawFromPulumiConfig } = await import("../../config/schema.js");
const { runProgram } = await import("../../stacks/program.js");
const pulumi = await import("@pulumi/pulumi");

const PASSWORD = "pw-schemas-5Rk!unique";
const STACKS = ["replication", "cluster", "byo"] as const;
const MODES = ["replication", "cluster"] as const;
const CASES = STACKS.flatMap((stack) => MODES.map((mode) => ({ stack, mode, id: `${stack}-${mode}` })));

const dir = mkdtempSync(join(tmpdir(), "vbench-schemas-"));
/** Karpenter's CRDs as JSON schemas: outside `dir`, where kubeconform would read them as manifests. */
const crdSchemaDir = mkdtempSync(join(tmpdir(), "vbench-crd-schemas-"));
/** The byo stack reads its kubeconfig file (the example stack leaves it at the provider's default). */
const kubeconfigDir = mkdtempSync(join(tmpdir(), "vbench-schemas-kube-"));
const kubeconfigPath = join(kubeconfigDir, "kubeconfig");
writeFileSync(kubeconfigPath, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");
afterAll(() => [dir, crdSchemaDir, kubeconfigDir].forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Per case: the manifests written (file name -> manifest) and what was left out, with why. */
const rendered = new Map<string, { files: Map<string, Manifest>; skipped: string[] }>();
let results: KubeconformResult[] = [];
let seconds = 0;

function stackConfig(stack: string, mode: string) {
  const doc = parseYaml(readFileSync(`stacks/Pulumi.${stack}.yaml`, "utf8")) as { config: Record<string, unknown> };
  const { raw } = rawFromPulumiConfig(doc.config);
  raw.valkey = { ...(raw.valkey as Record<string, unknown>), mode };
  if (stack === "byo") raw.byo = { ...(raw.byo as Record<string, unknown>), kubeconfig: kubeconfigPath };
  // The backup CronJob, ServiceAccount and ConfigMap too (platform eks only).
  else raw.backup = { enabled: true };
  // The restore's init containers, egress policy and (eks) ServiceAccount too (byo: the user's endpoint and Secret).
  raw.restore = { from: "s3://team-backups/valkey-on-eks/20261125T031700Z" };
  if (stack === "byo") raw.backup = { endpoint: "http://10.231.0.1:5056", credentialsSecret: "s3-keys" };
  // The Prometheus Operator's PodMonitors and PrometheusRule too (checked against its CRDs).
  raw.metrics = { prometheusOperator: true, monitorLabels: { release: "kube-prometheus-stack" } };
  // One stack's benchmark runs a mix: the Node Job and the ConfigMap of its bundled runner.
  if (stack === "byo" && mode === "replication")
    raw.benchmark = {
      ...(raw.benchmark as Record<string, unknown>),
      mix: "get:80,set:20",
      rate: 1000,
      loadgenImage: "registry.example/vbench/vload:1",
    };
  return parseStackConfig(raw).config;
}

const safe = (s: string): string => s.replace(/[^A-Za-z0-9.-]+/g, "_");

/** The bogus objects: each must be reported invalid (or, for the unknown kind, without a schema). */
function negatives(sts: Manifest, pool: Manifest, monitor: Manifest): Record<string, Manifest> {
  const copy = <T>(x: T): T => structuredClone(x);
  const bogusContainer = copy(sts) as Manifest & {
    spec: { template: { spec: { containers: Array<Record<string, unknown>> } } };
  };
  bogusContainer.spec.template.spec.containers[0] = {
    ...bogusContainer.spec.template.spec.containers[0],
    bogusField: true,
  };
  const wrongType = copy(sts) as Manifest & { spec: Record<string, unknown> };
  wrongType.spec.replicas = "three";
  const bogusMeta = copy(sts) as Manifest & { metadata: Record<string, unknown> };
  bogusMeta.metadata = { ...bogusMeta.metadata, bogusMeta: "x" };
  const bogusPool = copy(pool) as Manifest & { spec: { template: { spec: Record<string, unknown> } } };
  bogusPool.spec.template.spec.bogusPoolField = 1;
  const bogusPoolMeta = copy(pool) as Manifest & { metadata: Record<string, unknown> };
  bogusPoolMeta.metadata = { ...bogusPoolMeta.metadata, bogusMeta: "x" };
  const bogusMonitor = copy(monitor) as Manifest & { spec: { podMetricsEndpoints: Array<Record<string, unknown>> } };
  bogusMonitor.spec.podMetricsEndpoints[0] = { ...bogusMonitor.spec.podMetricsEndpoints[0], bogusEndpointField: 1 };
  return {
    "podmonitor-field": bogusMonitor,
    "container-field": bogusContainer,
    "wrong-type": wrongType,
    "metadata-field": bogusMeta,
    "nodepool-field": bogusPool,
    "nodepool-metadata-field": bogusPoolMeta,
    "unknown-kind": { apiVersion: "apps/v1", kind: "StatefulSetTypo", metadata: { name: "x" } },
  };
}

beforeAll(async () => {
  for (const c of CASES) {
    recorder.reset();
    const out = runProgram({ stack: c.stack, config: stackConfig(c.stack, c.mode), password: pulumi.secret(PASSWORD) });
    // A mix's Job waits for its esbuild bundle, outside the mocks' request count.
    await valueOf(out.report);
    await settle();
    const files = new Map<string, Manifest>();
    const skipped: string[] = [];
    mkdirSync(join(dir, c.id));
    recorder.resources.forEach((r, i) => {
      const m = manifestOf(r);
      if (m === undefined) return;
      if ("skipped" in m) return void skipped.push(m.skipped);
      const file = join(c.id, `${String(i).padStart(3, "0")}-${safe(m.manifest.kind)}-${safe(r.name)}.yaml`);
      writeFileSync(join(dir, file), JSON.stringify(m.manifest));
      files.set(file, m.manifest);
    });
    rendered.set(c.id, { files, skipped });
  }
  const all = [...rendered.values()].flatMap((r) => [...r.files.values()]);
  const sts = all.find((m) => m.kind === "StatefulSet");
  const pool = all.find((m) => m.kind === "NodePool");
  const monitor = all.find((m) => m.kind === "PodMonitor");
  if (!sts || !pool || !monitor)
    throw new Error("expected a StatefulSet, a NodePool and a PodMonitor among the rendered objects");
  mkdirSync(join(dir, "negative"));
  for (const [name, m] of Object.entries(negatives(sts, pool, monitor)))
    writeFileSync(join(dir, "negative", `${name}.yaml`), JSON.stringify(m));
  const start = performance.now();
  results = kubeconform(dir, crdSchemaDir);
  seconds = (performance.now() - start) / 1000;
}, 120_000);

const resultsUnder = (prefix: string): KubeconformResult[] =>
  results.filter((r) => r.filename.startsWith(join(dir, prefix) + "/"));
const failures = (rs: KubeconformResult[]): string[] =>
  rs.filter((r) => r.status !== "statusValid").map((r) => `${r.filename.slice(dir.length + 1)}: ${r.status} ${r.msg}`);

describe("every Kubernetes object the stacks render passes kubeconform -strict (Kubernetes schemas + Karpenter and Prometheus Operator CRDs)", () => {
  for (const c of CASES) {
    it(`${c.stack} stack, ${c.mode} mode`, () => {
      const { files } = rendered.get(c.id) ?? { files: new Map<string, Manifest>() };
      const rs = resultsUnder(c.id);
      expect(failures(rs)).toEqual([]);
      // Every object written was validated once, none was dropped or skipped.
      expect(rs.map((r) => r.filename.slice(dir.length + 1)).sort()).toEqual([...files.keys()].sort());
      const kinds = new Set([...files.values()].map((m) => `${m.apiVersion} ${m.kind}`));
      for (const k of [
        "v1 Namespace",
        "v1 Service",
        "apps/v1 StatefulSet",
        "v1 Secret",
        "batch/v1 Job",
        "monitoring.coreos.com/v1 PodMonitor",
        "monitoring.coreos.com/v1 PrometheusRule",
      ])
        expect(kinds, k).toContain(k);
      if (c.stack !== "byo")
        for (const k of ["karpenter.sh/v1 NodePool", "karpenter.k8s.aws/v1 EC2NodeClass"])
          expect(kinds, k).toContain(k);
    });
  }

  it("leaves out only Helm releases, by name", () => {
    const skipped = [...rendered.values()].flatMap((r) => r.skipped);
    for (const s of skipped) expect(s).toMatch(/^kubernetes:helm\.sh\/v\d+:Release \S+: a Helm release/);
    expect(rendered.get("cluster-cluster")?.skipped.length).toBeGreaterThan(0);
    expect(rendered.get("byo-replication")?.skipped).toEqual([]);
  });

  const expectResult = (r: KubeconformResult | undefined, status: KubeconformResult["status"], msg: RegExp): void => {
    expect(r?.status, r?.filename).toBe(status);
    expect(r?.msg, r?.filename).toMatch(msg);
  };

  it("fails a bogus field, a wrong type and an unknown kind (injected into the same run)", () => {
    const byName = Object.fromEntries(
      resultsUnder("negative").map((r) => [r.filename.slice(r.filename.lastIndexOf("/") + 1, -".yaml".length), r]),
    );
    expect(Object.keys(byName).sort()).toEqual([
      "container-field",
      "metadata-field",
      "nodepool-field",
      "nodepool-metadata-field",
      "podmonitor-field",
      "unknown-kind",
      "wrong-type",
    ]);
    expectResult(
      byName["podmonitor-field"],
      "statusInvalid",
      /\/spec\/podMetricsEndpoints\/0.*'bogusEndpointField' not allowed/,
    );
    expectResult(
      byName["container-field"],
      "statusInvalid",
      /\/spec\/template\/spec\/containers\/0.*'bogusField' not allowed/,
    );
    expectResult(byName["wrong-type"], "statusInvalid", /\/spec\/replicas.*got string, want (null or )?integer/);
    expectResult(byName["metadata-field"], "statusInvalid", /\/metadata.*'bogusMeta' not allowed/);
    expectResult(byName["nodepool-field"], "statusInvalid", /\/spec\/template\/spec.*'bogusPoolField' not allowed/);
    expectResult(byName["nodepool-metadata-field"], "statusInvalid", /\/metadata.*'bogusMeta' not allowed/);
    expectResult(byName["unknown-kind"], "statusError", /could not find schema for StatefulSetTypo/);
  });

  it("a missing schema or tool is named with the command that installs it", () => {
    const missing = join(dir, "no-such-kubeconform");
    expect(() => requireInstalled(missing, "kubeconform")).toThrow(
      `kubeconform not found at ${missing}: run \`bash .ci/toolchain/install.sh --schemas\``,
    );
  });

  it("is one kubeconform run, and a fast one", () => {
    expect(results.length).toBe([...rendered.values()].reduce((n, r) => n + r.files.size, 0) + 7);
    expect(seconds).toBeLessThan(60); // 3.5 s measured on 2 busy cores
  });
});

describe("manifestOf", () => {
  it("keeps a secret's shape but none of its values", () => {
    const inputs = { stringData: { password: PASSWORD, port: 6379 }, metadata: { name: "s" }, data: [PASSWORD] };
    const redacted = { stringData: "[secret]", metadata: { name: "s" }, data: ["[secret]"] };
    const got = manifestOf({ type: "kubernetes:core/v1:Secret", name: "s", inputs, redacted });
    expect(got).toEqual({
      manifest: {
        apiVersion: "v1",
        kind: "Secret",
        stringData: { password: "[secret]", port: 6379 },
        metadata: { name: "s" },
        data: ["[secret]"],
      },
    });
  });

  it("no manifest file of the stacks holds the password", () => {
    const texts = [...rendered.values()].flatMap((r) =>
      [...r.files.keys()].map((f) => readFileSync(join(dir, f), "utf8")),
    );
    expect(texts.length).toBeGreaterThan(0);
    for (const t of texts) expect(t).not.toContain(PASSWORD);
    expect(texts.some((t) => t.includes('"[secret]"'))).toBe(true);
  });

  it("takes apiVersion and kind from the type token, core group as v1", () => {
    expect(
      manifestOf({
        type: "kubernetes:apps/v1:StatefulSet",
        name: "s",
        inputs: { metadata: { name: "s" } },
        redacted: { metadata: { name: "s" } },
      }),
    ).toEqual({ manifest: { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "s" } } });
    expect(
      manifestOf({
        type: "kubernetes:core/v1:Service",
        name: "s",
        inputs: { apiVersion: "v1", kind: "Service" },
        redacted: { apiVersion: "v1", kind: "Service" },
      }),
    ).toEqual({ manifest: { apiVersion: "v1", kind: "Service" } });
    expect(manifestOf({ type: "kubernetes:karpenter.sh/v1:NodePool", name: "p", inputs: {}, redacted: {} })).toEqual({
      manifest: { apiVersion: "karpenter.sh/v1", kind: "NodePool" },
    });
  });

  it("skips Helm releases and patches, ignores non-Kubernetes types, and rejects a disagreeing kind", () => {
    const skipped = (type: string): string => {
      const m = manifestOf({ type, name: "x", inputs: {}, redacted: {} });
      return m !== undefined && "skipped" in m ? m.skipped : "(not skipped)";
    };
    expect(skipped("kubernetes:helm.sh/v3:Release")).toBe(
      "kubernetes:helm.sh/v3:Release x: a Helm release (its chart's objects are rendered by Helm, not by this program)",
    );
    expect(skipped("kubernetes:apps/v1:DeploymentPatch")).toContain("a server-side-apply patch");
    expect(manifestOf({ type: "aws:iam/role:Role", name: "r", inputs: {}, redacted: {} })).toBeUndefined();
    expect(manifestOf({ type: "pulumi:providers:kubernetes", name: "k", inputs: {}, redacted: {} })).toBeUndefined();
    expect(() =>
      manifestOf({
        type: "kubernetes:apps/v1:StatefulSet",
        name: "s",
        inputs: { kind: "Deployment" },
        redacted: { kind: "Deployment" },
      }),
    ).toThrow(/inputs say kind "Deployment"/);
    expect(() => manifestOf({ type: "kubernetes:weird", name: "w", inputs: {}, redacted: {} })).toThrow(
      /not a pulumi-kubernetes object type token/,
    );
  });
});
