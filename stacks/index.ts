/**
 * `pulumi up` entry point: loads and validates the stack config (every problem by key path,
 * before any resource exists); on platform eks checks the AWS CLI, builds the one AWS provider
 * and runs the preview-time AWS checks (zones, instance type offerings, vCPU quota); then runs
 * the program. Nothing happens at import time: Pulumi calls the default export.
 */
import type * as aws from "@pulumi/aws";
import { loadPulumiConfig } from "./pulumi-config.js";
import type { AwsCliProbe } from "../components/capacity/preflight.js";
import { preflightEks, createAwsProvider, probeAwsCli, requireAwsCli } from "./preflight.js";
import { runProgram } from "./program.js";

/** The stack program with its machine probe injectable (tests); `main` is what Pulumi runs. */
export async function runStack(probe: () => AwsCliProbe = probeAwsCli): Promise<Record<string, unknown>> {
  const loaded = loadPulumiConfig();
  let awsProvider: aws.Provider | undefined;
  if (loaded.config.platform === "eks") {
    requireAwsCli(probe());
    awsProvider = createAwsProvider(loaded.config);
    await preflightEks(loaded.config, awsProvider);
  }
  const out = runProgram({ config: loaded.config, password: loaded.passwordSecret, awsProvider });
  return { report: out.report, kubeconfig: out.kubeconfig, password: out.password };
}

export default function main(): Promise<Record<string, unknown>> {
  return runStack();
}
