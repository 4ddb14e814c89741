/**
 * BenchmarkJob under Pulumi mocks (installed before the component is imported): the Job's
 * manifest as the engine receives it, and the pure builder directly.
 */
import { describe, expect, it } from "vitest";
import { installMocks, settle, valueOf } from "../support/pulumi-mocks.js";
import * as pulumi from "@pulumi/pulumi";
import { SEED_WORKLOAD } from "../../vocabulary/workload.js";
import { CLIENT_LABEL, DATA_PLANE_LABEL, type Placement } from "../../components/shared.js";
import { PASSWORD_SECRET_KEY } from "../../pod/paths.js";

const mocks = installMocks();
const { BenchmarkJob } = await import("../../components/benchmark-job.js");
const { buildBenchmarkJob } = await import("../../components/benchmark/job-manifest.js");

const PASSWORD = "Zq-distinctive-PASSWORD-8841";
const placement: Placement = {
  zones: ["us-west-2a", "us-west-2b", "us-west-2c"],
  nodeSelector: { "karpenter.sh/nodepool": "valkey" },
  tolerations: [{ key: "workload", operator: "Equal", value: "valkey", effect: "NoSchedule" }],
  storageClass: "gp3",
};
const workload = { ...SEED_WORKLOAD, tests: [...SEED_WORKLOAD.tests], name: "cluster" };

type Obj = Record<string, unknown>;
const at = (o: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((v, k) => (v === null || v === undefined ? undefined : (v as Obj)[k as string]), o);

/** Resets the mocks, deploys one BenchmarkJob and returns it with its recorded Job once registered. */
async function deployed(mode: "cluster" | "replication") {
  mocks.reset();
  // The Secret's value exists in the program (as the Valkey component's would); the Job must not carry it.
  const secretName = pulumi.secret(PASSWORD).apply(() => "valkey-auth");
  const component = new BenchmarkJob(`bench-${mode}`, {
    namespace: pulumi.output("valkey"),
    image: "docker.io/valkey/valkey:9.0.2",
    mode,
    target: { host: pulumi.output(mode === "cluster" ? "valkey-cluster.valkey.svc" : "valkey-primary.valkey.svc") },
    workload,
    secretName,
    placement,
    resources: { cpu: "1", memory: "1Gi" },
  });
  await valueOf(component.jobName);
  await settle();
  return { component, job: mocks.get("kubernetes:batch/v1:Job", `bench-${mode}-job`) };
}

describe("BenchmarkJob (mocked engine)", () => {
  it("registers one batch/v1 Job under the component with every benchmark flag, the password only by reference", async () => {
    const { component, job } = await deployed("cluster");
    expect(mocks.get("valkey-on-eks:benchmark:BenchmarkJob", "bench-cluster")).toBeDefined();
    // Named after its spec: a replaced Job (new workload or runId) never collides with the old one.
    expect(await valueOf(component.jobName)).toMatch(/^vbench-cluster-[0-9a-f]{8}$/);
    const spec = at(job.inputs, "spec") as Obj;
    expect(spec.backoffLimit).toBe(0);
    expect(at(job.inputs, "metadata", "annotations")).toEqual({ "pulumi.com/skipAwait": "true" });
    const pod = at(spec, "template", "spec") as Obj;
    expect(pod.restartPolicy).toBe("Never");
    const c = at(pod, "containers", 0) as Obj;
    expect(c.image).toBe("docker.io/valkey/valkey:9.0.2");
    const [sh, flag, script] = c.command as string[];
    expect([sh, flag]).toEqual(["/bin/sh", "-c"]);
    for (const t of ["set", "get", "incr"]) {
      // One line of test_args per test: the core's argv without `-n` (the script adds `-n "$req"` per run).
      expect(script).toMatch(
        new RegExp(
          `^(test_args=')?${t} -h valkey-cluster\\.valkey\\.svc -p 6379 --cluster -c 50 -P 16 -d 256 --threads 4 -r 1000000 -t ${t} --csv'?$`,
          "m",
        ),
      );
    }
    expect(script).toContain(`bench "$run_timeout_s" $args -n "$req"`);
    expect(script).toMatch(/^run_timeout_s=3600$/m);
    expect(script).toMatch(/^requests=500000$/m);
    expect(script).toMatch(/^max_requests=50000000$/m);
    expect(script).toMatch(/^min_duration='5'$/m);
    expect(c.env).toEqual([
      { name: "TMPDIR", value: "/tmp" },
      { name: "VALKEY_PASSWORD", valueFrom: { secretKeyRef: { name: "valkey-auth", key: PASSWORD_SECRET_KEY } } },
    ]);
    expect(c.resources).toEqual({ requests: { cpu: "1", memory: "1Gi" }, limits: { cpu: "1", memory: "1Gi" } });
    expect(at(c, "securityContext", "allowPrivilegeEscalation")).toBe(false);
    expect(at(pod, "securityContext", "runAsNonRoot")).toBe(true);
    expect(pod.nodeSelector).toEqual({ "karpenter.sh/nodepool": "valkey" });
    expect(pod.tolerations).toEqual([{ key: "workload", operator: "Equal", value: "valkey", effect: "NoSchedule" }]);
    expect(at(pod, "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution")).toEqual([
      { labelSelector: { matchLabels: { [DATA_PLANE_LABEL]: "true" } }, topologyKey: "kubernetes.io/hostname" },
    ]);
    expect(at(pod, "affinity", "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution")).toBeUndefined();
    expect(at(spec, "template", "metadata", "labels", CLIENT_LABEL)).toBe("true");
    for (const r of mocks.resources) expect(JSON.stringify(r.redacted)).not.toContain(PASSWORD);
    expect(JSON.stringify(job.inputs)).not.toContain(PASSWORD);
  });

  it("replication mode targets the primary Service without --cluster", async () => {
    const { job } = await deployed("replication");
    const script = (at(job.inputs, "spec", "template", "spec", "containers", 0, "command") as string[])[2] ?? "";
    expect(script).toMatch(/^(test_args=')?set -h valkey-primary\.valkey\.svc -p 6379 -c 50 /m);
    expect(script).not.toContain("--cluster");
  });
});

describe("BenchmarkJob running a mix (mocked engine)", () => {
  const mixWorkload = {
    ...workload,
    mix: [
      { test: "get" as const, percent: 80 },
      { test: "set" as const, percent: 20 },
    ],
    durationSeconds: 60,
  };
  const MEMBERS = { "app.kubernetes.io/name": "valkey", "app.kubernetes.io/instance": "valkey" };
  const PROXIES = { "app.kubernetes.io/name": "valkey-haproxy" };

  it("a ConfigMap named after the bundle's hash holds mix.mjs; the Job runs it in the Node image as uid 1000 after its NetworkPolicy, which admits the proxies and the members", async () => {
    mocks.reset();
    const component = new BenchmarkJob("bench-mix", {
      namespace: pulumi.output("valkey"),
      image: "docker.io/valkey/valkey:9.1.2",
      mode: "replication",
      target: { host: pulumi.output("valkey-write.valkey.svc") },
      workload: mixWorkload,
      secretName: pulumi.secret(PASSWORD).apply(() => "valkey-auth"),
      placement,
      resources: { cpu: "1", memory: "1Gi" },
      mixImage: "node:24-test",
      loadgenImage: "registry.example/vload:test",
      valkeyPodSelectors: [PROXIES, MEMBERS],
    });
    await valueOf(component.jobName);
    await settle();
    const cm = mocks.get("kubernetes:core/v1:ConfigMap", "bench-mix-mix-runner");
    const name = at(cm.inputs, "metadata", "name") as string;
    expect(name).toMatch(/^vbench-replication-mix-[0-9a-f]{8}$/);
    expect(String(at(cm.inputs, "data", "mix.mjs"))).toContain("VBENCH_MIX");
    const job = mocks.get("kubernetes:batch/v1:Job", "bench-mix-job");
    const pod = at(job.inputs, "spec", "template", "spec") as Obj;
    const c = at(pod, "containers", 0) as Obj;
    expect([c.image, c.command]).toEqual(["node:24-test", ["node", "/vbench/mix.mjs"]]);
    expect(at(pod, "securityContext", "runAsUser")).toBe(1000);
    expect(pod.volumes).toContainEqual({ name: "mix-runner", configMap: { name } });
    expect(at(pod, "initContainers", 0, "image")).toBe("registry.example/vload:test");
    const settings = JSON.parse(String((c.env as Obj[]).find((e) => e.name === "VBENCH_MIX")?.value)) as Obj;
    expect(settings).toMatchObject({
      mode: "replication",
      target: { host: "valkey-write.valkey.svc", port: 6379 },
      workload: { mix: mixWorkload.mix, durationSeconds: 60 },
    });
    const policy = mocks.get("kubernetes:networking.k8s.io/v1:NetworkPolicy", "bench-mix-netpol");
    expect(at(policy.inputs, "spec", "egress", 1, "to")).toEqual([
      { podSelector: { matchLabels: PROXIES } },
      { podSelector: { matchLabels: MEMBERS } },
    ]);
    for (const r of mocks.resources) expect(JSON.stringify(r.redacted)).not.toContain(PASSWORD);
  });

  it("a mix without mixImage or loadgenImage is refused, naming them", () => {
    mocks.reset();
    expect(
      () =>
        new BenchmarkJob("bench-nomix", {
          namespace: "valkey",
          image: "valkey:9.1.2",
          mode: "cluster",
          target: { host: "valkey-client" },
          workload: mixWorkload,
          secretName: undefined,
          placement,
          resources: { cpu: "1", memory: "1Gi" },
        }),
    ).toThrow(/mixImage and loadgenImage are required/);
  });
});

describe("buildBenchmarkJob (pure)", () => {
  const base = {
    namespace: "valkey",
    name: "vbench",
    image: "valkey/valkey:9.0.2",
    mode: "replication" as const,
    target: { host: "p", port: 6379 },
    workload,
    secretName: undefined,
    passwordKey: PASSWORD_SECRET_KEY,
    placement,
    resources: { cpu: "500m", memory: "512Mi" },
  };
  it("auth off: no password env at all; ttl only when asked", () => {
    const j = buildBenchmarkJob(base);
    expect(j.spec.template.spec?.containers[0]?.env).toEqual([{ name: "TMPDIR", value: "/tmp" }]);
    expect(j.spec.ttlSecondsAfterFinished).toBeUndefined();
    expect(buildBenchmarkJob({ ...base, ttlSecondsAfterFinished: 600 }).spec.ttlSecondsAfterFinished).toBe(600);
  });
  it("rejects what the core rejects", () => {
    expect(() => buildBenchmarkJob({ ...base, target: { host: "-x", port: 6379 } })).toThrow(/invalid benchmark host/);
    expect(() => buildBenchmarkJob({ ...base, workload: { ...workload, clients: 0 } })).toThrow(/clients must be/);
    expect(() => buildBenchmarkJob({ ...base, workload: { ...workload, tests: [] } })).toThrow(/no tests/);
  });
});
