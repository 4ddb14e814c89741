/**
 * The whole program under Pulumi mocks, per stack shape: which resources exist, that nothing
 * calls an invoke it did not declare, that the password never reaches a plain-text input or
 * output, and the report's shape.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  awsMockInvokes,
  awsMockOutputs,
  installMocks,
  isSecretOutput,
  settle,
  valueOf,
} from "../support/pulumi-mocks.js";
import { resultRow } from "../support/result-rows.js";
import { versions } from "../../versions.js";
import type { StackConfig } from "../../config/types.js";
import { CLUSTER_MEMBER_LIVE_KEYS } from "../support/live-keys.js";

/** What the dynamic check/results resources return once they ran (they do not run under mocks). */
const ROW = resultRow();
const CHECK_REPORT = {
  ok: true,
  mode: "cluster",
  failures: [],
  nodeCount: 6,
  primariesPerZone: { "us-west-2a": 1, "us-west-2b": 1, "us-west-2c": 1 },
  shards: [
    {
      primary: {
        address: "valkey-cluster-0:6379",
        zone: "us-west-2a",
        slotRanges: ["0-5460"],
        slotCount: 5461,
        keys: 42,
      },
      replicas: [{ address: "valkey-cluster-4:6379", zone: "us-west-2b", crossAz: true, linkUp: true }],
    },
  ],
};
const BENCH_RUN_STAMP = "2026-11-23T14:00:00.000Z/abcd1234";
const ROLLOUT = {
  steps: [
    {
      step: "restart replica valkey-cluster-4.valkey-cluster-headless:6379 (shard 0)",
      kind: "replica",
      address: "valkey-cluster-4.valkey-cluster-headless:6379",
      startMs: 5,
      ms: 21000,
    },
  ],
  restartedPods: ["valkey-cluster-4"],
  totalMs: 21500,
};
const recorder = installMocks({
  invokes: awsMockInvokes,
  outputs: (r) => {
    if (r.name === "valkey-benchmark-results-run")
      return { rows: [ROW], csv: "workload,...\n", runStamp: BENCH_RUN_STAMP };
    if (r.name === "valkey-check-after-benchmark-run") return { report: CHECK_REPORT, table: "VERIFY: PASS" };
    if (r.name === "valkey-rolling-restart-run") return { ...r.inputs, ...ROLLOUT };
    return awsMockOutputs(r);
  },
});

const { parseStackConfig, loadStackFile } = await import("../../config/schema.js");
const { runProgram, imageVersion, selectorOf } = await import("../../stacks/program.js");
const pulumi = await import("@pulumi/pulumi");

const PASSWORD = "pw-mock-7Qx!unique";
const dir = mkdtempSync(join(tmpdir(), "vbench-program-"));
const kubeconfigPath = join(dir, "kubeconfig");
writeFileSync(kubeconfigPath, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");

const types = (): string[] => [...new Set(recorder.resources.map((r) => r.type))].sort();
const awsTypes = (): string[] => types().filter((t) => /^(aws|awsx|eks):/.test(t) || t === "pulumi:providers:aws");

function expectNoPlainPassword(): void {
  for (const r of recorder.resources) {
    expect(JSON.stringify(r.redacted), `${r.type} ${r.name}`).not.toContain(PASSWORD);
    // Dynamic providers are serialized code: neither the password nor a kubeconfig may be inside.
    const provider = (r.inputs as { __provider?: unknown }).__provider;
    if (typeof provider === "string") expect(provider).not.toContain(PASSWORD);
  }
}

beforeEach(() => recorder.reset());

describe("the program under mocks", () => {
  it("cluster stack on EKS: EKS, Karpenter, the cluster release, bootstrap, checks, benchmark; no plain password", async () => {
    const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
    const out = runProgram({ stack: "cluster", config, password: pulumi.secret(PASSWORD) });
    await settle();
    const t = types();
    for (const want of [
      "valkey-on-eks:valkey:Cluster",
      "valkey-on-eks:benchmark:BenchmarkJob",
      "valkey-on-eks:steps:TopologyCheck",
      "kubernetes:apps/v1:StatefulSet",
      "kubernetes:core/v1:Namespace",
      "kubernetes:batch/v1:Job",
      "kubernetes:karpenter.sh/v1:NodePool",
      "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
      "kubernetes:helm.sh/v3:Release",
      "awsx:ec2:Vpc",
      "eks:index:Cluster",
      "aws:sqs/queue:Queue",
    ]) {
      expect(t, want).toContain(want);
    }
    expect(
      recorder.resources.some(
        (r) => r.type.includes("ClusterBootstrap") || r.name.startsWith("valkey-cluster-bootstrap"),
      ),
    ).toBe(true);
    // Without restore.from no RestoreCheck (tests/stacks/restore-program.test.ts: with it), and the report says so.
    expect(t).not.toContain("valkey-on-eks:steps:RestoreCheck");
    // Lowered primaries: the ClusterScaleIn step empties the leaving pods before the StatefulSet shrinks.
    expect(recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-cluster-scale-in-run").inputs).toMatchObject({
      namespace: config.valkey.namespace,
      connector: config.checks.connector,
    });
    expect(recorder.get("kubernetes:apps/v1:StatefulSet", "valkey-cluster-members").dependsOn).toContain(
      "valkey-cluster-scale-in-run",
    );
    expect(recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-cluster-shape-run").inputs).toMatchObject({
      scaleIn: true,
    });
    // The benchmark runs after the check (dependsOn, which the SDK expands to the check's resource),
    // and a second check follows the results (its `after` input).
    expect(recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-check-run").parent).toBe("valkey-check");
    expect(recorder.get("valkey-on-eks:benchmark:BenchmarkJob", "valkey-benchmark").dependsOn).toContain(
      "valkey-check-run",
    );
    expect(recorder.get("kubernetes:batch/v1:Job", "valkey-benchmark-job").parent).toBe("valkey-benchmark");
    expect(recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-check-after-benchmark-run").parent).toBe(
      "valkey-check-after-benchmark",
    );
    expect(recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-check-after-benchmark-run").dependencies).toContain(
      "valkey-benchmark-results-run",
    );
    expectNoPlainPassword();
    expect(await isSecretOutput(out.kubeconfig)).toBe(true);
    if (out.password === undefined) throw new Error("password output expected");
    expect(await isSecretOutput(out.password)).toBe(true);
    expect(await isSecretOutput(out.report)).toBe(false);
    const report = await valueOf(out.report);
    expect(report).toMatchObject({ schemaVersion: 1, stack: "cluster", platform: "eks", mode: "cluster", pods: 6 });
    expect(report.endpoints).toEqual({
      namespace: "valkey",
      write: "valkey-cluster.valkey.svc.cluster.local",
      read: null,
      port: 6379,
      sentinel: null,
      sentinelPort: null,
      masterName: null,
    });
    // Cost columns appended; us-west-2 has no table prices and the mocks refuse the Pricing API
    // invoke, so the cost is missing (null), never invented (tests/cost-program.test.ts: live and fallback); no
    // transfer measured.
    const none = {
      cross_zone_bytes_per_s: null,
      transfer_usd_per_hour: null,
      usd_per_hour: null,
      usd_per_million_ops_per_s: null,
    };
    expect(report.benchmark?.rows).toEqual([{ ...ROW, ...none }]);
    expect(report.cost).toMatchObject({
      region: "us-west-2",
      usdPerHour: null,
      priceSource: "table",
      valkeyInstanceType: "r7g.large",
    });
    expect(report.cost?.pricingApiError).toEqual(expect.any(String));
    expect(report.versions).toMatchObject({
      // The stack file pins the image; the server and client versions come from the mocked benchmark rows.
      valkeyImage: config.valkey.image,
      server: "9.0.2",
      client: "valkey-benchmark 9.0.2",
      karpenterChart: versions.KARPENTER_CHART_VERSION,
    });
    // The last rolling restart, as the RollingRestart step reported it.
    expect(report.rollout).toEqual(ROLLOUT);
    expect(report.restore).toBeNull();
    // The report carries the check that ran AFTER the benchmark (per-primary keys).
    expect(report.topology?.primaries[0]).toMatchObject({
      address: "valkey-cluster-0:6379",
      keys: 42,
      replicas: [{ zone: "us-west-2b", crossAz: true }],
    });
    expect(JSON.stringify(report)).not.toContain(PASSWORD);
  });

  it("rolling restarts: OnDelete StatefulSets, RollingRestart after the bootstrap and before the check; waiting on the HAProxy pods in replication mode; a new image changes the template hash, checks.runId does not", async () => {
    const rollInputs = async (file: string, change: (c: StackConfig) => void = () => undefined) => {
      recorder.reset();
      const { config } = loadStackFile(file);
      change(config);
      runProgram({ stack: "s", config, password: pulumi.secret(PASSWORD) });
      await settle();
      return recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-rolling-restart-run");
    };
    for (const [file, sets] of [
      ["stacks/Pulumi.cluster.yaml", ["valkey-cluster"]],
      ["stacks/Pulumi.replication.yaml", ["valkey", "valkey-sentinel"]],
    ] as const) {
      const roll = await rollInputs(file);
      expect(roll.inputs.statefulSets, file).toEqual(sets);
      // Kubernetes name -> resource name.
      const resource: Record<string, string> = {
        "valkey-cluster": "valkey-cluster-members",
        "valkey": "valkey-members",
        "valkey-sentinel": "valkey-sentinel",
      };
      for (const name of sets)
        expect(
          (
            recorder.get("kubernetes:apps/v1:StatefulSet", resource[name] as string).inputs.spec as {
              updateStrategy: unknown;
            }
          ).updateStrategy,
          name,
        ).toEqual({ type: "OnDelete" });
      if (file.includes("cluster")) expect(roll.dependencies).toContain("valkey-cluster-bootstrap-run");
      // Replication: between steps it waits on the HAProxy pods' /sentinels (their labels, their status port).
      if (file.includes("cluster")) expect(roll.inputs.proxy, file).toBeUndefined();
      else {
        const haproxy = recorder.get("kubernetes:apps/v1:Deployment", "valkey-haproxy").inputs as {
          spec: {
            selector: { matchLabels: Record<string, string> };
            template: { spec: { containers: { ports: { name: string; containerPort: number }[] }[] } };
          };
        };
        const labels = Object.entries(haproxy.spec.selector.matchLabels).map(([k, v]) => `${k}=${v}`);
        const status = haproxy.spec.template.spec.containers[0]?.ports.find((p) => p.name === "status")?.containerPort;
        const proxy = roll.inputs.proxy as { selector: string; statusPort: number };
        expect(proxy.selector.split(",").sort(), file).toEqual(labels.sort());
        expect(proxy.statusPort, file).toBe(status);
      }
      const hash = roll.inputs.templateHash;
      expect(
        (await rollInputs(file, (c) => (c.checks = { ...c.checks, runId: "again" }))).inputs.templateHash,
        file,
      ).toBe(hash);
      expect(
        (await rollInputs(file, (c) => (c.valkey = { ...c.valkey, image: "registry.example/valkey:9.1.2" }))).inputs
          .templateHash,
        file,
      ).not.toBe(hash);
    }
  });

  it("live config: LiveConfig after RollingRestart, the check after both, given the LIVE directives; a maxmemoryPolicy change reaches it and rolls nothing, ioThreads (restart by choice) rolls", async () => {
    const stepInputs = async (file: string, change: (c: StackConfig) => void = () => undefined) => {
      recorder.reset();
      const { config } = loadStackFile(file);
      change(config);
      runProgram({ stack: "s", config, password: pulumi.secret(PASSWORD) });
      await settle();
      return {
        live: recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-live-config-run"),
        roll: recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-rolling-restart-run"),
        check: recorder.get("pulumi-nodejs:dynamic:Resource", "valkey-check-run"),
      };
    };
    for (const file of ["stacks/Pulumi.cluster.yaml", "stacks/Pulumi.replication.yaml"]) {
      const { live, roll, check } = await stepInputs(file);
      expect(live.dependencies, file).toContain("valkey-rolling-restart-run");
      // The check follows both steps' run stamps: a roll alone or a live change alone re-runs it.
      expect(check.dependencies, file).toEqual(
        expect.arrayContaining(["valkey-rolling-restart-run", "valkey-live-config-run"]),
      );
      expect((check.inputs.triggers as unknown[]).length, file).toBe(2);
      const directives = live.inputs.directives as Record<string, string>;
      expect(Object.keys(directives).sort(), file).toEqual(
        file.includes("cluster")
          ? [...CLUSTER_MEMBER_LIVE_KEYS]
          : [
              "appendfsync",
              "appendonly",
              "maxmemory",
              "maxmemory-policy",
              "min-replicas-max-lag",
              "min-replicas-to-write",
              "protected-mode",
              "repl-diskless-sync-delay",
              "replica-read-only",
              "save",
            ],
      );
      expect(JSON.stringify(live.redacted), file).not.toContain(PASSWORD);
      const policy = await stepInputs(file, (c) => (c.valkey = { ...c.valkey, maxmemoryPolicy: "volatile-ttl" }));
      expect(directives["maxmemory-policy"], file).not.toBe("volatile-ttl");
      expect((policy.live.inputs.directives as Record<string, string>)["maxmemory-policy"], file).toBe("volatile-ttl");
      expect(policy.roll.inputs.templateHash, file).toBe(roll.inputs.templateHash);
      const threads = await stepInputs(file, (c) => (c.valkey = { ...c.valkey, ioThreads: c.valkey.ioThreads + 1 }));
      expect(threads.roll.inputs.templateHash, file).not.toBe(roll.inputs.templateHash);
      expect(threads.live.inputs.directives, file).toEqual(directives);
    }
  });

  it("eks platform: Karpenter's Kubernetes children go through the cluster's provider, and Karpenter waits for EksCluster.ready", async () => {
    const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
    runProgram({ stack: "cluster", config, password: pulumi.secret(PASSWORD) });
    await settle();
    const karpenterK8s = recorder.resources.filter(
      (r) => r.type.startsWith("kubernetes:") && r.name.startsWith("karpenter-"),
    );
    expect(karpenterK8s.map((r) => r.name).sort()).toEqual([
      "karpenter-controller",
      "karpenter-crd",
      "karpenter-valkey-node-class",
      "karpenter-valkey-node-pool",
    ]);
    for (const r of karpenterK8s) expect(r.provider, r.name).toMatch(/\$pulumi:providers:kubernetes::eks-k8s::/);
    // What the controller needs (system nodes, Pod Identity agent, ...) is registered before Karpenter and any of its
    // children.
    const index = (name: string) => recorder.resources.findIndex((r) => r.name === name);
    const ready = ["eks-system", "eks-pod-identity-agent", "eks-ebs-csi", "eks-gp3", "eks-cluster-sg-discovery"].map(
      index,
    );
    expect(
      ready.every((i) => i >= 0),
      JSON.stringify(ready),
    ).toBe(true);
    const karpenter = recorder.resources.flatMap((r, i) =>
      r.name === "karpenter" || r.name.startsWith("karpenter-") ? [i] : [],
    );
    expect(karpenter.length).toBeGreaterThanOrEqual(20);
    expect(Math.min(...karpenter)).toBeGreaterThan(Math.max(...ready));
  });

  it("byo replication stack: Kubernetes objects only, no AWS resource at all", async () => {
    const { config } = parseStackConfig({
      platform: "byo",
      byo: { kubeconfig: kubeconfigPath },
      valkey: { resources: { requests: { memory: "1Gi" }, limits: { memory: "2Gi" } } },
    });
    runProgram({ stack: "byo", config, password: PASSWORD });
    await settle();
    expect(awsTypes()).toEqual([]);
    expect(types()).toContain("valkey-on-eks:valkey:Replication");
    expect(types()).toContain("pulumi:providers:kubernetes");
    expect(types()).not.toContain("kubernetes:karpenter.sh/v1:NodePool");
    expect(recorder.resources.some((r) => r.name.startsWith("valkey-cluster-bootstrap"))).toBe(false);
    expectNoPlainPassword();
  });

  it("byo with manageKarpenterNodePool creates the NodePool and EC2NodeClass and still no AWS resource", async () => {
    const { config } = parseStackConfig({
      platform: "byo",
      byo: {
        kubeconfig: kubeconfigPath,
        manageKarpenterNodePool: true,
        karpenterNodeRole: "KarpenterNodeRole-demo",
        karpenterDiscoveryTag: "demo",
      },
      valkey: { mode: "cluster" },
    });
    runProgram({ stack: "byo", config, password: PASSWORD });
    await settle();
    expect(awsTypes()).toEqual([]);
    expect(types()).toEqual(
      expect.arrayContaining(["kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"]),
    );
    for (const type of ["kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"]) {
      expect(recorder.ofType(type)[0]?.provider, type).toMatch(/::pulumi:providers:kubernetes::byo::/);
    }
    // A script change updates the release's ConfigMap in place (provider-args.ts), never replaces it.
    expect(recorder.ofType("pulumi:providers:kubernetes")[0]?.inputs).toMatchObject({ enableConfigMapMutable: "true" });
    const sts = recorder.ofType("kubernetes:apps/v1:StatefulSet")[0];
    expect(JSON.stringify(sts?.inputs)).toContain('"karpenter.sh/nodepool":"valkey"');
  });

  it("re-runs on demand: checks.runId reaches both checks, benchmark.runId the Job's pod template and the results", async () => {
    const { config } = parseStackConfig({
      platform: "byo",
      byo: { kubeconfig: kubeconfigPath },
      valkey: { mode: "cluster" },
      checks: { runId: "verify-7" },
      benchmark: { runId: "bench-3" },
    });
    runProgram({ stack: "byo", config, password: PASSWORD });
    await settle();
    const before = recorder.resources.find((r) => r.name === "valkey-check-run");
    const after = recorder.resources.find((r) => r.name === "valkey-check-after-benchmark-run");
    expect(before?.inputs.runId).toBe("verify-7");
    expect(after?.inputs.runId).toBe("verify-7");
    const job = recorder.ofType("kubernetes:batch/v1:Job")[0];
    expect(job?.inputs).toMatchObject({
      spec: { template: { metadata: { annotations: { "valkey-on-eks/run-id": "bench-3" } } } },
    });
    const results = recorder.resources.find((r) => r.name === "valkey-benchmark-results-run");
    expect(results?.inputs.runId).toBe("bench-3");
    // The runId is no workload setting: the results' workload (and the Job's args) do not carry it.
    expect(JSON.stringify(results?.inputs.workload)).not.toContain("bench-3");
  });

  it("benchmark.mix: the Job runs the bundled mix runner in benchmark.mixImage (ConfigMap), its deadline and the results' wait grown by the duration of every run; replication's policy admits the members too", async () => {
    const { config } = parseStackConfig({
      platform: "byo",
      byo: { kubeconfig: kubeconfigPath },
      benchmark: {
        mix: "get:90,set:10",
        durationSeconds: 7200,
        rate: 5000,
        mixImage: "registry.example/node:24",
        loadgenImage: "registry.example/vload:1",
      },
    });
    const out = runProgram({ stack: "byo", config, password: PASSWORD });
    // The Job's manifest waits for the esbuild bundle (the ConfigMap's name is its hash): outside the mocks' request
    // count.
    await valueOf(out.report);
    await settle();
    const job = recorder.ofType("kubernetes:batch/v1:Job")[0];
    const spec = job?.inputs.spec as {
      activeDeadlineSeconds: number;
      template: { spec: { containers: { image: string; command: string[] }[]; initContainers: { image: string }[] } };
    };
    expect(spec.template.spec.containers[0]).toMatchObject({
      image: "registry.example/node:24",
      command: ["node", "/vbench/mix.mjs"],
    });
    expect(spec.template.spec.initContainers[0]?.image).toBe("registry.example/vload:1");
    // Three runs (benchmark.repeat's default), each the closed loop paced to the rate, then the open loop: 6 × 2 h.
    expect(spec.activeDeadlineSeconds).toBe(3 * 2 * 7200 + 1800);
    expect(recorder.ofType("kubernetes:core/v1:ConfigMap").some((c) => c.name === "valkey-benchmark-mix-runner")).toBe(
      true,
    );
    const results = recorder.resources.find((r) => r.name === "valkey-benchmark-results-run");
    expect(results?.inputs).toMatchObject({
      timeoutSeconds: 3 * 2 * 7200 + 1800,
      workload: {
        mix: [
          { test: "get", percent: 90 },
          { test: "set", percent: 10 },
        ],
        rate: 5000,
      },
    });
    const policy = recorder
      .ofType("kubernetes:networking.k8s.io/v1:NetworkPolicy")
      .find((p) => p.name === "valkey-benchmark-netpol");
    const to =
      (policy?.inputs.spec as { egress: { to?: { podSelector: { matchLabels: Record<string, string> } }[] }[] })
        .egress[1]?.to ?? [];
    expect(to).toHaveLength(2);
    expectNoPlainPassword();
  });

  it("the check after the benchmark follows the results' runStamp (new each run), not their URN (fixed)", async () => {
    const { config } = parseStackConfig({
      platform: "byo",
      byo: { kubeconfig: kubeconfigPath },
      valkey: { mode: "cluster" },
    });
    runProgram({ stack: "byo", config, password: PASSWORD });
    await settle();
    const after = recorder.resources.find((r) => r.name === "valkey-check-after-benchmark-run");
    expect(after?.inputs.triggers).toEqual([BENCH_RUN_STAMP]);
    expect(after?.inputs).not.toHaveProperty("runId");
    const job = recorder.ofType("kubernetes:batch/v1:Job")[0];
    expect(JSON.stringify(job?.inputs)).not.toContain("run-id");
  });

  it("without auth there is no password output and no Secret", async () => {
    const { config } = parseStackConfig({
      platform: "byo",
      byo: { kubeconfig: kubeconfigPath },
      valkey: { auth: { enabled: false } },
      benchmark: { enabled: false },
    });
    const out = runProgram({ stack: "byo", config, password: undefined });
    await settle();
    expect(out.password).toBeUndefined();
    // Only HAProxy's cfg Secret (no password in it without auth), never the password Secret.
    expect(recorder.ofType("kubernetes:core/v1:Secret").map((r) => r.name)).toEqual(["valkey-haproxy-cfg"]);
    expect(recorder.ofType("kubernetes:batch/v1:Job")).toEqual([]);
    const report = await valueOf(out.report);
    expect(report.benchmark).toBeNull();
    expect(report.endpoints.write).toBe("valkey-write.valkey.svc.cluster.local");
  });

  it("refuses to run without the password when auth is on, before creating anything", () => {
    const { config } = parseStackConfig({ platform: "byo", byo: { kubeconfig: kubeconfigPath } });
    expect(() => runProgram({ config, password: undefined })).toThrow(/password: required/);
    expect(recorder.resources).toEqual([]);
  });

  it("names an unreadable byo kubeconfig", () => {
    const { config } = parseStackConfig({ platform: "byo", byo: { kubeconfig: join(dir, "missing") } });
    expect(() => runProgram({ config, password: PASSWORD })).toThrow(/byo\.kubeconfig: cannot read .*missing/);
  });

  it("helpers", () => {
    expect(imageVersion("valkey/valkey:9.0.2")).toBe("9.0.2");
    expect(imageVersion("registry:5000/valkey/valkey:9.0.2-alpine")).toBe("9.0.2-alpine");
    expect(imageVersion("valkey/valkey")).toBe("latest");
    const digest = `sha256:${"ab".repeat(32)}`;
    expect(imageVersion(`public.ecr.aws/valkey/valkey:9.0.2@${digest}`)).toBe("9.0.2");
    expect(imageVersion(`public.ecr.aws/valkey/valkey@${digest}`)).toBe(digest);
    expect(selectorOf({ a: "1", b: "2" })).toBe("a=1,b=2");
  });
});
