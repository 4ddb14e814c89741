/**
 * `pulumi up` entry point: loads and validates the stack config (every problem by key path,
 * before any resource exists); on platform eks checks the AWS CLI, builds the one AWS provider
 * and runs the preview-time AWS checks (zones, instance type offerings, vCPU quota); on byo checks
 * the cluster's zones, StorageClass and NetworkPolicy engine (stacks/byo-preflight.ts), and with a
 * managed Karpenter NodePool its AMI alias against the version the cluster runs; then runs
 * the program. Nothing happens at import time: Pulumi calls the default export.
 */
import type * as aws from "@pulumi/aws";
import { loadPulumiConfig } from "./pulumi-config.js";
import type { AmiParameterProbe, AwsCliProbe, KubeVersionProbe } from "../components/capacity/preflight.js";
import type { StackConfig } from "../config/types.js";
import { probeKubeVersion } from "./kube-version.js";
import { preflightByo, probeByoCluster, type ByoFactsProbe } from "./byo-preflight.js";
import {
  createAwsProvider,
  preflightByoNodePool,
  preflightEks,
  probeAmiParameterCli,
  probeAwsCli,
  requireAwsCli,
} from "./preflight.js";
import { runProgram } from "./program.js";

/** What the byo checks read: the cluster (its version, nodes, classes) and the AMI parameter (AWS CLI). */
export interface ByoProbes {
  kubeVersion: (config: StackConfig) => Promise<KubeVersionProbe>;
  cluster: (config: StackConfig) => Promise<ByoFactsProbe>;
  amiParameter: (config: StackConfig) => (alias: string, kubernetesVersion: string) => AmiParameterProbe;
}

const BYO_PROBES: ByoProbes = {
  kubeVersion: probeKubeVersion,
  cluster: probeByoCluster,
  amiParameter: (config) => (alias, version) => probeAmiParameterCli(alias, version, config),
};

/** The stack program, its probes of this machine and of a byo cluster injectable (tests); Pulumi runs `main`. */
export async function runStack(
  probe: () => AwsCliProbe = probeAwsCli,
  byo: Partial<ByoProbes> = {},
): Promise<Record<string, unknown>> {
  const loaded = loadPulumiConfig();
  const config = loaded.config;
  const probes = { ...BYO_PROBES, ...byo };
  let awsProvider: aws.Provider | undefined;
  if (config.platform === "eks") {
    requireAwsCli(probe());
    awsProvider = createAwsProvider(config);
    await preflightEks(config, awsProvider);
  } else {
    preflightByo(config, await probes.cluster(config));
    // The stack writes the EC2NodeClass: its AMI alias must exist for the version the cluster runs.
    if (config.byo.manageKarpenterNodePool)
      preflightByoNodePool(config, await probes.kubeVersion(config), probes.amiParameter(config));
  }
  const out = runProgram({ config, password: loaded.passwordSecret, awsProvider });
  return { report: out.report, kubeconfig: out.kubeconfig, password: out.password };
}

export default function main(): Promise<Record<string, unknown>> {
  return runStack();
}
