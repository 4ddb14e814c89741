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
import type { AwsCliProbe, KubeVersionProbe } from "../components/capacity/preflight.js";
import type { StackConfig } from "../config/types.js";
import { probeKubeVersion } from "./kube-version.js";
import { preflightByo, probeByoCluster, type ByoFactsProbe } from "./byo-preflight.js";
import { preflightByoNodePool, preflightEks, createAwsProvider, probeAwsCli, requireAwsCli } from "./preflight.js";
import { runProgram } from "./program.js";

/** The stack program, its probes of this machine and of a byo cluster injectable (tests); Pulumi runs `main`. */
export async function runStack(
  probe: () => AwsCliProbe = probeAwsCli,
  kubeVersion: (config: StackConfig) => Promise<KubeVersionProbe> = probeKubeVersion,
  byoCluster: (config: StackConfig) => Promise<ByoFactsProbe> = probeByoCluster,
): Promise<Record<string, unknown>> {
  const loaded = loadPulumiConfig();
  let awsProvider: aws.Provider | undefined;
  if (loaded.config.platform === "eks") {
    requireAwsCli(probe());
    awsProvider = createAwsProvider(loaded.config);
    await preflightEks(loaded.config, awsProvider);
  } else {
    preflightByo(loaded.config, await byoCluster(loaded.config));
    if (loaded.config.byo.manageKarpenterNodePool) {
      // The stack writes the EC2NodeClass: its AMI alias must exist for the version the cluster runs.
      awsProvider = createAwsProvider(loaded.config);
      await preflightByoNodePool(loaded.config, awsProvider, await kubeVersion(loaded.config));
    }
  }
  const out = runProgram({ config: loaded.config, password: loaded.passwordSecret, awsProvider });
  return { report: out.report, kubeconfig: out.kubeconfig, password: out.password };
}

export default function main(): Promise<Record<string, unknown>> {
  return runStack();
}
