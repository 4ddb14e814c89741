/**
 * Pure preview-time checks for platform eks: the AWS CLI the kubeconfig needs, the zones, the
 * instance types offered in them, the pinned AMI release for the Kubernetes version, and the EC2
 * vCPU quota. Each takes the result of a probe or an
 * invoke as plain data and returns the problems as messages naming the key, tool, zone, type or
 * quota and the number needed; stacks/preflight.ts does the probing and the invokes.
 */
import type { Packing } from "./bin-packing.js";
import { describeNodes, estimateNodes, vcpusOf, vcpusOfNodes } from "./estimate.js";
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
  if (!match)
    return `platform eks needs the AWS CLI v2: \`aws --version\` printed "${probe.output.trim().slice(0, 80)}", not aws-cli/2.x; ${how}`;
  if (Number(match[1]) < 2)
    return `platform eks needs the AWS CLI v2 for \`aws eks get-token\`; found aws-cli/${match[1]}.${match[2]}.${match[3]}; ${how}`;
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
      : [
          `aws.zones.${index}: "${zone}" is not an available zone of ${region} for this account (available: ${available.join(", ") || "none"})`,
        ],
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

/**
 * The SSM parameter Karpenter resolves an AL2023 alias through, for the Valkey pool's arm64
 * standard AMI on `kubernetesVersion`. Karpenter's pkg/providers/amifamily/al2023.go
 * (`resolvePath`, github.com/aws/karpenter-provider-aws at versions.env KARPENTER_CHART_VERSION):
 * `/aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/<arch>/<variant>/<name>/image_id`,
 * `<name>` being `recommended` for `al2023@latest` and
 * `amazon-eks-node-al2023-<arch>-<variant>-<k8s>-<version>` for `al2023@<version>`. EKS publishes a
 * release's AMIs per Kubernetes version, so a pin that exists for one `eks.version` may not exist
 * for the next: Karpenter then finds no AMI ("failed to discover any AMIs for alias") and
 * launches no node.
 */
export function amiAliasParameter(
  alias: string,
  kubernetesVersion: string,
  arch = "arm64",
  variant = "standard",
): string {
  const m = /^al2023@(latest|v\d{8})$/.exec(alias);
  if (!m) throw new Error(`AMI alias "${alias}" must be al2023@latest or al2023@vYYYYMMDD`);
  const version = m[1] as string;
  const name =
    version === "latest" ? "recommended" : `amazon-eks-node-al2023-${arch}-${variant}-${kubernetesVersion}-${version}`;
  return `/aws/service/eks/optimized-ami/${kubernetesVersion}/amazon-linux-2023/${arch}/${variant}/${name}/image_id`;
}

/** The command that lists the AL2023 arm64 releases EKS publishes for a Kubernetes version in a region. */
export function amiReleasesCommand(kubernetesVersion: string, region: string): string {
  return `aws ssm get-parameters-by-path --path /aws/service/eks/optimized-ami/${kubernetesVersion}/amazon-linux-2023/arm64/standard --recursive --region ${region} --query "Parameters[].Name" --output text`;
}

/** What reading the alias's SSM parameter gave: found, missing, or an error that says neither. */
export type AmiParameterProbe = { found: true } | { found: false } | { error: string };

/** An error text of the SSM GetParameter call that means "no such parameter" (the AWS API's ParameterNotFound). */
export function isParameterNotFound(message: string): boolean {
  return /ParameterNotFound|couldn't find resource/i.test(message);
}

/**
 * The pinned `karpenter.amiAlias` must exist for `eks.version`: a missing parameter is an error
 * naming both keys and the command that lists valid releases; an unreadable one (e.g. no
 * ssm:GetParameter) a warning.
 */
export function checkAmiAlias(
  alias: string,
  kubernetesVersion: string,
  region: string,
  probe: AmiParameterProbe,
): { error?: string; warning?: string } {
  const parameter = amiAliasParameter(alias, kubernetesVersion);
  const list = `list the releases for ${kubernetesVersion}: ${amiReleasesCommand(kubernetesVersion, region)}`;
  if ("error" in probe) {
    return {
      warning: `could not read SSM parameter ${parameter} (${probe.error}); cannot confirm karpenter.amiAlias "${alias}" exists for eks.version ${kubernetesVersion}; ${list}`,
    };
  }
  if (probe.found) return {};
  return {
    error:
      `karpenter.amiAlias "${alias}" has no arm64 AL2023 AMI for eks.version ${kubernetesVersion} in ${region} (SSM parameter ${parameter} does not exist): ` +
      `Karpenter would launch no Valkey node. Set karpenter.amiAlias to a release published for ${kubernetesVersion} (bump both keys together); ${list}`,
  };
}

/** What reading the stack's EKS cluster gave: its Kubernetes version, no such cluster (a first `up`), or an error. */
export type LiveClusterProbe = { found: true; version: string } | { found: false } | { error: string };

/** An error text of reading an EKS cluster that means "no such cluster" (EKS's ResourceNotFoundException). */
export function isClusterNotFound(message: string): boolean {
  return /couldn't find resource|ResourceNotFoundException|No cluster found/i.test(message);
}

const minorOf = (version: string): number | undefined => {
  const m = /^1\.(\d+)$/.exec(version.trim());
  return m === null ? undefined : Number(m[1]);
};

/**
 * `eks.version` against the version the stack's cluster runs now. Newer live: EKS upgraded it by
 * itself (standard support ended under `eks.supportType` STANDARD), and applying the config would
 * ask EKS for a downgrade, which it refuses mid-`up`; so the preview refuses first, naming the key.
 * More than one minor ahead of the live cluster: EKS upgrades one minor at a time. No cluster yet
 * (a first `up`): nothing to compare. Unreadable: a warning.
 */
export function checkLiveClusterVersion(
  configured: string,
  clusterName: string,
  probe: LiveClusterProbe,
): { error?: string; warning?: string } {
  if ("error" in probe)
    return {
      warning: `could not read EKS cluster ${clusterName} (${probe.error}); cannot confirm it still runs eks.version ${configured}`,
    };
  if (!probe.found) return {};
  const live = minorOf(probe.version);
  const wanted = minorOf(configured);
  if (live === undefined || wanted === undefined || live === wanted) return {};
  if (live > wanted)
    return {
      error:
        `eks.version is ${configured} but cluster ${clusterName} runs ${probe.version}: EKS upgraded it (eks.supportType STANDARD upgrades a version whose standard support ended), ` +
        `and applying ${configured} would ask EKS for a downgrade, which it refuses. Set eks.version to ${probe.version} ` +
        `(with a karpenter.chartVersion that supports it and a karpenter.amiAlias published for it) and preview again`,
    };
  if (wanted - live > 1)
    return {
      error: `eks.version is ${configured} but cluster ${clusterName} runs ${probe.version}: EKS upgrades one minor version at a time; set eks.version to 1.${live + 1}, up, then go on`,
    };
  return {};
}

/** The Kubernetes version a cluster's API server reports (`/version`), as `1.36`, or why it could not be read. */
export type KubeVersionProbe = { version: string } | { error: string };

/** `major.minor` of `/version`'s fields; EKS reports a minor such as `36+`. */
export function kubernetesVersionOf(v: { major: string; minor: string }): KubeVersionProbe {
  const major = /^\d+/.exec(v.major)?.[0];
  const minor = /^\d+/.exec(v.minor)?.[0];
  return major === undefined || minor === undefined
    ? { error: `the API server reports version major ${JSON.stringify(v.major)}, minor ${JSON.stringify(v.minor)}` }
    : { version: `${major}.${minor}` };
}

export { vcpusOf };

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
 * The system node group is fixed: `count × vCPU(instanceType)`. Every pod the stack puts on the
 * Valkey pool (members, Sentinels, HAProxy, the benchmark's client pods, the drill's load pod,
 * with their requests, anti-affinity and zone spread as rendered) is bin-packed against the
 * allocatable model of config/instance-types.ts (components/capacity/): `valkeyMin`/`benchmarkMin`
 * are the least packing (smallest fitting types, preferences relaxed), `valkeyMax`/`benchmarkMax`
 * the worst (one permitted type throughout, preferences as Karpenter treats them: required),
 * the release's nodes capped by the NodePool's `limits.cpu` (Karpenter stops launching there).
 * Under Auto Mode, `system` is what add-on pods would need on EKS's built-in system pool.
 */
export function estimateVcpus(config: StackConfig): VcpuEstimate {
  const { eks, karpenter, valkey, aws } = config;
  const nodes = estimateNodes(config);
  const system = eks.autoMode
    ? vcpusOfNodes(nodes.autoModeSystem.nodes)
    : eks.systemNodes.count * vcpusOf(eks.systemNodes.instanceType);
  const release = (p: Packing) => p.nodes.filter((n) => n.phase === "release");
  const clients = (p: Packing) => p.nodes.filter((n) => n.phase !== "release");
  const cap = Math.ceil(karpenter.nodePool.limits.amounts.cpuMillicores / 1000);
  const valkeyMin = vcpusOfNodes(release(nodes.least));
  const valkeyMax = Math.min(cap, Math.max(valkeyMin, vcpusOfNodes(release(nodes.worst))));
  const benchmarkMin = vcpusOfNodes(clients(nodes.least));
  const benchmarkMax = Math.max(benchmarkMin, vcpusOfNodes(clients(nodes.worst)));
  const zones = aws.zones.length;
  const unschedulable =
    nodes.least.unschedulable.length > 0 ? ` (no permitted type fits: ${nodes.least.unschedulable.join(", ")})` : "";
  const explain =
    (eks.autoMode
      ? `Auto Mode system pool = ${system}, `
      : `${eks.systemNodes.count} × ${eks.systemNodes.instanceType} system = ${system}, `) +
    `${valkey.pods} Valkey pod${valkey.pods === 1 ? "" : "s"} (with Sentinels and HAProxy in replication mode) over ${zones} zone${zones === 1 ? "" : "s"} on ${describeNodes(release(nodes.least))} = ${valkeyMin}–${valkeyMax}` +
    (benchmarkMax > 0 ? `, benchmark/drill client nodes = ${benchmarkMin}–${benchmarkMax}` : "") +
    unschedulable;
  return {
    system,
    valkeyMin,
    valkeyMax,
    benchmarkMin,
    benchmarkMax,
    min: system + valkeyMin + benchmarkMin,
    max: system + valkeyMax + benchmarkMax,
    explain,
  };
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

/** An image in ECR: `<account>.dkr.ecr.<region>.amazonaws.com/<repository>[:tag][@sha256:…]`. */
export interface EcrImage {
  registryId: string;
  region: string;
  repository: string;
  tag?: string;
  digest?: string;
}

/** The ECR parts of an image reference, or undefined when it is not in ECR. */
export function ecrImage(ref: string): EcrImage | undefined {
  const m =
    /^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com\/([a-z0-9._/-]+?)(?::([\w][\w.-]{0,127}))?(?:@(sha256:[0-9a-f]{64}))?$/.exec(
      ref,
    );
  if (m === null) return undefined;
  const [, registryId = "", region = "", repository = "", tag, digest] = m;
  return {
    registryId,
    region,
    repository,
    ...(tag === undefined ? {} : { tag }),
    ...(digest === undefined ? {} : { digest }),
  };
}

/** What reading the loadgen image from ECR said. */
export type EcrImageProbe = { found: true } | { found: false } | { error: string };

/** `aws ecr describe-images` says ImageNotFoundException / RepositoryNotFoundException. */
export function isImageNotFound(message: string): boolean {
  return /ImageNotFound|RepositoryNotFound|couldn't find resource/i.test(message);
}

/**
 * benchmark.loadgenImage at preview: an ECR image of the stack's region must exist (error naming
 * the key and the push command); one that cannot be read, or one in another registry, is a warning
 * saying what was not checked.
 */
export function checkLoadgenImage(
  ref: string,
  region: string,
  probe: EcrImageProbe | undefined,
): { error?: string; warning?: string } {
  const push = `npm run loadgen:image -- --push ${ref} (docs/deploy-on-aws.md, "The load generator's image")`;
  const ecr = ecrImage(ref);
  if (ecr === undefined || probe === undefined)
    return {
      warning: `benchmark.loadgenImage ${ref} is not checked at preview (${ecr === undefined ? "not an ECR image" : `an ECR image of ${ecr.region}, the stack is in ${region}`}): make sure the nodes can pull it`,
    };
  if ("error" in probe)
    return {
      warning: `could not read benchmark.loadgenImage ${ref} from ECR (${probe.error}); the benchmark Job's init container needs it`,
    };
  return probe.found ? {} : { error: `benchmark.loadgenImage: ${ref} is not in ECR; build and push it: ${push}` };
}
