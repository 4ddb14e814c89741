/**
 * `vbench aws-check`: the pure account checks (service-linked roles, EKS support window), the
 * report from recorded AWS answers, and the command end to end through the real AWS CLI against a
 * moto server the test starts (moto's own answers and error texts: what it implements, it answers
 * as AWS does; what it does not, the check must say it could not read).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkServiceLinkedRoles,
  checkSupportWindow,
  requiredServiceLinkedRoles,
} from "../../components/capacity/account-check.js";
import { parseStackConfig } from "../../config/schema.js";
import type { AwsCli, AwsCliResult } from "../../stacks/aws-cli.js";
import { awsCheckFailed, collectAwsCheck, renderAwsCheck } from "../../stacks/aws-check.js";
import { s3ToolsMissing, startMoto, type MotoServer } from "../support/moto-server.js";
import { runVbench } from "../support/verify-helpers.js";
import { runAwsCheckCommand } from "../../apps/vbench/aws-check-command.js";
import { UsageError } from "../../apps/vbench/errors.js";

const now = new Date("2026-11-29T00:00:00Z");

describe("where eks.version stands in EKS's support window", () => {
  const v = (status: string, endStandard?: string | number, endExtended?: string) => [
    {
      clusterVersion: "1.36",
      versionStatus: status,
      endOfStandardSupportDate: endStandard,
      endOfExtendedSupportDate: endExtended,
    },
  ];
  it.each([
    ["standard, ending in a year", v("STANDARD_SUPPORT", "2027-11-30T00:00:00+00:00"), [], []],
    [
      "standard, ending in 30 days",
      v("STANDARD_SUPPORT", "2026-12-29T00:00:00+00:00"),
      [],
      [/standard support for 1\.36 ends 2026-12-29; after that the control plane bills \$0\.60\/h/],
    ],
    [
      "standard, end as epoch seconds (the API's form)",
      v("STANDARD_SUPPORT", Date.parse("2026-12-01T00:00:00Z") / 1000),
      [],
      [/ends 2026-12-01/],
    ],
    [
      "extended",
      v("EXTENDED_SUPPORT", "2026-07-01T00:00:00+00:00", "2027-07-01T00:00:00+00:00"),
      [],
      [/extended support until 2027-07-01: its control plane bills \$0\.60\/h instead of \$0\.10\/h/],
    ],
    ["unsupported", v("UNSUPPORTED"), [/eks\.version: 1\.36 is no longer supported by EKS/], []],
    ["the deprecated status field alone", [{ clusterVersion: "1.36", status: "extended-support" }], [], [/extended/]],
    ["not offered", [{ clusterVersion: "1.35", versionStatus: "STANDARD_SUPPORT" }], [/does not offer 1\.36/], []],
  ])("%s", (_name, versions, problems, warnings) => {
    const r = checkSupportWindow("1.36", versions, now);
    expect(r.problems.length).toBe(problems.length);
    problems.forEach((p, i) => expect(r.problems[i]).toMatch(p));
    expect(r.warnings.length).toBe(warnings.length);
    warnings.forEach((w, i) => expect(r.warnings[i]).toMatch(w));
  });
});

describe("the service-linked roles", () => {
  const managed = parseStackConfig({ platform: "eks" }).config;
  const auto = parseStackConfig({ platform: "eks", eks: { autoMode: true } }).config;

  it("needs EKS's role, and the node groups' only with a system node group", () => {
    expect(requiredServiceLinkedRoles(managed).map((r) => r.roleName)).toEqual([
      "AWSServiceRoleForAmazonEKS",
      "AWSServiceRoleForAmazonEKSNodegroup",
    ]);
    expect(requiredServiceLinkedRoles(auto).map((r) => r.service)).toEqual(["eks.amazonaws.com"]);
  });

  it("warns for a missing or unreadable role with the command that creates it, never a problem", () => {
    const r = checkServiceLinkedRoles(requiredServiceLinkedRoles(managed), {
      "eks.amazonaws.com": { exists: true },
      "eks-nodegroup.amazonaws.com": { exists: false },
    });
    expect(r.problems).toEqual([]);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(
      /AWSServiceRoleForAmazonEKSNodegroup does not exist yet: .*iam:CreateServiceLinkedRole.*aws iam create-service-linked-role --aws-service-name eks-nodegroup\.amazonaws\.com/,
    );
    const denied = checkServiceLinkedRoles(requiredServiceLinkedRoles(auto), {
      "eks.amazonaws.com": { error: "AccessDenied" },
    });
    expect(denied.warnings[0]).toMatch(
      /could not list the service-linked role AWSServiceRoleForAmazonEKS \(AccessDenied\)/,
    );
  });
});

describe("the report from recorded AWS answers", () => {
  const { config } = parseStackConfig({
    platform: "eks",
    aws: { region: "us-west-2", zones: ["us-west-2a", "us-west-2b", "us-west-2c"] },
  });
  /** Answers by the first two CLI words; records every call. */
  const recorded = (answers: Record<string, AwsCliResult>) => {
    const calls: string[][] = [];
    const cli: AwsCli = (args) => {
      calls.push([...args]);
      return answers[args.slice(0, 2).join(" ")] ?? { ok: false, error: `unexpected call: aws ${args.join(" ")}` };
    };
    return { cli, calls };
  };
  const healthy: Record<string, AwsCliResult> = {
    "sts get-caller-identity": { ok: true, json: { Arn: "arn:aws:iam::123456789012:user/deployer" } },
    "ec2 describe-availability-zones": {
      ok: true,
      json: { AvailabilityZones: ["a", "b", "c", "d"].map((z) => ({ ZoneName: `us-west-2${z}`, State: "available" })) },
    },
    "ec2 describe-instance-type-offerings": {
      ok: true,
      json: {
        InstanceTypeOfferings: ["m7g.large", "r7g.large", "r7g.xlarge", "r7g.2xlarge"].map((t) => ({
          InstanceType: t,
        })),
      },
    },
    "service-quotas get-service-quota": { ok: true, json: { Quota: { QuotaCode: "L-1216C47A", Value: 640.0 } } },
    "iam list-roles": { ok: true, json: { Roles: [{ RoleName: "AWSServiceRoleForAmazonEKS" }] } },
    "eks describe-cluster-versions": {
      ok: true,
      json: {
        clusterVersions: [
          {
            clusterVersion: "1.36",
            versionStatus: "STANDARD_SUPPORT",
            endOfStandardSupportDate: "2027-08-01T00:00:00+00:00",
          },
        ],
      },
    },
    "ssm get-parameter": { ok: true, json: { Parameter: { Value: "ami-0123456789abcdef0" } } },
  };

  it("every row ok on a ready account, each asked once per zone or role with the stack's exact names", () => {
    const { cli, calls } = recorded(healthy);
    const report = collectAwsCheck(config, cli, now);
    expect(report.rows.map((r) => [r.check, r.verdict])).toEqual([
      ["credentials", "ok"],
      ["zones", "ok"],
      ["instance-types", "ok"],
      ["vcpu-quota", "ok"],
      ["service-linked-roles", "ok"],
      ["eks-version", "ok"],
      ["ami", "ok"],
    ]);
    expect(awsCheckFailed(report)).toBe(false);
    expect(calls.filter((c) => c[1] === "describe-instance-type-offerings").map((c) => c[5])).toEqual([
      "Name=location,Values=us-west-2a",
      "Name=location,Values=us-west-2b",
      "Name=location,Values=us-west-2c",
    ]);
    expect(calls.filter((c) => c[0] === "iam").map((c) => c[3])).toEqual([
      "/aws-service-role/eks.amazonaws.com/",
      "/aws-service-role/eks-nodegroup.amazonaws.com/",
    ]);
    expect(calls.find((c) => c[0] === "service-quotas")).toContain("L-1216C47A");
  });

  it("a quota below the stack's vCPUs is a problem naming the quota and the increase command; unreadable zones leave the types unchecked, not ok; bad credentials stop at the first row", () => {
    const { cli } = recorded({
      ...healthy,
      "service-quotas get-service-quota": { ok: true, json: { Quota: { Value: 4 } } },
    });
    const report = collectAwsCheck(config, cli, now);
    const quota = report.rows.find((r) => r.check === "vcpu-quota");
    expect(quota?.verdict).toBe("problem");
    expect(quota?.messages[0]).toMatch(/L-1216C47A .* is 4 vCPUs.*request-service-quota-increase/);
    expect(awsCheckFailed(report)).toBe(true);
    expect(renderAwsCheck(report)).toMatch(/^PROBLEM vcpu-quota: /m);

    const noZones = collectAwsCheck(
      config,
      recorded({
        ...healthy,
        "ec2 describe-availability-zones": { ok: false, error: "An error occurred (UnauthorizedOperation)" },
      }).cli,
      now,
    );
    expect(noZones.rows.find((r) => r.check === "zones")?.verdict).toBe("problem");
    // Never an "ok" for types it could not look up.
    expect(noZones.rows.find((r) => r.check === "instance-types")).toEqual({
      check: "instance-types",
      verdict: "warning",
      messages: ["not checked: none of aws.zones (us-west-2a, us-west-2b, us-west-2c) is an available zone read above"],
    });

    const none = collectAwsCheck(
      config,
      recorded({ "sts get-caller-identity": { ok: false, error: "Unable to locate credentials." } }).cli,
      now,
    );
    expect(none.rows).toEqual([
      {
        check: "credentials",
        verdict: "problem",
        messages: ["aws sts get-caller-identity: Unable to locate credentials."],
      },
    ]);
  });
});

describe("vbench aws-check's refusals (exit 2)", () => {
  it.each([
    ["a byo stack", "stacks/Pulumi.byo.yaml", /platform byo creates no AWS account resources/],
    ["a missing file", "stacks/Pulumi.nope.yaml", /stacks\/Pulumi\.nope\.yaml: .*no such file/],
  ])("%s", async (_what, file, message) => {
    let thrown: unknown;
    try {
      await runAwsCheckCommand({ file });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    expect((thrown as UsageError).exitCode).toBe(2);
    expect((thrown as Error).message).toMatch(message);
  });
});

const missing = s3ToolsMissing();
describe.skipIf(missing !== undefined)("vbench aws-check through the AWS CLI against moto (real processes)", () => {
  let moto: MotoServer;
  const dir = mkdtempSync(join(tmpdir(), "aws-check-"));
  const env = {
    ...process.env,
    AWS_ACCESS_KEY_ID: "testing",
    AWS_SECRET_ACCESS_KEY: "testing",
    AWS_CONFIG_FILE: join(dir, "no-config"),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, "no-credentials"),
    PATH: `${join(process.env.AWS_CLI ?? "/usr/bin/aws", "..")}:${process.env.PATH ?? ""}`,
  };
  const aws = (...args: string[]) =>
    spawnSync(process.env.AWS_CLI as string, [...args, "--region", "us-west-2", "--endpoint-url", moto.url], {
      env,
      encoding: "utf8",
    });
  const stack = (name: string, extra: string) => {
    const file = join(dir, `Pulumi.${name}.yaml`);
    writeFileSync(file, `config:\n  aws:region: us-west-2\n  valkey-on-eks:platform: eks\n${extra}`);
    return file;
  };
  const vbench = async (file: string) => {
    const r = await runVbench(["aws-check", "--file", file, "--json", "--endpoint-url", moto.url], env, 120_000);
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      rows: Array<{ check: string; verdict: string; messages: string[] }>;
    };
    return { status: r.code, report, stderr: r.stderr };
  };

  beforeAll(async () => {
    moto = await startMoto("127.0.0.96");
    expect(aws("iam", "create-service-linked-role", "--aws-service-name", "eks.amazonaws.com").status).toBe(0);
  }, 60_000);
  afterAll(async () => moto?.stop());

  it("an Auto Mode stack in moto's us-west-2: ready (exit 0), with what moto cannot answer said as warnings", async () => {
    const file = stack(
      "auto",
      "  valkey-on-eks:aws:\n    region: us-west-2\n    zones: [us-west-2a, us-west-2b, us-west-2c]\n  valkey-on-eks:eks:\n    autoMode: true\n",
    );
    const { status, report, stderr } = await vbench(file);
    expect(status, stderr).toBe(0);
    const verdicts = Object.fromEntries(report.rows.map((r) => [r.check, r.verdict]));
    expect(verdicts).toEqual({
      "credentials": "ok",
      "zones": "ok",
      "instance-types": "ok",
      // moto 5.2.5 has no EC2 quotas and no DescribeClusterVersions: read as "could not read".
      "vcpu-quota": "warning",
      "service-linked-roles": "ok",
      "eks-version": "warning",
    });
    expect(report.rows.find((r) => r.check === "vcpu-quota")?.messages[0]).toMatch(
      /could not read EC2 quota L-1216C47A/,
    );
  }, 120_000);

  it("a zone the region lacks, a role not created and an AMI release SSM does not have: exit 1, each named", async () => {
    const file = stack(
      "bad",
      "  valkey-on-eks:aws:\n    region: us-west-2\n    zones: [us-west-2a, us-west-2b, us-west-2z]\n",
    );
    const { status, report } = await vbench(file);
    expect(status).toBe(1);
    expect(report.ok).toBe(false);
    const row = (c: string) => report.rows.find((r) => r.check === c);
    expect(row("zones")?.messages[0]).toMatch(/aws\.zones\.2: "us-west-2z" is not an available zone of us-west-2/);
    expect(row("service-linked-roles")?.messages.join("\n")).toMatch(
      /AWSServiceRoleForAmazonEKSNodegroup does not exist yet/,
    );
    // moto's real ParameterNotFound for the pinned release (it reserves /aws/service names: none exist).
    expect(row("ami")?.verdict).toBe("problem");
    expect(row("ami")?.messages[0]).toMatch(/karpenter\.amiAlias "al2023@.*" has no arm64 AL2023 AMI for eks\.version/);
  }, 120_000);
});
