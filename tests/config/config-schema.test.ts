import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_REPEAT, SEED_WORKLOAD } from "../../vocabulary/workload.js";
import {
  ConfigError,
  StackFileError,
  loadStackFile,
  parseStackConfig,
  workloadFromConfig,
} from "../../config/schema.js";
import { describeKeys } from "../../config/meta.js";
import { stackInputSchema } from "../../config/sections.js";
import { renderConfigTable, replaceConfigTable, TABLE_DOC, TABLE_END, TABLE_START } from "../../config/render-table.js";
import { versions } from "../../versions.js";

/** Parses a config expected to be invalid and returns its ConfigError. */
function errorOf(raw: unknown, options: { requirePassword?: boolean } = {}): ConfigError {
  try {
    parseStackConfig(raw, options);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(raw)}`);
}

const issuePaths = (err: ConfigError) => err.issues.map((i) => i.path);

// [description, raw config, exact key path expected, message fragment]
const BAD_CONFIGS: Array<[string, Record<string, unknown>, string, string]> = [
  ["unknown platform", { platform: "gke" }, "platform", '"eks", "byo"'],
  ["unknown top-level key", { valky: {} }, "valky", "did you mean valkey-on-eks:valkey"],
  [
    "the project prefix twice (one left after the stack file's is stripped)",
    { "valkey-on-eks:platform": "local" },
    "valkey-on-eks:platform",
    "unknown key valkey-on-eks:valkey-on-eks:platform: the valkey-on-eks: prefix is written twice (did you mean valkey-on-eks:platform?)",
  ],
  [
    "the project prefix twice on a misspelt key",
    { "valkey-on-eks:platfrm": "local" },
    "valkey-on-eks:platfrm",
    "prefix is written twice (unknown key valkey-on-eks:platfrm (did you mean valkey-on-eks:platform?))",
  ],
  ["typo in a section", { valkey: { clutser: {} } }, "valkey.clutser", "did you mean cluster"],
  ["typo in a nested key", { valkey: { cluster: { primares: 3 } } }, "valkey.cluster.primares", "unknown key"],
  ["section is not a map", { valkey: "cluster" }, "valkey", "must be a map"],
  ["duplicate zone", { aws: { zones: ["us-west-2a", "us-west-2a"] } }, "aws.zones.1", "listed twice"],
  [
    "zone outside the region",
    { aws: { region: "us-east-1", zones: ["us-west-2a", "us-east-1b"] } },
    "aws.zones.0",
    "not a zone of region us-east-1",
  ],
  ["no zones", { aws: { zones: [] } }, "aws.zones", "at least 1 item"],
  ["malformed region", { aws: { region: "Oregon" } }, "aws.region", "AWS region"],
  [
    "aws.region disagrees with aws:region",
    { "aws:region": "us-east-1", "aws": { region: "us-west-2" } },
    "aws.region",
    "differs from aws:region",
  ],
  ["benchmark.repeat 0", { benchmark: { repeat: 0 } }, "benchmark.repeat", "must be ≥ 1 (got 0)"],
  [
    "a repeated soak",
    { benchmark: { mix: "get:100", soak: { sampleSeconds: 5 }, repeat: 2 } },
    "benchmark.repeat",
    "a soak runs once",
  ],
  [
    "cluster with 2 primaries",
    { valkey: { mode: "cluster", cluster: { primaries: 2 } } },
    "valkey.cluster.primaries",
    "must be ≥ 3",
  ],
  [
    "cluster without replicas",
    { valkey: { mode: "cluster", cluster: { replicasPerPrimary: 0 } } },
    "valkey.cluster.replicasPerPrimary",
    "must be ≥ 1",
  ],
  ["cluster in one zone", { valkey: { mode: "cluster" }, aws: { zones: ["us-west-2a"] } }, "aws.zones", "≥ 2 zones"],
  [
    "replication without replicas while verifying",
    { valkey: { replication: { replicas: 0 } } },
    "valkey.replication.replicas",
    "different AZ",
  ],
  [
    "minReplicasToWrite above replicas",
    { valkey: { replication: { replicas: 1, minReplicasToWrite: 2 } } },
    "valkey.replication.minReplicasToWrite",
    "≤ valkey.replication.replicas (1)",
  ],
  [
    "ioThreads above the vCPU limit",
    { valkey: { ioThreads: 4 } },
    "valkey.ioThreads",
    "exceeds the pod's 1.5 vCPU limit",
  ],
  ["ioThreads zero", { valkey: { ioThreads: 0 } }, "valkey.ioThreads", "must be ≥ 1"],
  [
    "cpu request above limit",
    { valkey: { resources: { requests: { cpu: "3" }, limits: { cpu: "2" } } } },
    "valkey.resources.requests.cpu",
    "exceeds limits.cpu 2",
  ],
  [
    "memory request above limit",
    { valkey: { resources: { requests: { memory: "20Gi" }, limits: { memory: "16Gi" } } } },
    "valkey.resources.requests.memory",
    "exceeds limits.memory 16Gi",
  ],
  [
    "GB instead of Gi",
    { valkey: { resources: { requests: { memory: "12GB" } } } },
    "valkey.resources.requests.memory",
    "did you mean 12Gi",
  ],
  [
    "cpu limit not a quantity",
    { valkey: { resources: { limits: { cpu: "two" } } } },
    "valkey.resources.limits.cpu",
    "not a Kubernetes quantity",
  ],
  ["maxmemory at the memory limit", { valkey: { maxmemory: "16Gi" } }, "valkey.maxmemory", "below limits.memory"],
  ["maxmemory above 100%", { valkey: { maxmemory: "150%" } }, "valkey.maxmemory", "at most 100%"],
  [
    "the benchmark's keys past maxmemory (noeviction)",
    { valkey: { maxmemory: "256Mi" } },
    "benchmark.keyspaceLength",
    "1000000 key names of 256 B would put about 457.76Mi on each member (1000000 key entries 381.47Mi, 1000000 counter entries 76.29Mi), over valkey.maxmemory 256Mi (256Mi) less the 11Mi an empty member holds: with maxmemoryPolicy noeviction the writes are refused (OOM) and the benchmark Job fails. Use keyspaceLength ≤ 535210,",
  ],
  [
    "the benchmark's keys past maxmemory, cluster (volatile-lru: the keys have no TTL)",
    { valkey: { mode: "cluster", maxmemory: "64Mi", maxmemoryPolicy: "volatile-lru" }, benchmark: { tests: ["hset"] } },
    "benchmark.keyspaceLength",
    "on each shard (1000000 myhash entries",
  ],
  [
    "request fits no permitted instance",
    { karpenter: { nodePool: { instanceSizes: ["large"] } }, valkey: { resources: { requests: { memory: "15Gi" } } } },
    "valkey.resources.requests.memory",
    "fits no permitted instance type",
  ],
  [
    "spot capacity",
    { karpenter: { nodePool: { capacityType: "spot" } } },
    "karpenter.nodePool.capacityType",
    "on-demand",
  ],
  [
    "x86 architecture",
    { karpenter: { nodePool: { architecture: "amd64" } } },
    "karpenter.nodePool.architecture",
    "arm64",
  ],
  [
    "non-Graviton family",
    { karpenter: { nodePool: { instanceFamilies: ["r7i"] } } },
    "karpenter.nodePool.instanceFamilies.0",
    "Graviton",
  ],
  [
    "NodePool memory limit below the pods",
    { karpenter: { nodePool: { limits: { memory: "32Gi" } } } },
    "karpenter.nodePool.limits.memory",
    "below the 49Gi",
  ],
  [
    "NodePool cpu limit below the pods",
    { karpenter: { nodePool: { limits: { cpu: "4" } } } },
    "karpenter.nodePool.limits.cpu",
    "below the 7 vCPU",
  ],
  [
    "PodMonitors without exporters",
    { metrics: { enabled: false, prometheusOperator: true } },
    "metrics.prometheusOperator",
    "true needs metrics.enabled: true",
  ],
  [
    "monitor labels without the Operator",
    { metrics: { monitorLabels: { release: "kps" } } },
    "metrics.monitorLabels",
    "metrics.prometheusOperator is false",
  ],
  [
    "AMP on byo",
    { platform: "byo", metrics: { amp: { enabled: true } } },
    "metrics.amp.enabled",
    "is for platform eks",
  ],
  [
    "AMP without exporters",
    { metrics: { enabled: false, amp: { enabled: true } } },
    "metrics.amp.enabled",
    "true needs metrics.enabled: true",
  ],
  [
    "AMP workspace in another region",
    {
      "aws:region": "us-west-2",
      "metrics": { amp: { enabled: true, workspaceArn: "arn:aws:aps:eu-west-1:123456789012:workspace/ws-abc" } },
    },
    "metrics.amp.workspaceArn",
    "is in eu-west-1, not the stack's region us-west-2",
  ],
  [
    "AMP workspace without AMP",
    { metrics: { amp: { workspaceArn: "arn:aws:aps:us-west-2:123456789012:workspace/ws-abc" } } },
    "metrics.amp.workspaceArn",
    "metrics.amp.enabled is false",
  ],
  [
    "not a workspace ARN",
    { metrics: { amp: { enabled: true, workspaceArn: "ws-abc" } } },
    "metrics.amp.workspaceArn",
    "AMP workspace ARN",
  ],
  ["bad scrape CIDR", { metrics: { scrapeFrom: { cidrs: ["10.0.0.0"] } } }, "metrics.scrapeFrom.cidrs.0", "IPv4 CIDR"],
  ["bad monitor label key", { metrics: { monitorLabels: { "a b": "x" } } }, "metrics.monitorLabels.a b", "label key"],
  [
    "bad dashboard namespace",
    { metrics: { dashboard: { namespace: "Grafana" } } },
    "metrics.dashboard.namespace",
    "namespace name",
  ],
  [
    "bad dashboard label value",
    { metrics: { dashboard: { labels: { grafana_dashboard: "a b" } } } },
    "metrics.dashboard.labels.grafana_dashboard",
    "label value",
  ],
  [
    "dashboard namespace without exporters",
    { metrics: { enabled: false, dashboard: { namespace: "grafana" } } },
    "metrics.dashboard.namespace",
    "metrics.enabled is false",
  ],
  ["unknown benchmark test", { benchmark: { tests: ["set", "getx"] } }, "benchmark.tests.1", '"getx"'],
  ["zero requests", { benchmark: { requests: 0 } }, "benchmark.requests", "must be ≥ 1"],
  [
    "maxRequests below requests",
    { benchmark: { requests: 1000, maxRequests: 999 } },
    "benchmark.maxRequests",
    "below benchmark.requests (1000)",
  ],
  ["fractional clients", { benchmark: { clients: 1.5 } }, "benchmark.clients", "must be an integer (got 1.5)"],
  ["plain-text password", { password: "hunter2" }, "password", "valkey-on-eks:password is stored in plain text"],
  [
    "bad appendfsync",
    { valkey: { persistence: { appendfsync: "sometimes" } } },
    "valkey.persistence.appendfsync",
    '"everysec"',
  ],
  [
    "x86 system nodes",
    { eks: { systemNodes: { instanceType: "m7i.large" } } },
    "eks.systemNodes.instanceType",
    "not a Graviton",
  ],
  ["bad namespace", { valkey: { namespace: "Valkey_NS" } }, "valkey.namespace", "namespace name"],
  [
    "benchmark pod fits no instance",
    { karpenter: { nodePool: { instanceSizes: ["large"] } }, benchmark: { resources: { memory: "20Gi" } } },
    "benchmark.resources.memory",
    "benchmark pod request",
  ],
  [
    "bad toleration operator",
    { platform: "byo", byo: { tolerations: [{ operator: "Maybe" }] } },
    "byo.tolerations.0.operator",
    '"Equal", "Exists"',
  ],
  [
    "image without a tag",
    { valkey: { image: "valkey" } },
    "valkey.image",
    "name:tag, name@sha256:<64 hex digits> or name:tag@sha256:",
  ],
  [
    "cluster mode on Valkey 9.0",
    { valkey: { mode: "cluster", image: "public.ecr.aws/valkey/valkey:9.0.2" } },
    "valkey.image",
    "availability-zone only from Valkey 9.1",
  ],
  [
    "image digest too short",
    { valkey: { image: "public.ecr.aws/valkey/valkey:9.0.2@sha256:abc" } },
    "valkey.image",
    "name:tag@sha256:<64 hex digits>",
  ],
  [
    "image with an empty tag",
    { valkey: { replication: { haproxyImage: "haproxy:@sha256:" + "a".repeat(64) } } },
    "valkey.replication.haproxyImage",
    "image reference",
  ],
  ["drill image with spaces", { drills: { image: "node 24" } }, "drills.image", "image reference"],
  ["unknown NAT layout", { network: { natGateways: "onePerAz" } }, "network.natGateways", '"single", "perZone"'],
  ["string where a number belongs", { valkey: { ioThreads: "4" } }, "valkey.ioThreads", 'must be a number (got "4")'],
  ["unknown maxmemory policy", { valkey: { maxmemoryPolicy: "lru" } }, "valkey.maxmemoryPolicy", '"allkeys-lru"'],
  [
    "latency target without a unit",
    { benchmark: { mix: "get:100", slo: "p99:2" } },
    "benchmark.slo",
    "has no unit: give us, ms or s",
  ],
  [
    "latency target on a percentile not measured",
    { benchmark: { mix: "get:100", slo: "p95:2ms" } },
    "benchmark.slo",
    "'p95' is not a percentile it measures",
  ],
  [
    "latency target of garbage",
    { benchmark: { mix: "get:100", slo: "fast" } },
    "benchmark.slo",
    "is not <percentile>:<bound><unit>",
  ],
  ["latency target without a mix", { benchmark: { slo: "p99:2ms" } }, "benchmark.slo", "set benchmark.mix too"],
  [
    "sweep steps without a latency target",
    { benchmark: { mix: "get:100", sloSteps: 10 } },
    "benchmark.sloSteps",
    "set benchmark.slo too",
  ],
  [
    "sweep steps over the bound",
    { benchmark: { mix: "get:100", slo: "p99:2ms", sloSteps: 51 } },
    "benchmark.sloSteps",
    "50",
  ],
  [
    "sweep step length zero",
    { benchmark: { mix: "get:100", slo: "p99:2ms", sloStepSeconds: 0 } },
    "benchmark.sloStepSeconds",
    "must be ≥ 1",
  ],
];

describe("parseStackConfig: bad configs name the key path", () => {
  it("has at least 30 distinct cases", () => {
    expect(new Set(BAD_CONFIGS.map(([name]) => name)).size).toBe(BAD_CONFIGS.length);
    expect(BAD_CONFIGS.length).toBeGreaterThanOrEqual(30);
  });

  it.each(BAD_CONFIGS)("%s", (_name, raw, path, fragment) => {
    const err = errorOf(raw);
    expect(issuePaths(err)).toContain(path);
    const line = err.message.split("\n").find((l) => l.trim().startsWith(`${path}: `));
    expect(line).toBeDefined();
    expect(line).toContain(fragment);
  });

  it("never echoes a plain-text password", () => {
    expect(errorOf({ password: "hunter2-secret-value" }).message).not.toContain("hunter2-secret-value");
  });

  it("requires the password when asked to (pulumi up)", () => {
    expect(issuePaths(errorOf({}, { requirePassword: true }))).toEqual(["password"]);
    expect(() => parseStackConfig({ valkey: { auth: { enabled: false } } }, { requirePassword: true })).not.toThrow();
    expect(() => parseStackConfig({ password: { secure: "AAABAJ1x" } }, { requirePassword: true })).not.toThrow();
  });

  it("reports every cross-field problem in one error", () => {
    const err = errorOf({
      valkey: {
        mode: "cluster",
        cluster: { primaries: 2, replicasPerPrimary: 0 },
        ioThreads: 5,
        resources: { requests: { cpu: "3" }, limits: { cpu: "2" } },
      },
      aws: { zones: ["us-west-2a"] },
      benchmark: { maxRequests: 10 },
      password: "plain",
    });
    expect(issuePaths(err).sort()).toEqual(
      [
        "aws.zones",
        "benchmark.maxRequests",
        "password",
        "valkey.cluster.primaries",
        "valkey.cluster.replicasPerPrimary",
        "valkey.ioThreads",
        "valkey.resources.requests.cpu",
      ].sort(),
    );
    expect(err.message.split("\n")).toHaveLength(8);
    expect(err.message).toMatch(/^invalid stack config \(7 problems\):/);
  });

  it("reports every shape problem in one error", () => {
    const err = errorOf({
      platform: "gke",
      valkey: { clutser: {}, replication: { replicas: -1 } },
      benchmark: { tests: ["nope"] },
      bogus: true,
    });
    expect(issuePaths(err).sort()).toEqual([
      "benchmark.tests.0",
      "bogus",
      "platform",
      "valkey.clutser",
      "valkey.replication.replicas",
    ]);
  });
  it("reports shape and cross-field problems together, without inventing problems for the malformed keys", () => {
    const err = errorOf({
      valkey: { mode: "cluster", cluster: { primaries: 2 }, ioThreads: 9, resources: { limits: { cpu: "lots" } } },
      aws: { zones: ["us-west-2a"] },
      benchmark: { tests: ["set", "sett"] },
    });
    // Shape: the bad test name and the bad CPU limit; cross-field: primaries, zones, and ioThreads
    // against the default 2-vCPU limit that stands in for the malformed one.
    expect(issuePaths(err).sort()).toEqual(
      [
        "aws.zones",
        "benchmark.tests.1",
        "valkey.cluster.primaries",
        "valkey.ioThreads",
        "valkey.resources.limits.cpu",
      ].sort(),
    );
    expect(err.message).toMatch(/^invalid stack config \(5 problems\):/);
  });
});

describe("parseStackConfig: defaults", () => {
  const { config, password, warnings } = parseStackConfig({});

  it("resolves the seed's hardware and topology", () => {
    expect(config.platform).toBe("eks");
    expect(config.aws).toEqual({ region: "us-west-2", zones: ["us-west-2a", "us-west-2b", "us-west-2c"] });
    expect(config.karpenter.nodePool.permittedInstanceTypes).toEqual(["r7g.large", "r7g.xlarge", "r7g.2xlarge"]);
    expect(config.karpenter.nodePool.capacityType).toBe("on-demand");
    expect(config.karpenter.nodePool.limits.amounts).toEqual({ cpuMillicores: 64_000, memoryBytes: 512 * 2 ** 30 });
    // Images from ECR Public (no anonymous per-IP pull limit like Docker Hub's); tags only by default.
    expect(config.valkey.image).toBe(versions.VALKEY_IMAGE);
    expect(config.valkey.mode).toBe("replication");
    expect(config.valkey.replication).toEqual({
      replicas: 3,
      minReplicasToWrite: 1,
      minReplicasMaxLag: 3,
      sentinel: { replicas: 3, quorum: 2, downAfterMilliseconds: 5000, failoverTimeoutMs: 60000, parallelSyncs: 3 },
      haproxyImage: versions.HAPROXY_IMAGE,
    });
    expect(config.network).toEqual({ natGateways: "single" });
    expect(config.valkey.cluster).toEqual({ primaries: 3, replicasPerPrimary: 1, nodeTimeoutMs: 15000 });
    // Guaranteed QoS by default: limits = requests, fitting r7g.large.
    expect(config.valkey.resources).toEqual({
      requests: { cpu: "1500m", memory: "12Gi" },
      limits: { cpu: "1500m", memory: "12Gi" },
    });
    expect(config.valkey.resourceAmounts.limits).toEqual({ cpuMillicores: 1500, memoryBytes: 12 * 2 ** 30 });
    expect(config.valkey.persistence).toEqual({
      aof: true,
      rdb: true,
      appendfsync: "everysec",
      storageClass: "gp3",
      size: "50Gi",
      sizeBytes: 50 * 2 ** 30,
    });
    expect(config.valkey.maxmemoryBytes).toBe(9 * 2 ** 30);
    expect(config.valkey.pods).toBe(4);
    expect(config.valkey.auth.enabled).toBe(true);
    expect(config.checks).toEqual({
      bootstrap: true,
      verify: true,
      connector: "port-forward",
      directSourceCidrs: [],
      replicaLagBytes: 1_048_576,
    });
  });

  it("a latency target reaches the workload parsed: benchmark.slo p99.9:500us with its sweep settings", () => {
    const { config: c } = parseStackConfig({
      benchmark: {
        mix: "get:80,set:20",
        loadgenImage: "registry.example/vload:1",
        slo: "p99.9:500us",
        sloSteps: 8,
        sloStepSeconds: 3,
      },
    });
    expect(workloadFromConfig(c)).toMatchObject({
      slo: { percentile: "p999", boundMs: 0.5 },
      sloSteps: 8,
      sloStepSeconds: 3,
    });
    expect(
      workloadFromConfig(
        parseStackConfig({ benchmark: { mix: "get:100", loadgenImage: "registry.example/vload:1", slo: "p99:2ms" } })
          .config,
      ),
    ).not.toHaveProperty("sloSteps");
  });

  it("runs exactly the seed workload", () => {
    // The seed's workload, repeated DEFAULT_REPEAT times (benchmark.repeat).
    expect(workloadFromConfig(config)).toEqual({ ...SEED_WORKLOAD, name: "replication", repeat: DEFAULT_REPEAT });
    expect(config.benchmark.resourceAmounts).toEqual({ cpuMillicores: 1000, memoryBytes: 2 ** 30 });
  });

  it("warns, without failing, that the password is still to be set", () => {
    expect(password).toBe("missing");
    expect(warnings.map((w) => w.path)).toEqual(["password"]);
  });

  it.each([
    ["2", 1],
    ["500m", 1],
    ["3", 1],
    ["4", 2],
    ["8", 6],
    ["10", 8],
    ["32", 8],
  ])("ioThreads for a %s vCPU limit is %i", (cpu, expected) => {
    const raw = { valkey: { resources: { requests: { cpu: "500m" }, limits: { cpu } } } };
    expect(parseStackConfig(raw).config.valkey.ioThreads).toBe(expected);
  });

  it("accepts an image pinned by digest with its tag kept for people, and a private mirror", () => {
    const digest = `sha256:${"0123456789abcdef".repeat(4)}`;
    const { config } = parseStackConfig({
      valkey: {
        image: `123456789012.dkr.ecr.us-west-2.amazonaws.com/docker-hub/valkey/valkey:9.0.2@${digest}`,
        replication: { haproxyImage: `haproxy@${digest}` },
      },
      drills: { image: "registry.example.com:5000/mirror/node:24.9.0-alpine" },
    });
    expect(config.valkey.image).toBe(
      `123456789012.dkr.ecr.us-west-2.amazonaws.com/docker-hub/valkey/valkey:9.0.2@${digest}`,
    );
    expect(config.valkey.replication.haproxyImage).toBe(`haproxy@${digest}`);
    expect(config.drills.image).toBe("registry.example.com:5000/mirror/node:24.9.0-alpine");
    expect(parseStackConfig({ network: { natGateways: "perZone" } }).config.network.natGateways).toBe("perZone");
  });

  it("keeps an explicit ioThreads", () => {
    expect(parseStackConfig({ valkey: { ioThreads: 2 } }).config.valkey.ioThreads).toBe(2);
  });

  it("resolves cluster mode", () => {
    const { config: c } = parseStackConfig({ valkey: { mode: "cluster" } });
    expect(c.valkey.pods).toBe(6);
    expect(c.benchmark.workloadName).toBe("cluster");
  });

  it("takes the region from aws:region and derives zones", () => {
    expect(parseStackConfig({ "aws:region": "eu-west-1" }).config.aws).toEqual({
      region: "eu-west-1",
      zones: ["eu-west-1a", "eu-west-1b", "eu-west-1c"],
    });
  });

  it("adds network-optimised siblings on request", () => {
    const { config: c } = parseStackConfig({
      karpenter: { nodePool: { networkOptimized: true, instanceFamilies: ["r8g", "c7gn"], instanceSizes: ["large"] } },
    });
    expect(c.karpenter.nodePool.permittedInstanceTypes).toEqual(["r8g.large", "r8gn.large", "c7gn.large"]);
  });

  it("refuses networkOptimized for families EC2 has no network-optimised sibling of (r7g, m7g: there is no r7gn or m7gn)", () => {
    for (const families of [undefined, ["r7g"], ["m7g", "r8g"]]) {
      const err = errorOf({
        karpenter: { nodePool: { networkOptimized: true, ...(families ? { instanceFamilies: families } : {}) } },
      });
      expect(issuePaths(err)).toEqual(["karpenter.nodePool.networkOptimized"]);
      expect(err.message).toMatch(
        /(r7g|m7g) has no network-optimised sibling in EC2 \(the Graviton ones are c6g → c6gn, c7g → c7gn, c8g → c8gn, m8g → m8gn, r8g → r8gn\)/,
      );
    }
    // Without networkOptimized, or with explicit instance types, r7g is fine.
    expect(
      parseStackConfig({ karpenter: { nodePool: { instanceFamilies: ["r7g"] } } }).config.karpenter.nodePool
        .permittedInstanceTypes,
    ).toContain("r7g.large");
  });

  it("accepts numbers and percentages for quantities", () => {
    const { config: c } = parseStackConfig({ valkey: { resources: { limits: { cpu: 4 } }, maxmemory: "9Gi" } });
    expect(c.valkey.resources.limits.cpu).toBe("4");
    expect(c.valkey.maxmemoryBytes).toBe(9 * 2 ** 30);
  });

  it.each([
    [{ primaries: 100, replicasPerPrimary: 1 }, false],
    [{ primaries: 101, replicasPerPrimary: 1 }, true],
    // 70 primaries are measured, 210 nodes are not.
    [{ primaries: 70, replicasPerPrimary: 2 }, true],
  ] as const)("cluster %j beyond the largest measured shape: warned at preview %s", (cluster, warned) => {
    const { warnings: w } = parseStackConfig({
      valkey: { mode: "cluster", cluster },
      password: { secure: "v1:abc" },
      platform: "byo",
    });
    const beyond = w.filter((x) => x.path === "valkey.cluster.primaries");
    if (!warned) return expect(beyond).toEqual([]);
    expect(beyond).toHaveLength(1);
    expect(beyond[0]?.message).toMatch(
      new RegExp(
        `^${cluster.primaries} primaries × \\(1 \\+ ${cluster.replicasPerPrimary}\\) = ${cluster.primaries * (1 + cluster.replicasPerPrimary)} nodes is beyond the largest shape measured \\(100 × \\(1 \\+ 1\\).*bootstrap 19.7 s.*npm run bench:scale -- --primaries ${cluster.primaries}`,
      ),
    );
  });

  it("refuses more primaries than Valkey has hash slots, naming the key; 16384 itself parses", () => {
    const raw = (primaries: number) => ({
      valkey: { mode: "cluster", cluster: { primaries, replicasPerPrimary: 1 } },
      password: { secure: "v1:abc" },
      platform: "byo",
    });
    expect(parseStackConfig(raw(16384)).config.valkey.cluster.primaries).toBe(16384);
    const e = errorOf(raw(16385));
    expect(e.issues).toEqual([
      {
        path: "valkey.cluster.primaries",
        message: "at most 16384: each primary owns at least one of Valkey's 16384 hash slots",
      },
    ]);
  });

  it("on byo, uses byo.storageClass and skips NodePool capacity rules", () => {
    const { config: c, warnings: w } = parseStackConfig({
      platform: "byo",
      byo: { storageClass: "fast" },
      valkey: { resources: { requests: { memory: "200Gi" }, limits: { memory: "256Gi" } } },
      password: { secure: "v1:abc" },
    });
    expect(c.valkey.persistence.storageClass).toBe("fast");
    expect(w).toEqual([]);
  });
});

describe("stack files", () => {
  it("parses the shipped replication stack as the seed's replication setup", () => {
    const loaded = loadStackFile("stacks/Pulumi.replication.yaml");
    expect(loaded.stack).toBe("replication");
    expect(loaded.config.valkey.mode).toBe("replication");
    expect(loaded.config.valkey.pods).toBe(4);
    expect(loaded.config.karpenter.nodePool.permittedInstanceTypes).toEqual(["r7g.large"]);
    expect(workloadFromConfig(loaded.config)).toEqual({
      ...SEED_WORKLOAD,
      name: "replication",
      repeat: DEFAULT_REPEAT,
    });
  });

  it("parses the shipped cluster stack as the seed's cluster setup", () => {
    const loaded = loadStackFile("stacks/Pulumi.cluster.yaml");
    expect(loaded.config.valkey.mode).toBe("cluster");
    expect(loaded.config.valkey.pods).toBe(6);
    expect(loaded.config.aws.zones).toEqual(["us-west-2a", "us-west-2b", "us-west-2c"]);
    expect(workloadFromConfig(loaded.config)).toEqual({ ...SEED_WORKLOAD, name: "cluster", repeat: DEFAULT_REPEAT });
  });

  it("separates unreadable files from invalid config", () => {
    const dir = mkdtempSync(join(tmpdir(), "stack-"));
    expect(() => loadStackFile(join(dir, "Pulumi.none.yaml"))).toThrow(StackFileError);
    writeFileSync(join(dir, "Pulumi.bad.yaml"), "config:\n  a: [1,\n");
    expect(() => loadStackFile(join(dir, "Pulumi.bad.yaml"))).toThrow(/not valid YAML/);
    writeFileSync(
      join(dir, "Pulumi.ns.yaml"),
      "config:\n  valkey: {}\n  kubernetes:context: x\n  valkey-on-eks:valkey: { mode: cluster, cluster: { primaries: 1 } }\n",
    );
    const err = (() => {
      try {
        loadStackFile(join(dir, "Pulumi.ns.yaml"));
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error("expected an error");
    })();
    expect(issuePaths(err)).toEqual(["valkey", "valkey.cluster.primaries"]);
  });
});

describe("config table", () => {
  const table = renderConfigTable();

  it("lists every key of the schema, including nested ones", () => {
    const keys = describeKeys(stackInputSchema);
    expect(keys.length).toBeGreaterThan(80);
    for (const key of keys)
      expect(table).toContain(key.path.includes(":") ? `\`${key.path}\`` : `\`valkey-on-eks:${key.path}\``);
    expect(table).toContain("| `valkey-on-eks:valkey.cluster.primaries` | integer 1–16384 | `3` |");
  });

  it("replaces only the marked region", () => {
    const readme = `# T\nbefore\n${TABLE_START}\nold\n${TABLE_END}\nafter\n`;
    expect(replaceConfigTable(readme, "NEW")).toBe(`# T\nbefore\n${TABLE_START}\nNEW\n${TABLE_END}\nafter\n`);
    expect(() => replaceConfigTable("no markers", "x")).toThrow(/must contain/);
  });

  it(`is up to date in ${TABLE_DOC}`, () => {
    const doc = readFileSync(TABLE_DOC, "utf8");
    expect(replaceConfigTable(doc, table)).toBe(doc);
  });
});
