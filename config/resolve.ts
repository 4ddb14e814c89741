/**
 * Turns the validated stack input (sections.ts) into the resolved config the program uses:
 * fills the defaults that depend on other keys (zones from the region, ioThreads, storageClass,
 * workloadName) and keeps every quantity both as written (for manifests) and parsed (for
 * arithmetic). Pure; runs only on input the section schemas accepted, so the quantity parsers
 * cannot throw here.
 *
 * The resolved type is not written by hand: {@link stackResolver} is the resolver as a zod step,
 * piped after the section schemas in schema.ts, and `StackConfig` (types.ts) is its `z.output`.
 */
import { z } from "zod";
import { networkOptimizedFamily } from "./instance-types.js";
import { parseCpuQuantity, parseMemoryQuantity } from "./quantity.js";
import type { StackInput } from "./sections.js";

/** The region a stack uses when neither `aws.region` nor `aws:region` is set. */
export const DEFAULT_REGION = "us-west-2";

/** Parses written CPU and memory into CPU millicores ("1" → 1000) and memory bytes ("12Gi" → 12884901888). */
export function amountsOf(quantities: StackInput["benchmark"]["resources"]) {
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

/** `aws`: the region, and the zones (its a, b and c unless listed). */
function resolveAws(input: StackInput, region: string) {
  return {
    region,
    zones: input.aws.zones ? [...input.aws.zones] : ["a", "b", "c"].map((letter) => `${region}${letter}`),
    profile: input.aws.profile,
    roleArn: input.aws.roleArn,
  };
}

function resolveEks(eks: StackInput["eks"]) {
  return {
    ...eks,
    publicAccessCidrs: [...eks.publicAccessCidrs],
    adminPrincipalArns: [...eks.adminPrincipalArns],
    systemNodes: { ...eks.systemNodes },
  };
}

/** `karpenter`: the node pool with its limits parsed and the instance types it may launch. */
function resolveKarpenter(karpenter: StackInput["karpenter"]) {
  return {
    chartVersion: karpenter.chartVersion,
    amiAlias: karpenter.amiAlias,
    nodePool: {
      ...karpenter.nodePool,
      instanceTypes: karpenter.nodePool.instanceTypes,
      limits: { ...karpenter.nodePool.limits, amounts: amountsOf(karpenter.nodePool.limits) },
      permittedInstanceTypes: permittedInstanceTypes(karpenter.nodePool),
    },
  };
}

function resolveByo(byo: StackInput["byo"]) {
  return {
    kubeconfig: byo.kubeconfig,
    context: byo.context,
    nodeSelector: { ...byo.nodeSelector },
    tolerations: byo.tolerations.map((t) => ({ ...t })),
    storageClass: byo.storageClass,
    manageKarpenterNodePool: byo.manageKarpenterNodePool,
    nodeChecks: byo.nodeChecks,
    karpenterNodeRole: byo.karpenterNodeRole,
    karpenterDiscoveryTag: byo.karpenterDiscoveryTag,
  };
}

/**
 * `valkey`: limits default to the requests, both parsed; storage class, ioThreads, maxmemory and the pod count
 * resolved.
 */
function resolveValkey(input: StackInput) {
  const { valkey } = input;
  const requests = amountsOf(valkey.resources.requests);
  // Limits left out equal the requests (Guaranteed QoS).
  const limitQuantities = {
    cpu: valkey.resources.limits.cpu ?? valkey.resources.requests.cpu,
    memory: valkey.resources.limits.memory ?? valkey.resources.requests.memory,
  };
  const limits = amountsOf(limitQuantities);
  const pods =
    valkey.mode === "cluster"
      ? valkey.cluster.primaries * (1 + valkey.cluster.replicasPerPrimary)
      : 1 + valkey.replication.replicas;
  return {
    namespace: valkey.namespace,
    image: valkey.image,
    mode: valkey.mode,
    replication: {
      ...valkey.replication,
      sentinel: {
        ...valkey.replication.sentinel,
        parallelSyncs: valkey.replication.sentinel.parallelSyncs ?? Math.max(1, valkey.replication.replicas),
      },
    },
    cluster: { ...valkey.cluster },
    resources: { requests: { ...valkey.resources.requests }, limits: limitQuantities },
    resourceAmounts: { requests, limits },
    persistence: {
      ...valkey.persistence,
      storageClass: valkey.persistence.storageClass ?? (input.platform === "eks" ? "gp3" : input.byo.storageClass),
      sizeBytes: parseMemoryQuantity(valkey.persistence.size),
    },
    replDisklessSyncDelaySeconds: valkey.replDisklessSyncDelaySeconds,
    ioThreads: valkey.ioThreads ?? defaultIoThreads(limits.cpuMillicores),
    maxmemory: valkey.maxmemory,
    maxmemoryBytes: maxmemoryBytes(valkey.maxmemory, requests.memoryBytes),
    maxmemoryPolicy: valkey.maxmemoryPolicy,
    auth: { enabled: valkey.auth.enabled },
    pods,
  };
}

/** `benchmark`: the workload named after the mode unless named, its resources parsed. */
function resolveBenchmark(benchmark: StackInput["benchmark"], mode: StackInput["valkey"]["mode"]) {
  return {
    ...benchmark,
    workloadName: benchmark.workloadName ?? mode,
    tests: [...benchmark.tests],
    resources: { ...benchmark.resources },
    resourceAmounts: amountsOf(benchmark.resources),
  };
}

/**
 * Who may scrape: the section as written, plus the VPC's CIDR when an AMP managed collector scrapes
 * (its network interfaces sit in the private subnets; metrics.amp.enabled on platform eks).
 */
function resolveScrapeFrom(input: StackInput) {
  const s = input.metrics.scrapeFrom;
  const amp = input.platform === "eks" && input.metrics.enabled && input.metrics.amp.enabled;
  const vpc = input.eks.vpcCidr;
  const cidrs = amp && !s.cidrs.includes(vpc) ? [...s.cidrs, vpc] : [...s.cidrs];
  return { ...s, podLabels: { ...s.podLabels }, cidrs };
}

/**
 * Resolves validated input into the config the program uses. Beyond the stack-file keys it adds:
 * `karpenter.nodePool.limits.amounts` and `permittedInstanceTypes` (families × sizes, or the
 * explicit instanceTypes), `valkey.resourceAmounts`, `persistence.sizeBytes`, `maxmemoryBytes`,
 * `valkey.pods` (1 + replicas, or primaries × (1 + replicasPerPrimary)) and
 * `benchmark.resourceAmounts`. The Valkey password is never part of it.
 */
export function resolveStackConfig(input: StackInput) {
  const region = input.aws.region ?? input["aws:region"] ?? DEFAULT_REGION;
  const valkey = resolveValkey(input);
  return {
    platform: input.platform,
    aws: resolveAws(input, region),
    eks: resolveEks(input.eks),
    network: { ...input.network },
    karpenter: resolveKarpenter(input.karpenter),
    byo: resolveByo(input.byo),
    valkey,
    benchmark: resolveBenchmark(input.benchmark, input.valkey.mode),
    checks: { ...input.checks },
    drills: { ...input.drills, faults: [...input.drills.faults] },
    backup: { ...input.backup },
    restore: { ...input.restore },
    cost: { ...input.cost },
    metrics: {
      ...input.metrics,
      scrapeFrom: resolveScrapeFrom(input),
      amp: { ...input.metrics.amp },
    },
  };
}

/** The resolver as a zod step (input: the section schemas' output); its `z.output` is `StackConfig`. */
export const stackResolver = z.transform(resolveStackConfig);
