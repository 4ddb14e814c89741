/**
 * Turns the validated stack input (config-sections.ts) into the resolved {@link StackConfig}:
 * fills the defaults that depend on other keys and parses every quantity. Pure; runs only on
 * input the section schemas accepted, so the quantity parsers cannot throw here.
 */
import type { StackInput } from "./config-sections.js";
import type { ResourceAmounts, ResourceQuantities, StackConfig } from "./config-types.js";
import { networkOptimizedFamily } from "./instance-types.js";
import { parseCpuQuantity, parseMemoryQuantity } from "./quantity.js";

/** The region a stack uses when neither `aws.region` nor `aws:region` is set. */
export const DEFAULT_REGION = "us-west-2";

/** Parses written CPU and memory into millicores and bytes. */
export function amountsOf(quantities: ResourceQuantities): ResourceAmounts {
  return { cpuMillicores: parseCpuQuantity(quantities.cpu), memoryBytes: parseMemoryQuantity(quantities.memory) };
}

/** The default `io-threads`: max(1, min(8, floor(limit vCPU) − 2)). */
export function defaultIoThreads(limitMillicores: number): number {
  return Math.max(1, Math.min(8, Math.floor(limitMillicores / 1000) - 2));
}

/** `maxmemory` in bytes: a percentage of the memory request, or a memory quantity. */
export function maxmemoryBytes(maxmemory: string, requestBytes: number): number {
  const percent = /^(\d+(?:\.\d+)?)%$/.exec(maxmemory.trim());
  return percent ? Math.floor((requestBytes * Number(percent[1])) / 100) : parseMemoryQuantity(maxmemory);
}

/** The instance types a NodePool may launch: explicit types, or families (+ network-optimised siblings) × sizes. */
export function permittedInstanceTypes(nodePool: StackInput["karpenter"]["nodePool"]): string[] {
  if (nodePool.instanceTypes) return [...nodePool.instanceTypes];
  const families = nodePool.instanceFamilies.flatMap((family) => {
    const sibling = nodePool.networkOptimized ? networkOptimizedFamily(family) : undefined;
    return sibling && !nodePool.instanceFamilies.includes(sibling) ? [family, sibling] : [family];
  });
  return families.flatMap((family) => nodePool.instanceSizes.map((size) => `${family}.${size}`));
}

/** Resolves validated input into the config the program uses. */
export function resolveStackConfig(input: StackInput): StackConfig {
  const region = input.aws.region ?? input["aws:region"] ?? DEFAULT_REGION;
  const { valkey, benchmark, karpenter } = input;
  const requests = amountsOf(valkey.resources.requests);
  const limits = amountsOf(valkey.resources.limits);
  const pods = valkey.mode === "cluster" ? valkey.cluster.primaries * (1 + valkey.cluster.replicasPerPrimary) : 1 + valkey.replication.replicas;
  return {
    platform: input.platform,
    aws: { region, zones: input.aws.zones ? [...input.aws.zones] : ["a", "b", "c"].map((letter) => `${region}${letter}`) },
    eks: { ...input.eks, systemNodes: { ...input.eks.systemNodes } },
    karpenter: {
      chartVersion: karpenter.chartVersion,
      nodePool: {
        ...karpenter.nodePool,
        instanceTypes: karpenter.nodePool.instanceTypes,
        limits: { ...karpenter.nodePool.limits, amounts: amountsOf(karpenter.nodePool.limits) },
        permittedInstanceTypes: permittedInstanceTypes(karpenter.nodePool),
      },
    },
    byo: {
      kubeconfig: input.byo.kubeconfig,
      context: input.byo.context,
      nodeSelector: { ...input.byo.nodeSelector },
      tolerations: input.byo.tolerations.map((t) => ({ ...t })),
      storageClass: input.byo.storageClass,
      manageKarpenterNodePool: input.byo.manageKarpenterNodePool,
      karpenterNodeRole: input.byo.karpenterNodeRole,
      karpenterDiscoveryTag: input.byo.karpenterDiscoveryTag,
    },
    valkey: {
      namespace: valkey.namespace,
      image: valkey.image,
      mode: valkey.mode,
      replication: { ...valkey.replication },
      cluster: { ...valkey.cluster },
      resources: { requests: { ...valkey.resources.requests }, limits: { ...valkey.resources.limits } },
      resourceAmounts: { requests, limits },
      persistence: {
        ...valkey.persistence,
        storageClass: valkey.persistence.storageClass ?? (input.platform === "eks" ? "gp3" : input.byo.storageClass),
        sizeBytes: parseMemoryQuantity(valkey.persistence.size),
      },
      ioThreads: valkey.ioThreads ?? defaultIoThreads(limits.cpuMillicores),
      maxmemory: valkey.maxmemory,
      maxmemoryBytes: maxmemoryBytes(valkey.maxmemory, requests.memoryBytes),
      maxmemoryPolicy: valkey.maxmemoryPolicy,
      auth: { enabled: valkey.auth.enabled },
      pods,
    },
    benchmark: {
      ...benchmark,
      workloadName: benchmark.workloadName ?? valkey.mode,
      tests: [...benchmark.tests],
      resources: { ...benchmark.resources },
      resourceAmounts: amountsOf(benchmark.resources),
    },
    checks: { ...input.checks },
  };
}
