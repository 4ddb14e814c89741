/**
 * `vbench aws-check --file stacks/Pulumi.<stack>.yaml [--json] [--endpoint-url URL]`: before any
 * `up`, reads the stack's account with the AWS CLI (the credentials the CLI finds, the stack's
 * region and profile) and reports each check: credentials, zones, instance type offerings, the EC2
 * vCPU quota, the service-linked roles, `eks.version`'s support window and the AMI release
 * (stacks/aws-check.ts). Creates nothing. Exit 0 when no check found a problem (warnings are
 * printed), 1 when one did, 2 for an unreadable or invalid stack file, or a byo stack.
 */
import type { Command } from "commander";
import { awsCli, cliOptionsOf } from "../../stacks/aws-cli.js";
import { CheckFailed, UsageError } from "./errors.js";
import { stackConfigOrUsage } from "./stack-file.js";

interface AwsCheckOptions {
  file: string;
  json?: boolean;
  endpointUrl?: string;
}

export async function runAwsCheckCommand(options: AwsCheckOptions): Promise<void> {
  const config = stackConfigOrUsage(options.file);
  if (config.platform !== "eks")
    throw new UsageError(
      `${options.file}: platform ${config.platform} creates no AWS account resources; aws-check reads what platform eks needs`,
    );
  // The check reads the program's own preflight (the Pulumi SDK with it): loaded for this command, not with the CLI.
  const { awsCheckFailed, collectAwsCheck, renderAwsCheck } = await import("../../stacks/aws-check.js");
  const report = collectAwsCheck(config, awsCli(cliOptionsOf(config, options.endpointUrl)));
  const failed = awsCheckFailed(report);
  if (options.json === true) process.stdout.write(`${JSON.stringify({ ok: !failed, ...report }, null, 2)}\n`);
  else process.stdout.write(`${renderAwsCheck(report)}\n`);
  if (failed) {
    const error = new CheckFailed(
      `${options.file}: the account is not ready for this stack (${report.rows
        .filter((r) => r.verdict === "problem")
        .map((r) => r.check)
        .join(", ")})`,
    );
    throw options.json === true ? error.markReported() : error;
  }
}

export function registerAwsCheckCommand(program: Command): void {
  program
    .command("aws-check")
    .description("before any up: read the stack's AWS account (quota, roles, version, AMI, zones) with the AWS CLI")
    .requiredOption("--file <path>", "the stack file, e.g. stacks/Pulumi.cluster.yaml")
    .option("--json", "print JSON: { ok, caller, region, rows: [{ check, verdict, messages }] }")
    .option("--endpoint-url <url>", "send every AWS call to this endpoint (a local AWS API such as moto)")
    .action((options: AwsCheckOptions) => runAwsCheckCommand(options));
}
