/**
 * What a pod can actually request on the Graviton instance types the Valkey NodePool may launch:
 * a small capacity table (vCPU, GiB, ENI-limited max pods) and the allocatable capacity left
 * after the reserves Karpenter and the EKS AMI subtract. Used by the config rules to tell a user
 * "your 15Gi request fits no permitted instance type" before Karpenter leaves the pod Pending.
 */

/** Hardware of one EC2 instance type. */
export interface InstanceCapacity {
  /** vCPUs. */
  vcpu: number;
  /** Memory in GiB. */
  memoryGiB: number;
  /** ENI-limited pod count (VPC CNI without prefix delegation), which sizes kube-reserved memory. */
  maxPods: number;
}

/** Allocatable capacity for pods on one node, after every reserve. */
export interface Allocatable {
  cpuMillicores: number;
  memoryBytes: number;
}

const SIZES: ReadonlyArray<readonly [size: string, vcpu: number, maxPods: number]> = [
  ["medium", 1, 8],
  ["large", 2, 29],
  ["xlarge", 4, 58],
  ["2xlarge", 8, 58],
  ["4xlarge", 16, 234],
  ["8xlarge", 32, 234],
  ["12xlarge", 48, 234],
  ["16xlarge", 64, 737],
  ["metal", 64, 737],
];

/**
 * GiB of memory per vCPU of each family in the table (r = memory optimised, m = general purpose):
 * the default families (r7g, m7g, Graviton 3) and the Graviton 4 families whose network-optimised
 * siblings exist (r8g → r8gn, m8g → m8gn; see NETWORK_OPTIMIZED_SIBLING).
 */
const FAMILY_GIB_PER_VCPU: Readonly<Record<string, number>> = { r7g: 8, m7g: 4, r8g: 8, r8gn: 8, m8g: 4, m8gn: 4 };

/**
 * The instance sizes this module knows, smallest first ("metal" is Graviton 3's only: Graviton 4 has metal-24xl /
 * metal-48xl).
 */
export const KNOWN_INSTANCE_SIZES: readonly string[] = SIZES.map(([size]) => size);

/** The sizes of `family` this module knows: every size, minus "metal" for the 8th generation. */
export function knownSizesOf(family: string): string[] {
  return KNOWN_INSTANCE_SIZES.filter((size) => size !== "metal" || /^[a-z]+7g[a-z]*$/.test(family));
}

/** Capacity of the families above in every size; e.g. r7g.large = 2 vCPU / 16 GiB. */
export const INSTANCE_CAPACITY: Readonly<Record<string, InstanceCapacity>> = Object.freeze(
  Object.fromEntries(
    Object.entries(FAMILY_GIB_PER_VCPU).flatMap(([family, gibPerVcpu]) =>
      SIZES.filter(([size]) => knownSizesOf(family).includes(size)).map(
        ([size, vcpu, maxPods]) => [`${family}.${size}`, { vcpu, memoryGiB: vcpu * gibPerVcpu, maxPods }] as const,
      ),
    ),
  ),
);

/** Karpenter's default `vmMemoryOverheadPercent`: memory the hypervisor and kernel keep. */
export const VM_MEMORY_OVERHEAD = 0.075;
/** Kubelet hard eviction threshold (`memory.available<100Mi`). */
export const EVICTION_THRESHOLD_BYTES = 100 * 2 ** 20;
/**
 * Requests of the DaemonSets every EKS node runs, as assumed here (add-on defaults; a cluster
 * with more DaemonSets has less room): aws-node (VPC CNI) 25m CPU; kube-proxy 100m CPU;
 * ebs-csi-node, three containers (driver, node-driver-registrar, liveness-probe) at 10m / 40Mi
 * each = 30m / 120Mi; eks-pod-identity-agent budgeted at 25m / 64Mi. Sum 180m / 184Mi, rounded
 * up to 200m / 256Mi. (Memory requests of aws-node and kube-proxy are unset by default.)
 */
export const DAEMONSET_OVERHEAD: Readonly<Allocatable> = Object.freeze({
  cpuMillicores: 200,
  memoryBytes: 256 * 2 ** 20,
});

/**
 * kube-reserved CPU as the EKS AMI computes it: 6% of the first core, 1% of the second, 0.5% of cores 3–4, 0.25% above.
 */
export function kubeReservedMillicores(vcpu: number): number {
  const tiers: ReadonlyArray<readonly [cores: number, share: number]> = [
    [1, 0.06],
    [1, 0.01],
    [2, 0.005],
    [Number.POSITIVE_INFINITY, 0.0025],
  ];
  let left = vcpu;
  let reserved = 0;
  for (const [cores, share] of tiers) {
    const used = Math.min(left, cores);
    reserved += used * 1000 * share;
    left -= used;
    if (left <= 0) break;
  }
  return Math.ceil(reserved);
}

/** kube-reserved memory as the EKS AMI computes it: 255Mi + 11Mi per pod the node may run. */
export function kubeReservedMemoryBytes(maxPods: number): number {
  return (255 + 11 * maxPods) * 2 ** 20;
}

/**
 * Capacity left for pods on an instance type: vCPU minus kube-reserved and DaemonSets; memory
 * minus VM overhead, kube-reserved, the eviction threshold and DaemonSets. `undefined` when the
 * type is not in {@link INSTANCE_CAPACITY}. r7g.large (2 vCPU / 16 GiB, 29 pods): CPU 2000m −
 * 70m (6% + 1%) − 200m = 1730m; memory 16 GiB × 0.925 − (255 + 11 × 29)Mi − 100Mi − 256Mi
 * ≈ 13.89 GiB: the default Guaranteed Valkey pod (1.5 vCPU / 12 GiB) fits, with 230m / 1.89 GiB to spare.
 */
export function allocatableFor(instanceType: string): Allocatable | undefined {
  const capacity = INSTANCE_CAPACITY[instanceType];
  if (!capacity) return undefined;
  const cpuMillicores = capacity.vcpu * 1000 - kubeReservedMillicores(capacity.vcpu) - DAEMONSET_OVERHEAD.cpuMillicores;
  const memoryBytes =
    Math.floor(capacity.memoryGiB * 2 ** 30 * (1 - VM_MEMORY_OVERHEAD)) -
    kubeReservedMemoryBytes(capacity.maxPods) -
    EVICTION_THRESHOLD_BYTES -
    DAEMONSET_OVERHEAD.memoryBytes;
  return { cpuMillicores, memoryBytes };
}

/** Graviton (arm64) families carry a "g" right after the generation digit: r7g, r7gn, m7gd, x2gd, c8g. */
export function isGravitonFamily(family: string): boolean {
  return /^[a-z]+\d+g[a-z]*$/.test(family);
}

/**
 * The Graviton families that have a network-optimised ("gn") sibling, as EC2 lists them: the
 * InstanceType enum of the AWS API (as @pulumi/aws 7.48 ships it, types/enums/ec2) has c6gn, c7gn,
 * c8gn, m8gn and r8gn, and no r7gn or m7gn (nor does Karpenter's generated price list).
 */
export const NETWORK_OPTIMIZED_SIBLING: Readonly<Record<string, string>> = Object.freeze({
  c6g: "c6gn",
  c7g: "c7gn",
  c8g: "c8gn",
  m8g: "m8gn",
  r8g: "r8gn",
});

/**
 * The network-optimised sibling of a family ("r8g" → "r8gn"), or undefined when EC2 has none (r7g, m7g) or it already
 * is one.
 */
export function networkOptimizedFamily(family: string): string | undefined {
  return NETWORK_OPTIMIZED_SIBLING[family];
}

/** Whether `family` is itself a network-optimised family ("c7gn", "r8gn"). */
export function isNetworkOptimizedFamily(family: string): boolean {
  return Object.values(NETWORK_OPTIMIZED_SIBLING).includes(family);
}
