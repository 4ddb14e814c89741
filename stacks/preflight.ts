/**
 * What platform eks checks before any cluster resource: the AWS CLI v2 on this machine, the
 * explicit AWS provider built from the validated `aws` keys (region, profile, role), and, through
 * invokes on that provider, the zones, the instance types offered in them, the version the stack's
 * cluster runs when it exists already (EKS), the pinned AMI release for `eks.version` (SSM), the
 * load generator's image when a mix runs (ECR) and the EC2 vCPU quota; on byo with a managed
 * NodePool, the AMI release for the version the cluster runs (through the AWS CLI: byo has no AWS
 * provider).
 * Thin wiring over the pure checks in components/capacity/preflight.ts; every failure is a
 * `pulumi.RunError` (printed without a stack trace) naming the key, tool, zone, type or quota.
 */
import { spawnSync } from "node:child_process";
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import {
  ON_DEMAND_STANDARD_VCPU_QUOTA,
  amiAliasParameter,
  checkAdminPrincipals,
  checkAmiAlias,
  checkAwsCli,
  checkLiveClusterVersion,
  isClusterNotFound,
  type LiveClusterProbe,
  checkLoadgenImage,
  ecrImage,
  isImageNotFound,
  type EcrImageProbe,
  checkOfferings,
  checkQuota,
  checkZonesAvailable,
  estimateVcpus,
  isParameterNotFound,
  type AmiParameterProbe,
  type KubeVersionProbe,
  type AwsCliProbe,
} from "../components/capacity/preflight.js";
import type { StackConfig } from "../config/types.js";
import { defaultClusterName } from "../components/eks-cluster.js";
import { awsCli, cliOptionsOf, type AwsCli } from "./aws-cli.js";

/** Runs `aws --version` (no shell); ENOENT and a non-zero exit are "not found". */
export function probeAwsCli(run: typeof spawnSync = spawnSync): AwsCliProbe {
  const result = run("aws", ["--version"], { encoding: "utf8", timeout: 15_000 });
  if (result.error)
    return {
      found: false,
      error: (result.error as NodeJS.ErrnoException).code === "ENOENT" ? "`aws` is not on PATH" : result.error.message,
    };
  if (result.status !== 0)
    return { found: false, error: `exit ${String(result.status)}: ${String(result.stderr).trim().slice(0, 200)}` };
  return { found: true, output: `${String(result.stdout)}${String(result.stderr)}` };
}

/** @throws pulumi.RunError naming the missing tool and how to install it. */
export function requireAwsCli(probe: AwsCliProbe = probeAwsCli()): void {
  const problem = checkAwsCli(probe);
  if (problem !== undefined) throw new pulumi.RunError(problem);
}

/** The AWS provider's arguments: the validated region, and the profile / role when configured. */
export function awsProviderArgs(config: StackConfig): aws.ProviderArgs {
  const { region, profile, roleArn } = config.aws;
  return {
    region,
    ...(profile === undefined ? {} : { profile }),
    ...(roleArn === undefined ? {} : { assumeRoles: [{ roleArn, sessionName: "valkey-on-eks" }] }),
  };
}

/** The one AWS provider every AWS resource and invoke of the stack uses. */
export function createAwsProvider(config: StackConfig): aws.Provider {
  return new aws.Provider("aws", awsProviderArgs(config));
}

/** The instance types that must be offered in every configured zone, by the key that sets them. */
export function requiredInstanceTypes(config: StackConfig): Array<{ key: string; types: string[] }> {
  const pool = {
    key: "karpenter.nodePool (permitted instance types)",
    types: [...config.karpenter.nodePool.permittedInstanceTypes],
  };
  // Auto Mode has no system node group (EKS picks its built-in system pool's types).
  return config.eks.autoMode
    ? [pool]
    : [{ key: "eks.systemNodes.instanceType", types: [config.eks.systemNodes.instanceType] }, pool];
}

export interface PreflightResult {
  problems: string[];
  warnings: string[];
}

/** Runs the invokes and the pure checks; returns problems instead of throwing (see {@link preflightEks}). */
export async function collectPreflight(config: StackConfig, provider: aws.Provider): Promise<PreflightResult> {
  const opts = { provider };
  const { region, zones } = config.aws;
  const problems: string[] = [];
  const warnings: string[] = [];

  // Who deploys: also proves the credentials work before anything is created.
  const caller = await aws.getCallerIdentity({}, opts);
  const deployer = caller.arn.includes(":assumed-role/")
    ? (await aws.iam.getSessionContext({ arn: caller.arn }, opts)).issuerArn
    : caller.arn;
  void pulumi.log.info(`AWS preflight: deploying as ${deployer} in ${region}`);
  problems.push(...checkAdminPrincipals(deployer, config.eks.adminPrincipalArns));

  const available = await aws.getAvailabilityZones({ state: "available" }, opts);
  const zoneProblems = checkZonesAvailable(region, zones, available.names);
  problems.push(...zoneProblems);

  const required = requiredInstanceTypes(config);
  const allTypes = [...new Set(required.flatMap((r) => r.types))];
  const offered: Record<string, string[]> = {};
  for (const zone of zones.filter((z) => available.names.includes(z))) {
    const result = await aws.ec2.getInstanceTypeOfferings(
      {
        locationType: "availability-zone",
        filters: [
          { name: "location", values: [zone] },
          { name: "instance-type", values: allTypes },
        ],
      },
      opts,
    );
    offered[zone] = result.instanceTypes;
  }
  problems.push(...checkOfferings(required, offered));

  const clusterName = defaultClusterName(pulumi.getStack());
  const live = checkLiveClusterVersion(config.eks.version, clusterName, await probeLiveCluster(clusterName, provider));
  if (live.error !== undefined) problems.push(live.error);
  if (live.warning !== undefined) warnings.push(live.warning);

  // Auto Mode picks its own AMIs: its NodeClass has no alias.
  if (!config.eks.autoMode) {
    const ami = checkAmiAlias(
      config.karpenter.amiAlias,
      config.eks.version,
      region,
      await probeAmiParameter(config.karpenter.amiAlias, config.eks.version, provider),
    );
    if (ami.error !== undefined) problems.push(ami.error);
    if (ami.warning !== undefined) warnings.push(ami.warning);
  }

  const loadgen = config.benchmark.loadgenImage;
  if (config.benchmark.enabled && config.benchmark.mix !== undefined && loadgen !== undefined) {
    const image = checkLoadgenImage(loadgen, region, await probeEcrImage(loadgen, region, provider));
    if (image.error !== undefined) problems.push(image.error);
    if (image.warning !== undefined) warnings.push(image.warning);
  }

  const estimate = estimateVcpus(config);
  try {
    const quota = await aws.servicequotas.getServiceQuota(
      { serviceCode: "ec2", quotaCode: ON_DEMAND_STANDARD_VCPU_QUOTA },
      opts,
    );
    const verdict = checkQuota(region, quota.value, estimate);
    if (verdict.error !== undefined) problems.push(verdict.error);
    if (verdict.warning !== undefined) warnings.push(verdict.warning);
  } catch (err) {
    // Reading quotas needs servicequotas:GetServiceQuota, which a deployer may lack: say so, go on.
    warnings.push(
      `could not read EC2 quota ${ON_DEMAND_STANDARD_VCPU_QUOTA} in ${region} (${(err as Error).message.split("\n")[0]}); this stack needs ${estimate.min}–${estimate.max} vCPUs of it`,
    );
  }
  return { problems, warnings };
}

/** Reads the Kubernetes version the stack's EKS cluster runs now (aws.eks.getCluster); not found on a first `up`. */
export async function probeLiveCluster(clusterName: string, provider: aws.Provider): Promise<LiveClusterProbe> {
  try {
    const cluster = await aws.eks.getCluster({ name: clusterName }, { provider });
    return { found: true, version: cluster.version };
  } catch (err) {
    const message = (err as Error).message.split("\n")[0] ?? "";
    return isClusterNotFound(message) ? { found: false } : { error: message };
  }
}

/** Reads the SSM parameter Karpenter resolves `alias` through for a Kubernetes version (aws.ssm.getParameter). */
export async function probeAmiParameter(
  alias: string,
  kubernetesVersion: string,
  provider: aws.Provider,
): Promise<AmiParameterProbe> {
  try {
    await aws.ssm.getParameter({ name: amiAliasParameter(alias, kubernetesVersion) }, { provider });
    return { found: true };
  } catch (err) {
    const message = (err as Error).message.split("\n")[0] ?? "";
    return isParameterNotFound(message) ? { found: false } : { error: message };
  }
}

/** Reads an ECR image of the stack's region (aws.ecr.getImage); undefined when `ref` is no such image. */
export async function probeEcrImage(
  ref: string,
  region: string,
  provider: aws.Provider,
): Promise<EcrImageProbe | undefined> {
  const ecr = ecrImage(ref);
  if (ecr === undefined || ecr.region !== region) return undefined;
  try {
    await aws.ecr.getImage(
      {
        registryId: ecr.registryId,
        repositoryName: ecr.repository,
        ...(ecr.digest === undefined ? { imageTag: ecr.tag ?? "latest" } : { imageDigest: ecr.digest }),
      },
      { provider },
    );
    return { found: true };
  } catch (err) {
    const message = (err as Error).message.split("\n")[0] ?? "";
    return isImageNotFound(message) ? { found: false } : { error: message };
  }
}

/** Logs the warnings; @throws pulumi.RunError listing every problem. */
function reportPreflight({ problems, warnings }: PreflightResult): void {
  for (const warning of warnings) void pulumi.log.warn(warning);
  if (problems.length > 0)
    throw new pulumi.RunError(
      `AWS preflight failed (nothing was created):\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
}

/**
 * The preview-time checks of platform eks.
 * @throws pulumi.RunError listing every problem, before any cluster resource is registered.
 */
export async function preflightEks(config: StackConfig, provider: aws.Provider): Promise<void> {
  reportPreflight(await collectPreflight(config, provider));
}

/**
 * Reads the SSM parameter Karpenter resolves `alias` through with the AWS CLI (`aws ssm
 * get-parameter`, the `aws` keys' region and profile): a byo stack registers no AWS provider (it
 * creates no AWS resource), so this read goes around Pulumi. No CLI, or any other failure: an
 * error the check turns into a warning.
 */
export function probeAmiParameterCli(
  alias: string,
  kubernetesVersion: string,
  config: StackConfig,
  run: typeof spawnSync = spawnSync,
): AmiParameterProbe {
  return probeAmiParameterWith(awsCli(cliOptionsOf(config), run), alias, kubernetesVersion);
}

/** The AWS CLI options of a stack: its region and profile. */

/** Reads the SSM parameter Karpenter resolves `alias` through for a Kubernetes version, with `cli`. */
export function probeAmiParameterWith(cli: AwsCli, alias: string, kubernetesVersion: string): AmiParameterProbe {
  const result = cli(["ssm", "get-parameter", "--name", amiAliasParameter(alias, kubernetesVersion)]);
  if (result.ok) return { found: true };
  return isParameterNotFound(result.error) ? { found: false } : { error: result.error };
}

/**
 * Platform byo with `byo.manageKarpenterNodePool`: the EC2NodeClass's `karpenter.amiAlias` must
 * exist for the Kubernetes version the cluster runs (there is no `eks.version` on byo: the version
 * is read from the cluster's API server).
 */
export function collectByoNodePoolPreflight(
  config: StackConfig,
  kubeVersion: KubeVersionProbe,
  amiParameter: (alias: string, kubernetesVersion: string) => AmiParameterProbe,
): PreflightResult {
  const alias = config.karpenter.amiAlias;
  if ("error" in kubeVersion)
    return {
      problems: [],
      warnings: [
        `could not read the Kubernetes version of the byo cluster (${kubeVersion.error}); cannot confirm karpenter.amiAlias "${alias}" exists for it`,
      ],
    };
  const ami = checkAmiAlias(alias, kubeVersion.version, config.aws.region, amiParameter(alias, kubeVersion.version));
  return {
    problems: ami.error === undefined ? [] : [`${ami.error} (the byo cluster runs ${kubeVersion.version})`],
    warnings: ami.warning === undefined ? [] : [ami.warning],
  };
}

/** @throws pulumi.RunError naming the alias and the cluster's version, before any resource is registered. */
export function preflightByoNodePool(
  config: StackConfig,
  kubeVersion: KubeVersionProbe,
  amiParameter: (alias: string, kubernetesVersion: string) => AmiParameterProbe,
): void {
  reportPreflight(collectByoNodePoolPreflight(config, kubeVersion, amiParameter));
}
