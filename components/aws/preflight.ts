/**
 * Pure preview-time checks for platform eks: the AWS CLI the kubeconfig needs, the zones, the
 * instance types offered in them, and the EC2 vCPU quota. Each takes the result of a probe or an
 * invoke as plain data and returns the problems as messages naming the key, tool, zone, type or
 * quota and the number needed; stacks/preflight.ts does the probing and the invokes.
 */
import { allocatableFor, type Allocatable } from "../../config/instance-types.js";
import type { StackConfig } from "../../config/types.js";

export const AWS_CLI_INSTALL_URL = "https://docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html";
/** Service Quotas code of "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances", in vCPUs. */
export const ON_DEMAND_STANDARD_VCPU_QUOTA = "L-1216C47A";

/** What `aws --version` gave: not found, or its output (v2 prints to stdout, v1 to stderr). */
export type AwsCliProbe = { found: false; error: string } | { found: true; output: string };

/**
 * pulumi-eks writes a kubeconfig whose user runs `aws eks get-token`; the Kubernetes provider,
 * the Helm release and every post-deploy step call it. Requires AWS CLI v2.
 */
export function checkAwsCli(probe: AwsCliProbe): string | undefined {
  const how = `install AWS CLI v2 (${AWS_CLI_INSTALL_URL}) and make sure \`aws\` is on PATH`;
  if (!probe.found)
    return `platform eks needs the AWS CLI v2 (\`aws\`): the cluster's kubeconfig runs \`aws eks get-token\`, and \`aws --version\` failed (${probe.error}); ${how}`;
  const match = /aws-cli\/(\d+)\.(\d+)\.(\d+)/.exec(probe.output);
  if (!match) return `platform eks needs the AWS CLI v2: \`aws --version\` printed "${probe.output.trim().slice(0, 80)}", not aws-cli/2.x; ${how}`;
  if (Number(match[1]) < 2) return `platform eks needs the AWS CLI v2 for \`aws eks get-token\`; found aws-cli/${match[1]}.${match[2]}.${match[3]}; ${how}`;
  return undefined;
}

/**
 * The identity running `pulumi up` is the cluster creator and gets cluster admin from EKS itself;
 * an access entry for it in `eks.adminPrincipalArns` makes EKS refuse the cluster's access entries
 * (ResourceInUseException) after the control plane's ~10 minutes. `deployer` is the IAM principal
 * (for an assumed role, the role's ARN as getSessionContext reports it).
 */
export function checkAdminPrincipals(deployer: string, admins: readonly string[]): string[] {
  return admins.flatMap((arn, index) =>
    arn === deployer
      ? [
          `eks.adminPrincipalArns.${index}: ${arn} is the identity running pulumi up, which is cluster admin as the creator already; EKS refuses a second access entry for it: remove it`,
        ]
      : [],
  );
}

/** Configured zones that are not available zones of the region (`aws.getAvailabilityZones` names). */
export function checkZonesAvailable(region: string, zones: readonly string[], available: readonly string[]): string[] {
  return zones.flatMap((zone, index) =>
    available.includes(zone)
      ? []
      : [`aws.zones.${index}: "${zone}" is not an available zone of ${region} for this account (available: ${available.join(", ") || "none"})`],
  );
}

/** Instance types not offered in a zone: `offered` maps each zone to `getInstanceTypeOfferings(...).instanceTypes`. */
export function checkOfferings(
  required: ReadonlyArray<{ key: string; types: readonly string[] }>,
  offered: Readonly<Record<string, readonly string[]>>,
): string[] {
  const problems: string[] = [];
  for (const [zone, types] of Object.entries(offered)) {
    for (const { key, types: wanted } of required) {
      const missing = wanted.filter((t) => !types.includes(t));
      if (missing.length > 0)
        problems.push(
          `${key}: ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not offered in ${zone}; pick types offered in every zone of aws.zones, or other zones`,
        );
    }
  }
  return problems;
}

/** vCPUs of an instance size: medium 1, large 2, xlarge 4, Nxlarge 4N; metal counted as 64. */
export function vcpusOf(instanceType: string): number {
  const size = instanceType.split(".")[1] ?? "";
  if (size === "medium") return 1;
  if (size === "large") return 2;
  if (size === "xlarge") return 4;
  const n = /^(\d+)xlarge$/.exec(size);
  if (n) return 4 * Number(n[1]);
  return 64;
}

/** Pods of one shape that fit one node of an allocatable capacity. */
function podsPerNode(allocatable: Allocatable, pod: { cpuMillicores: number; memoryBytes: number }): number {
  return Math.floor(Math.min(allocatable.cpuMillicores / pod.cpuMillicores, allocatable.memoryBytes / pod.memoryBytes));
}

export interface VcpuEstimate {
  /** System node group: count × vCPUs of its type. */
  system: number;
  /** Valkey pods, packed in the cheapest way the permitted types allow. */
  valkeyMin: number;
  /** Valkey pods, packed in the worst way one permitted type allows (capped by the NodePool's limits.cpu). */
  valkeyMax: number;
  /** The benchmark pod's own node (0 when off): the smallest permitted type at least, the largest at most. */
  benchmarkMin: number;
  benchmarkMax: number;
  /** system + valkeyMin + benchmarkMin: below this the stack cannot run. */
  min: number;
  /** system + valkeyMax + benchmarkMax: Karpenter may provision up to this. */
  max: number;
  explain: string;
}

/**
 * vCPUs the stack's nodes may take from the regional On-Demand Standard quota.
 *
 * The system node group is fixed: `count × vCPU(instanceType)` (none under Auto Mode). The Valkey pods are spread over
 * `aws.zones` with a hard topology spread, so zone z holds `ceil` or `floor` of pods / zones pods,
 * and a node hosts `podsPerNode(type)` of them (allocatable after kube-reserved, DaemonSets and
 * VM overhead, as config/instance-types.ts computes it). If Karpenter used only `type`, zone z
 * takes `ceil(pods_z / podsPerNode(type))` nodes of `vCPU(type)` each. Karpenter launches from
 * the whole permitted list, so the cheapest choice over the types is the least the stack can
 * need (`valkeyMin`), and the largest over the types is the worst case (`valkeyMax`), capped by
 * the NodePool's `limits.cpu` (Karpenter stops launching there). The benchmark pod may land on
 * a node of its own: the smallest permitted type that fits it at least, the largest at most.
 * Unknown types (not in the capacity table) are counted as one pod per node.
 */
export function estimateVcpus(config: StackConfig): VcpuEstimate {
  const { eks, karpenter, valkey, benchmark, aws } = config;
  // Auto Mode: no system node group; its built-in system pool starts nodes only for pods that
  // tolerate CriticalAddonsOnly, and this stack runs none.
  const system = eks.autoMode ? 0 : eks.systemNodes.count * vcpusOf(eks.systemNodes.instanceType);
  const pod = valkey.resourceAmounts.requests;
  const zones = aws.zones.length;
  const perZone = Array.from({ length: zones }, (_, i) => Math.floor(valkey.pods / zones) + (i < valkey.pods % zones ? 1 : 0));
  const options = karpenter.nodePool.permittedInstanceTypes.flatMap((type) => {
    const allocatable = allocatableFor(type);
    const fit = allocatable ? podsPerNode(allocatable, pod) : 1;
    if (fit < 1) return [];
    return [{ type, vcpu: perZone.reduce((sum, n) => sum + Math.ceil(n / fit) * vcpusOf(type), 0) }];
  });
  const cap = Math.ceil(karpenter.nodePool.limits.amounts.cpuMillicores / 1000);
  const valkeyMin = options.length === 0 ? 0 : Math.min(...options.map((o) => o.vcpu));
  const valkeyMax = options.length === 0 ? 0 : Math.min(cap, Math.max(...options.map((o) => o.vcpu)));
  const sizes = karpenter.nodePool.permittedInstanceTypes.map(vcpusOf);
  const benchmarkMin = benchmark.enabled && sizes.length > 0 ? Math.min(...sizes) : 0;
  const benchmarkMax = benchmark.enabled && sizes.length > 0 ? Math.max(...sizes) : 0;
  const explain =
    (eks.autoMode ? "Auto Mode, no system nodes, " : `${eks.systemNodes.count} × ${eks.systemNodes.instanceType} system = ${system}, `) +
    `${valkey.pods} Valkey pod${valkey.pods === 1 ? "" : "s"} over ${zones} zone${zones === 1 ? "" : "s"} = ${valkeyMin}–${valkeyMax}` +
    (benchmark.enabled ? `, benchmark node = ${benchmarkMin}–${benchmarkMax}` : "");
  return { system, valkeyMin, valkeyMax, benchmarkMin, benchmarkMax, min: system + valkeyMin + benchmarkMin, max: system + valkeyMax + benchmarkMax, explain };
}

export interface QuotaVerdict {
  error?: string;
  warning?: string;
}

/**
 * The quota is regional and shared with every running On-Demand Standard instance of the
 * account, which this check cannot see: below the least the stack needs is an error, below the
 * worst case a warning.
 */
export function checkQuota(region: string, quotaVcpus: number, estimate: VcpuEstimate): QuotaVerdict {
  const raise = (n: number) =>
    `request an increase: aws service-quotas request-service-quota-increase --service-code ec2 --quota-code ${ON_DEMAND_STANDARD_VCPU_QUOTA} --desired-value ${n} --region ${region}`;
  const head = `EC2 quota ${ON_DEMAND_STANDARD_VCPU_QUOTA} (Running On-Demand Standard instances) in ${region} is ${quotaVcpus} vCPUs`;
  if (quotaVcpus < estimate.min) {
    return {
      error: `${head}; this stack needs at least ${estimate.min} vCPUs (${estimate.explain}), plus whatever else runs in the account; ${raise(estimate.max)}`,
    };
  }
  if (quotaVcpus < estimate.max) {
    return {
      warning: `${head}; this stack may need up to ${estimate.max} vCPUs (${estimate.explain}) depending on the types Karpenter picks, plus whatever else runs in the account; ${raise(estimate.max)}`,
    };
  }
  return {};
}
