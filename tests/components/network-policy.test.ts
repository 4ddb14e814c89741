/**
 * NetworkPolicy on EKS: the Valkey release's policy rule by rule (6379 from labelled
 * clients of the release namespace, members and the direct checks' CIDRs; 16379 between members
 * only; egress to DNS and members only), the benchmark pod's own policy, their wiring through
 * BenchmarkJob and the program, and the VPC CNI network-policy agent that enforces them on EKS.
 * Pure builders, then Pulumi mocks.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SEED_WORKLOAD } from "../../vocabulary/workload.js";
import { buildBenchmarkNetworkPolicy, buildNetworkPolicy } from "../../components/valkey/network-policy.js";
import { CLIENT_LABEL, releaseLabels } from "../../components/shared.js";
import { benchmarkPodLabels } from "../../components/benchmark/job-manifest.js";
import { haproxyLabels } from "../../components/valkey/haproxy-manifests.js";
import { recordDependencies } from "../support/dependency-recorder.js";
import { awsMockInvokes, awsMockOutputs, installMocks, settle } from "../support/pulumi-mocks.js";
import { defaultClusterArgs } from "../support/eks-fixtures.js";

const mocks = installMocks({ outputs: awsMockOutputs, invokes: awsMockInvokes });
const deps = recordDependencies(mocks);
const pulumi = await import("@pulumi/pulumi");
const { BenchmarkJob } = await import("../../components/benchmark-job.js");
const { runProgram } = await import("../../stacks/program.js");
const { parseStackConfig, loadStackFile } = await import("../../config/schema.js");

const MEMBERS = releaseLabels("valkey");
const base = { name: "np", namespace: "valkey", release: "valkey", podSelector: MEMBERS };
const DNS = {
  ports: [
    { protocol: "UDP", port: 53 },
    { protocol: "TCP", port: 53 },
  ],
};
const spec = (o: Parameters<typeof buildNetworkPolicy>[0]) => buildNetworkPolicy(o).spec;

describe("Valkey release NetworkPolicy, rule by rule", () => {
  it("protects the release's pods for both ingress and egress", () => {
    expect(spec(base).podSelector).toEqual({ matchLabels: MEMBERS });
    expect(spec(base).policyTypes).toEqual(["Ingress", "Egress"]);
  });

  it("6379: client-labelled pods of the release namespace only (no namespaceSelector), and the members", () => {
    const rule = spec(base).ingress?.[0];
    expect(rule?.ports).toEqual([{ protocol: "TCP", port: 6379 }]);
    expect(rule?.from).toEqual([
      { podSelector: { matchLabels: { [CLIENT_LABEL]: "true" } } },
      { podSelector: { matchLabels: MEMBERS } },
    ]);
    expect(JSON.stringify(spec(base))).not.toContain("namespaceSelector");
  });

  it("6379 also from the direct checks' CIDRs, and a bad CIDR is named", () => {
    const from = spec({ ...base, checkSourceCidrs: ["10.0.0.0/16", "192.168.1.10/32"] }).ingress?.[0]?.from;
    expect(from?.slice(2)).toEqual([{ ipBlock: { cidr: "10.0.0.0/16" } }, { ipBlock: { cidr: "192.168.1.10/32" } }]);
    expect(() => buildNetworkPolicy({ ...base, checkSourceCidrs: ["10.0.0.300/16"] })).toThrow(/10\.0\.0\.300\/16/);
  });

  it("16379 (cluster bus): members only, and only in cluster mode", () => {
    expect(spec(base).ingress).toHaveLength(1);
    const bus = spec({ ...base, clusterBus: true, checkSourceCidrs: ["10.0.0.0/16"] }).ingress?.[1];
    expect(bus).toEqual({
      from: [{ podSelector: { matchLabels: MEMBERS } }],
      ports: [{ protocol: "TCP", port: 16379 }],
    });
  });

  it("egress: DNS on 53, and the members on 6379 (+16379 in cluster mode), nothing else", () => {
    expect(spec(base).egress).toEqual([
      DNS,
      { to: [{ podSelector: { matchLabels: MEMBERS } }], ports: [{ protocol: "TCP", port: 6379 }] },
    ]);
    expect(spec({ ...base, clusterBus: true }).egress?.[1]?.ports).toEqual([
      { protocol: "TCP", port: 6379 },
      { protocol: "TCP", port: 16379 },
    ]);
  });
});

describe("benchmark pod NetworkPolicy", () => {
  const podLabels = benchmarkPodLabels({ mode: "cluster" });
  const policy = buildBenchmarkNetworkPolicy({
    name: "vbench-netpol",
    namespace: "valkey",
    podLabels,
    valkeyPodSelectors: [MEMBERS],
  });

  it("selects the benchmark pod and never a Valkey member", () => {
    const selector = policy.spec.podSelector.matchLabels ?? {};
    expect(Object.entries(selector).every(([k, v]) => podLabels[k] === v)).toBe(true);
    expect(Object.entries(selector).every(([k, v]) => MEMBERS[k] === v)).toBe(false);
  });

  it("admits no ingress and reaches only DNS and the Valkey pods' 6379", () => {
    expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(policy.spec.ingress).toEqual([]);
    expect(policy.spec.egress).toEqual([
      DNS,
      { to: [{ podSelector: { matchLabels: MEMBERS } }], ports: [{ protocol: "TCP", port: 6379 }] },
    ]);
  });

  it("BenchmarkJob creates it before the Job when given the Valkey pods' labels, and not otherwise", async () => {
    const placement = { zones: ["us-west-2a"], nodeSelector: {}, tolerations: [], storageClass: undefined };
    const args = {
      namespace: "valkey",
      image: "valkey/valkey:9.0.2",
      mode: "cluster" as const,
      target: { host: "h" },
      workload: SEED_WORKLOAD,
      secretName: undefined,
      placement,
      resources: { cpu: "1", memory: "1Gi" },
    };
    mocks.reset();
    new BenchmarkJob("b", { ...args, valkeyPodSelectors: [MEMBERS] });
    await settle();
    const np = mocks.get("kubernetes:networking.k8s.io/v1:NetworkPolicy", "b-netpol");
    expect(np.inputs).toMatchObject({
      metadata: { name: "vbench-cluster-netpol", namespace: "valkey" },
      spec: { ingress: [] },
    });
    expect(deps.dependsOn("b-job", "b-netpol")).toBe(true);
    mocks.reset();
    new BenchmarkJob("b2", args);
    await settle();
    expect(mocks.ofType("kubernetes:networking.k8s.io/v1:NetworkPolicy")).toEqual([]);
  });
});

describe("the program wires the policies", () => {
  const dir = mkdtempSync(join(tmpdir(), "vbench-netpol-"));
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");

  it("the benchmark policy targets the write endpoint's HAProxy pods (replication); direct checks' CIDRs reach the Valkey policy, port-forward adds none", async () => {
    const raw = {
      platform: "byo",
      byo: { kubeconfig },
      valkey: { auth: { enabled: false }, resources: { requests: { memory: "1Gi" }, limits: { memory: "2Gi" } } },
    };
    mocks.reset();
    runProgram({
      stack: "byo",
      config: parseStackConfig({ ...raw, checks: { connector: "direct", directSourceCidrs: ["10.1.0.0/16"] } }).config,
      password: undefined,
    });
    await settle();
    const valkeyPolicy = mocks.get("kubernetes:networking.k8s.io/v1:NetworkPolicy", "valkey-netpol").inputs as {
      spec: { ingress: Array<{ from: unknown[] }> };
    };
    expect(valkeyPolicy.spec.ingress[0]?.from).toContainEqual({ ipBlock: { cidr: "10.1.0.0/16" } });
    const bench = mocks.get("kubernetes:networking.k8s.io/v1:NetworkPolicy", "valkey-benchmark-netpol").inputs as {
      spec: { egress: Array<{ to?: unknown[] }> };
    };
    expect(bench.spec.egress[1]?.to).toEqual([{ podSelector: { matchLabels: haproxyLabels("valkey") } }]);

    mocks.reset();
    runProgram({
      stack: "byo",
      config: parseStackConfig({ ...raw, checks: { directSourceCidrs: ["10.1.0.0/16"] } }).config,
      password: undefined,
    });
    await settle();
    expect(
      JSON.stringify(mocks.get("kubernetes:networking.k8s.io/v1:NetworkPolicy", "valkey-netpol").inputs),
    ).not.toContain("ipBlock");
  });

  it("checks.directSourceCidrs names a bad CIDR", () => {
    expect(() =>
      parseStackConfig({ "aws:region": "us-west-2", "checks": { directSourceCidrs: ["10.0.0.0"] } }),
    ).toThrow(/checks\.directSourceCidrs/);
  });
});

describe("enforcement on EKS", () => {
  it("installs the vpc-cni add-on through pulumi-eks with the network policy agent on", async () => {
    const args = defaultClusterArgs();
    expect(args.useDefaultVpcCni).toBe(false);
    expect(args.vpcCniOptions).toEqual({ enableNetworkPolicy: true });
    mocks.reset();
    runProgram({
      stack: "cluster",
      config: loadStackFile("stacks/Pulumi.cluster.yaml").config,
      password: pulumi.secret("pw"),
    });
    await settle();
    expect(mocks.get("eks:index:Cluster", "eks-cluster").inputs).toMatchObject({
      useDefaultVpcCni: false,
      vpcCniOptions: { enableNetworkPolicy: true },
    });
  });
});
