/**
 * Memory and QoS that cannot evict a primary: Valkey pods are Guaranteed by default (limits =
 * requests), the defaults fit r7g.large as Guaranteed, a pod that fits no permitted instance
 * type is refused naming the key and the largest pod that fits, the allocatable arithmetic
 * follows the EKS AMI formulas, and maxmemory leaves room for the fork's copy-on-write.
 */
import { describe, expect, it } from "vitest";
import { loadStackFile, parseStackConfig } from "../../config/schema.js";
import { allocatableFor, kubeReservedMemoryBytes, kubeReservedMillicores } from "../../config/instance-types.js";
import { configIssues as issuesOf } from "../support/stack-config.js";

const GiB = 2 ** 30;
const MiB = 2 ** 20;

describe("EKS allocatable on the Graviton table", () => {
  it("kube-reserved follows the EKS AMI: 255Mi + 11Mi x max pods; CPU 6% / 1% / 0.5% / 0.25% tiers", () => {
    expect(kubeReservedMemoryBytes(29)).toBe(574 * MiB);
    expect(kubeReservedMillicores(2)).toBe(70);
    expect(kubeReservedMillicores(4)).toBe(80);
    expect(kubeReservedMillicores(16)).toBe(110);
  });

  it("r7g.large leaves 1.73 vCPU and about 13.9 GiB to pods (after 7.5% VM overhead, 100Mi eviction, 200m / 256Mi DaemonSets)", () => {
    const a = allocatableFor("r7g.large");
    expect(a?.cpuMillicores).toBe(1730);
    expect((a?.memoryBytes ?? 0) / GiB).toBeCloseTo(13.89, 2);
  });
});

describe("Guaranteed QoS by default", () => {
  it("defaults to requests = limits = 1.5 vCPU / 12Gi, which fits r7g.large alone, and maxmemory 75% of it", () => {
    const { config } = parseStackConfig({ karpenter: { nodePool: { instanceSizes: ["large"] } } });
    expect(config.valkey.resources).toEqual({
      requests: { cpu: "1500m", memory: "12Gi" },
      limits: { cpu: "1500m", memory: "12Gi" },
    });
    expect(config.valkey.maxmemoryBytes).toBe(9 * GiB);
    const a = allocatableFor("r7g.large");
    expect(config.valkey.resourceAmounts.limits.memoryBytes).toBeLessThanOrEqual(a?.memoryBytes ?? 0);
    expect(config.valkey.resourceAmounts.limits.cpuMillicores).toBeLessThanOrEqual(a?.cpuMillicores ?? 0);
  });

  it("limits left out follow the requests given; limits given are kept (Burstable by choice)", () => {
    const { config } = parseStackConfig({ valkey: { resources: { requests: { cpu: "1", memory: "8Gi" } } } });
    expect(config.valkey.resources.limits).toEqual({ cpu: "1", memory: "8Gi" });
    const burst = parseStackConfig({
      valkey: { resources: { requests: { memory: "8Gi" }, limits: { memory: "10Gi" } } },
    }).config;
    expect(burst.valkey.resources.limits).toEqual({ cpu: "1500m", memory: "10Gi" });
  });

  it("the example stacks are Guaranteed and fit r7g.large", () => {
    for (const stack of ["cluster", "replication"]) {
      const { config } = loadStackFile(new URL(`../../stacks/Pulumi.${stack}.yaml`, import.meta.url).pathname);
      expect(config.valkey.resources.requests).toEqual(config.valkey.resources.limits);
      expect(config.valkey.resourceAmounts.requests.memoryBytes).toBeLessThanOrEqual(
        allocatableFor("r7g.large")?.memoryBytes ?? 0,
      );
    }
  });
});

describe("a pod that fits no permitted instance type is refused", () => {
  it("the seed's 16Gi as Guaranteed on r7g.large: names requests.memory and the largest pod that fits", () => {
    const issues = issuesOf({
      karpenter: { nodePool: { instanceSizes: ["large"] } },
      valkey: { resources: { requests: { memory: "16Gi" } } },
    });
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe("valkey.resources.requests.memory");
    expect(issues[0]?.message).toContain(
      "fits no permitted instance type; the largest pod that fits is 1.73 vCPU / 13.89Gi (r7g.large's allocatable",
    );
  });

  it("2 vCPU on r7g.large: names requests.cpu", () => {
    const issues = issuesOf({
      karpenter: { nodePool: { instanceSizes: ["large"] } },
      valkey: { resources: { requests: { cpu: "2" } } },
    });
    expect(issues.map((i) => i.path)).toEqual(["valkey.resources.requests.cpu"]);
  });

  it("the same pod passes once a larger size is permitted", () => {
    expect(
      issuesOf({
        karpenter: { nodePool: { instanceSizes: ["large", "xlarge"] } },
        valkey: { resources: { requests: { cpu: "2", memory: "16Gi" } } },
      }),
    ).toEqual([]);
  });
});

describe("maxmemory leaves room for the fork's copy-on-write", () => {
  it("refuses more than 80% of limits.memory while RDB or AOF is on, naming valkey.maxmemory and the ceiling", () => {
    const issues = issuesOf({ valkey: { maxmemory: "85%" } });
    expect(issues.map((i) => i.path)).toEqual(["valkey.maxmemory"]);
    expect(issues[0]?.message).toContain("copy-on-write");
    expect(issues[0]?.message).toContain("use at most 9.6Gi");
    expect(issuesOf({ valkey: { maxmemory: "80%" } })).toEqual([]);
  });

  it("accepts it with persistence off (no fork), still below the limit", () => {
    expect(issuesOf({ valkey: { maxmemory: "90%", persistence: { aof: false, rdb: false } } })).toEqual([]);
    expect(
      issuesOf({ valkey: { maxmemory: "12Gi", persistence: { aof: false, rdb: false } } }).map((i) => i.path),
    ).toEqual(["valkey.maxmemory"]);
  });
});
