/**
 * The quota and cost estimate come from bin-packing every pod the stack creates
 * (members, Sentinels, HAProxy, benchmark and drill client pods, Auto Mode system pods) against
 * the allocatable model of config/instance-types.ts, table-tested per stack file; plus the packer's
 * own rules (fit, required anti-affinity both ways, zone spread, preferences relaxed / strict).
 */
import { describe, expect, it } from "vitest";
import { loadStackFile, parseStackConfig } from "../../config/schema.js";
import { allocatableFor } from "../../config/instance-types.js";
import { estimateVcpus } from "../../components/capacity/preflight.js";
import { packPods, type PodGroup } from "../../components/capacity/bin-packing.js";
import { estimateNodes } from "../../components/capacity/estimate.js";
import { valkeyPoolPods } from "../../components/capacity/pod-inventory.js";
import { HAPROXY_RESOURCES } from "../../components/valkey/haproxy-manifests.js";
import { EXPORTER_RESOURCES } from "../../components/valkey/metrics-pod.js";
import { stackCost } from "../../benchmarks/cost/cost-model.js";
import { loadPriceTable } from "../../benchmarks/cost/prices.js";
import { costInputsFromConfig } from "../../stacks/cost.js";

const byo = (): ReturnType<typeof loadStackFile>["config"] => {
  const { config } = loadStackFile("stacks/Pulumi.byo.yaml");
  return config;
};
const load = (file: string) => (file.includes("byo") ? byo() : loadStackFile(file).config);
const summary = (nodes: Array<{ pods: string[] }>) => nodes.map((n) => n.pods.join("+"));

describe("the replication stack on r7g.large, by the project's allocatable model", () => {
  it("an HAProxy pod does not fit beside a Valkey pod with its exporter (1730m − 1500m − 25m = 205m < 250m)", () => {
    const a = allocatableFor("r7g.large");
    const config = load("stacks/Pulumi.replication.yaml");
    expect(a && a.cpuMillicores - config.valkey.resourceAmounts.requests.cpuMillicores).toBe(230);
    expect(HAPROXY_RESOURCES.requests.cpu).toBe("250m");
    expect(EXPORTER_RESOURCES.requests.cpu).toBe("25m");
    const groups = valkeyPoolPods(config).map((g) => [g.name, g.count, g.request.cpuMillicores]);
    // Members and Sentinels each with the metrics exporter beside them (metrics.enabled, the default).
    expect(groups).toEqual([
      ["valkey", 4, 1525],
      ["sentinel", 3, 125],
      ["haproxy", 2, 250],
      ["benchmark", 1, 1000],
    ]);
  });
});

describe.each([
  // file, least nodes (kube-scheduler view), worst nodes (Karpenter view), vCPU min–max with the system group
  {
    file: "stacks/Pulumi.replication.yaml",
    least: [
      "valkey-0+sentinel-0",
      "valkey-1+sentinel-1",
      "valkey-2+sentinel-2",
      "valkey-3",
      "haproxy-0+benchmark-0",
      "haproxy-1",
    ],
    worst: [
      "valkey-0",
      "valkey-1",
      "valkey-2",
      "valkey-3",
      "sentinel-0+haproxy-0+benchmark-0",
      "sentinel-1+haproxy-1",
      "sentinel-2",
    ],
    // Karpenter's plan: largest pods first, and on r7g.large (the only type this file permits) an HAProxy pod cannot
    // join a member's node, so it gets a node that a Sentinel then joins.
    karpenter: [
      "valkey-0",
      "valkey-1",
      "valkey-2",
      "valkey-3",
      "haproxy-0+sentinel-0+benchmark-0",
      "haproxy-1+sentinel-1",
      "sentinel-2",
    ],
    vcpus: { system: 4, valkeyMin: 12, valkeyMax: 14, benchmarkMin: 0, benchmarkMax: 0, min: 16, max: 18 },
  },
  {
    file: "stacks/Pulumi.cluster.yaml",
    least: ["valkey-0", "valkey-1", "valkey-2", "valkey-3", "valkey-4", "valkey-5", "benchmark-0"],
    worst: ["valkey-0", "valkey-1", "valkey-2", "valkey-3", "valkey-4", "valkey-5", "benchmark-0"],
    karpenter: ["valkey-0", "valkey-1", "valkey-2", "valkey-3", "valkey-4", "valkey-5", "benchmark-0"],
    vcpus: { system: 4, valkeyMin: 12, valkeyMax: 12, benchmarkMin: 2, benchmarkMax: 2, min: 18, max: 18 },
  },
  {
    // byo: small pods (500m / 1Gi) on the default permitted types; the estimate is for a Karpenter pool sized like it.
    file: "stacks/Pulumi.byo.yaml",
    // Members' per-node anti-affinity is only preferred: the scheduler stacks two on one node when one fits.
    least: [
      "valkey-0+valkey-3+sentinel-0+haproxy-0",
      "valkey-1+sentinel-1+haproxy-1",
      "valkey-2+sentinel-2",
      "benchmark-0",
    ],
    worst: [
      "valkey-0+haproxy-0",
      "valkey-1+haproxy-1",
      "valkey-2",
      "valkey-3",
      "sentinel-0+benchmark-0",
      "sentinel-1",
      "sentinel-2",
    ],
    karpenter: [
      "valkey-0+haproxy-0",
      "valkey-1+haproxy-1",
      "valkey-2",
      "valkey-3",
      "sentinel-0+benchmark-0",
      "sentinel-1",
      "sentinel-2",
    ],
    vcpus: undefined,
  },
])("$file", ({ file, least, worst, karpenter, vcpus }) => {
  const config = load(file);
  it("packs every pod the stack creates onto nodes, as the scheduler and as Karpenter would", () => {
    const e = estimateNodes(config);
    expect(summary(e.least.nodes)).toEqual(least);
    expect(summary(e.worst.nodes)).toEqual(worst);
    expect(summary(e.karpenter.nodes)).toEqual(karpenter);
    expect(e.least.unschedulable).toEqual([]);
  });
  if (vcpus !== undefined) {
    it("the quota estimate is that packing", () => {
      expect(estimateVcpus(config)).toMatchObject(vcpus);
    });
    it("the cost counts the nodes Karpenter's plan launches", () => {
      const cost = stackCost(costInputsFromConfig(config, config.benchmark.clientPods), loadPriceTable());
      const nodes = cost.lines
        .filter((l) => l.unit === "node-hour" && !l.item.startsWith("system"))
        .reduce((n, l) => n + l.quantity, 0);
      expect(nodes).toBe(karpenter.length);
    });
  }
});

describe("Auto Mode and drills", () => {
  it("Auto Mode: no system node group and, with CoreDNS/VPC CNI add-ons off, no system-pool nodes", () => {
    const { config } = loadStackFile("stacks/Pulumi.replication.yaml");
    const auto = { ...config, eks: { ...config.eks, autoMode: true } };
    expect(estimateNodes(auto).autoModeSystem.nodes).toEqual([]);
    expect(estimateVcpus(auto)).toMatchObject({ system: 0, min: 12, max: 14 });
    const cost = stackCost(costInputsFromConfig(auto, 1), loadPriceTable());
    expect(cost.lines.some((l) => l.item.startsWith("system nodes"))).toBe(false);
  });
  it("the drill's load pod runs after the benchmark's pods completed, on a node the benchmark used", () => {
    const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
    const e = estimateNodes({ ...config, drills: { ...config.drills, enabled: true } });
    expect(summary(e.least.nodes).at(-1)).toBe("benchmark-0+drill-load-0");
  });
  it("several client pods: one per node, spread over the zones", () => {
    const { config } = parseStackConfig({ platform: "eks", valkey: { mode: "cluster" }, benchmark: { clientPods: 3 } });
    const clients = estimateNodes(config).least.nodes.filter((n) => n.phase === "benchmark");
    expect(clients.map((n) => n.zone)).toEqual(["us-west-2a", "us-west-2b", "us-west-2c"].slice(0, clients.length));
    expect(clients).toHaveLength(3);
  });
});

describe("the packer's rules", () => {
  const g = (o: Partial<PodGroup> & Pick<PodGroup, "name">): PodGroup => ({
    count: 1,
    phase: "release",
    labels: { app: o.name },
    request: { cpuMillicores: 100, memoryBytes: 2 ** 20 },
    requiredApart: [],
    preferredApart: [],
    ...o,
  });
  const opts = { zones: ["a", "b"], typeFor: () => "r7g.large", preferences: "relaxed" as const };
  it("a required anti-affinity of an existing pod keeps a newcomer off its node", () => {
    const p = packPods(
      [g({ name: "x", requiredApart: [{ selector: { app: "y" }, per: "node" }] }), g({ name: "y" })],
      opts,
    );
    expect(summary(p.nodes)).toEqual(["x-0", "y-0"]);
  });
  it("zone spread alternates zones; a zone anti-affinity allows one per zone and leaves the rest unschedulable", () => {
    const spread = packPods(
      [g({ name: "s", count: 3, spreadOver: { app: "s" }, request: { cpuMillicores: 1500, memoryBytes: 2 ** 20 } })],
      opts,
    );
    expect(spread.nodes.map((n) => n.zone)).toEqual(["a", "b", "a"]);
    const perZone = packPods(
      [g({ name: "z", count: 3, requiredApart: [{ selector: { app: "z" }, per: "zone" }] })],
      opts,
    );
    expect(perZone.unschedulable).toEqual(["z-2"]);
  });
  it("a preference is dropped for an existing node (relaxed) or costs a node (strict)", () => {
    const groups = [g({ name: "m" }), g({ name: "p", preferredApart: [{ app: "m" }] })];
    expect(packPods(groups, opts).nodes).toHaveLength(1);
    expect(packPods(groups, { ...opts, preferences: "strict" }).nodes).toHaveLength(2);
  });
  it("Karpenter's plan: largest first, and a pod joins a launched node of its phase by growing its type", () => {
    const smallest = (r: { cpuMillicores: number }) => (r.cpuMillicores <= 1730 ? "r7g.large" : "r7g.xlarge");
    const karpenter = { ...opts, typeFor: smallest, preferences: "strict" as const, inFlight: true };
    const member = g({
      name: "m",
      count: 2,
      request: { cpuMillicores: 1500, memoryBytes: 2 ** 20 },
      requiredApart: [{ selector: { app: "m" }, per: "node" }],
    });
    const proxy = g({ name: "h", request: { cpuMillicores: 250, memoryBytes: 2 ** 20 } });
    // The proxy comes first in the groups' order; Karpenter places the members first, then grows a member's node.
    const grown = packPods([proxy, member], karpenter);
    expect(grown.nodes.map((n) => `${n.type}:${n.pods.join("+")}`)).toEqual(["r7g.xlarge:m-0+h-0", "r7g.large:m-1"]);
    // Without the in-flight rule (or where a member's required anti-affinity forbids it) the proxy gets its own node.
    expect(summary(packPods([proxy, member], { ...karpenter, inFlight: false }).nodes)).toEqual(["h-0", "m-0", "m-1"]);
    const apart = g({ ...proxy, requiredApart: [{ selector: { app: "m" }, per: "node" }] });
    expect(summary(packPods([apart, member], karpenter).nodes)).toEqual(["m-0", "m-1", "h-0"]);
  });
  it("a pod no type fits is reported, not dropped silently", () => {
    expect(
      packPods([g({ name: "big", request: { cpuMillicores: 64_000, memoryBytes: 1 } })], {
        ...opts,
        typeFor: () => undefined,
      }).unschedulable,
    ).toEqual(["big-0"]);
  });
});
