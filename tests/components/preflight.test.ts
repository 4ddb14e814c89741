/**
 * The pure preview-time checks of platform eks (components/capacity/preflight.ts), the AWS CLI probe
 * with an injected spawnSync, the new credential/endpoint config keys and their rules, and the
 * cluster arguments they feed.
 */
import type { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  amiAliasParameter,
  amiReleasesCommand,
  checkAmiAlias,
  checkAwsCli,
  checkOfferings,
  checkQuota,
  checkZonesAvailable,
  estimateVcpus,
  isParameterNotFound,
  vcpusOf,
} from "../../components/capacity/preflight.js";
import { loadStackFile, parseStackConfig, rawFromPulumiConfig } from "../../config/schema.js";
import { awsProviderArgs, probeAwsCli, requireAwsCli } from "../../stacks/preflight.js";
import { defaultClusterArgs } from "../support/eks-fixtures.js";
import { configIssues } from "../support/stack-config.js";

const issuesOf = (raw: unknown): string[] => configIssues(raw).map((i) => `${i.path}: ${i.message}`);

describe("AWS CLI check", () => {
  it("names the missing tool and where to install it", () => {
    const msg = checkAwsCli({ found: false, error: "`aws` is not on PATH" });
    expect(msg).toMatch(/AWS CLI v2 \(`aws`\)/);
    expect(msg).toContain("aws eks get-token");
    expect(msg).toContain("https://docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html");
  });

  it("refuses AWS CLI v1 and unrecognised output, accepts v2", () => {
    expect(checkAwsCli({ found: true, output: "aws-cli/1.29.0 Python/3.8.10 Linux/5.15 botocore/1.31.0\n" })).toMatch(
      /found aws-cli\/1\.29\.0/,
    );
    expect(checkAwsCli({ found: true, output: "something else" })).toMatch(/printed "something else"/);
    expect(
      checkAwsCli({ found: true, output: "aws-cli/2.17.40 Python/3.11.9 Linux/6.8 exe/x86_64.ubuntu.24\n" }),
    ).toBeUndefined();
  });

  it("probes `aws --version` without a shell and maps ENOENT, a failed exit and stderr output", () => {
    const calls: unknown[][] = [];
    const fake = (result: object) =>
      ((...args: unknown[]) => {
        calls.push(args);
        return result;
      }) as unknown as typeof spawnSync;
    const enoent = Object.assign(new Error("spawnSync aws ENOENT"), { code: "ENOENT" });
    expect(probeAwsCli(fake({ error: enoent }))).toEqual({ found: false, error: "`aws` is not on PATH" });
    expect(calls[0]?.slice(0, 2)).toEqual(["aws", ["--version"]]);
    expect(probeAwsCli(fake({ status: 1, stdout: "", stderr: "boom" }))).toEqual({
      found: false,
      error: "exit 1: boom",
    });
    expect(probeAwsCli(fake({ status: 0, stdout: "", stderr: "aws-cli/1.18.0 Python/2.7" }))).toEqual({
      found: true,
      output: "aws-cli/1.18.0 Python/2.7",
    });
    expect(() => requireAwsCli({ found: false, error: "`aws` is not on PATH" })).toThrow(/AWS CLI v2/);
    expect(() => requireAwsCli({ found: true, output: "aws-cli/2.0.0" })).not.toThrow();
  });
});

describe("the pinned AMI release per Kubernetes version", () => {
  it("is the SSM parameter Karpenter resolves (amifamily/al2023.go resolvePath), arm64 standard", () => {
    // The AMI name as amazon-eks-ami's CHANGELOG lists it for release v20260714, Kubernetes 1.36.
    expect(amiAliasParameter("al2023@v20260714", "1.36")).toBe(
      "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.36-v20260714/image_id",
    );
    expect(amiAliasParameter("al2023@latest", "1.35")).toBe(
      "/aws/service/eks/optimized-ami/1.35/amazon-linux-2023/arm64/standard/recommended/image_id",
    );
    expect(() => amiAliasParameter("al2@latest", "1.36")).toThrow(/al2023@latest or al2023@vYYYYMMDD/);
  });

  it("a missing parameter names both keys and the command that lists valid releases; an unreadable one only warns", () => {
    const { error, warning } = checkAmiAlias("al2023@v20260714", "1.37", "us-west-2", { found: false });
    expect(warning).toBeUndefined();
    expect(error).toContain(
      'karpenter.amiAlias "al2023@v20260714" has no arm64 AL2023 AMI for eks.version 1.37 in us-west-2',
    );
    expect(error).toContain("amazon-eks-node-al2023-arm64-standard-1.37-v20260714/image_id does not exist");
    expect(error).toContain(amiReleasesCommand("1.37", "us-west-2"));
    expect(amiReleasesCommand("1.37", "us-west-2")).toBe(
      'aws ssm get-parameters-by-path --path /aws/service/eks/optimized-ami/1.37/amazon-linux-2023/arm64/standard --recursive --region us-west-2 --query "Parameters[].Name" --output text',
    );
    expect(checkAmiAlias("al2023@v20260714", "1.36", "us-west-2", { found: true })).toEqual({});
    const unreadable = checkAmiAlias("al2023@v20260714", "1.36", "us-west-2", {
      error: "AccessDeniedException: not authorized to perform ssm:GetParameter",
    });
    expect(unreadable.error).toBeUndefined();
    expect(unreadable.warning).toMatch(
      /^could not read SSM parameter \/aws\/service\/eks\/optimized-ami\/1\.36\/.*AccessDeniedException.*cannot confirm karpenter\.amiAlias/,
    );
  });

  it("tells ParameterNotFound from other errors", () => {
    expect(isParameterNotFound("ParameterNotFound: ")).toBe(true);
    expect(isParameterNotFound("reading SSM Parameter (/aws/x): couldn't find resource")).toBe(true);
    expect(isParameterNotFound("AccessDeniedException: User is not authorized to perform: ssm:GetParameter")).toBe(
      false,
    );
  });
});

describe("zones, offerings, quota", () => {
  it("reports a configured zone the region does not offer this account", () => {
    expect(
      checkZonesAvailable(
        "us-west-2",
        ["us-west-2a", "us-west-2e"],
        ["us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"],
      ),
    ).toEqual([
      'aws.zones.1: "us-west-2e" is not an available zone of us-west-2 for this account (available: us-west-2a, us-west-2b, us-west-2c, us-west-2d)',
    ]);
    expect(checkZonesAvailable("us-west-2", ["us-west-2a"], ["us-west-2a"])).toEqual([]);
  });

  it("names the key, the type and the zone it is missing in", () => {
    const required = [
      { key: "eks.systemNodes.instanceType", types: ["m7g.large"] },
      { key: "karpenter.nodePool (permitted instance types)", types: ["r7g.large", "r8gn.large"] },
    ];
    expect(
      checkOfferings(required, { "us-east-1a": ["m7g.large", "r7g.large", "r8gn.large"], "us-east-1e": ["r7g.large"] }),
    ).toEqual([
      "eks.systemNodes.instanceType: m7g.large is not offered in us-east-1e; pick types offered in every zone of aws.zones, or other zones",
      "karpenter.nodePool (permitted instance types): r8gn.large is not offered in us-east-1e; pick types offered in every zone of aws.zones, or other zones",
    ]);
  });

  it("counts vCPUs by size", () => {
    expect([
      vcpusOf("r7g.medium"),
      vcpusOf("r7g.large"),
      vcpusOf("m7g.xlarge"),
      vcpusOf("r7g.2xlarge"),
      vcpusOf("r7g.16xlarge"),
    ]).toEqual([1, 2, 4, 8, 64]);
  });

  it("estimates the cluster stack: 2 m7g.large + 6 pods on r7g.large (one per node) + a benchmark node", () => {
    const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
    expect(config.karpenter.nodePool.permittedInstanceTypes).toEqual(["r7g.large"]);
    const estimate = estimateVcpus(config);
    expect(estimate).toMatchObject({
      system: 4,
      valkeyMin: 12,
      valkeyMax: 12,
      benchmarkMin: 2,
      benchmarkMax: 2,
      min: 18,
      max: 18,
    });
  });

  it("spans the cheapest and worst packing over the default types, capped by limits.cpu", () => {
    // Replication, 4 members of 1 vCPU / 12Gi over 3 zones (2+1+1) + 3 Sentinels + 2 HAProxy
    // (components/capacity/): least = 6 × r7g.large (Sentinels beside members, HAProxy on 2 nodes of
    // its own, the benchmark beside one) = 12; worst = 7 × r7g.2xlarge (Sentinels kept off the
    // members as Karpenter treats the preference) = 56.
    const { config } = parseStackConfig({});
    expect(estimateVcpus(config)).toMatchObject({
      system: 4,
      valkeyMin: 12,
      valkeyMax: 56,
      benchmarkMin: 0,
      benchmarkMax: 0,
      min: 16,
      max: 60,
    });
    const capped = parseStackConfig({ karpenter: { nodePool: { limits: { cpu: "16" } } } }).config;
    expect(estimateVcpus(capped).valkeyMax).toBe(16);
  });

  it("fails below the least the stack needs, warns below the worst case, names the quota and numbers", () => {
    const estimate = estimateVcpus(parseStackConfig({}).config);
    const low = checkQuota("us-west-2", 5, estimate);
    expect(low.error).toMatch(
      /^EC2 quota L-1216C47A \(Running On-Demand Standard instances\) in us-west-2 is 5 vCPUs; this stack needs at least 16 vCPUs/,
    );
    expect(low.error).toContain("--quota-code L-1216C47A --desired-value 60 --region us-west-2");
    const mid = checkQuota("us-west-2", 32, estimate);
    expect(mid.error).toBeUndefined();
    expect(mid.warning).toMatch(/may need up to 60 vCPUs/);
    expect(checkQuota("us-west-2", 60, estimate)).toEqual({});
  });
});

describe("credential and endpoint config", () => {
  it("validates aws.profile, aws.roleArn, eks.adminPrincipalArns and eks.publicAccessCidrs", () => {
    expect(issuesOf({ aws: { roleArn: "deployer" } })).toEqual([
      expect.stringMatching(/^aws\.roleArn: must be an IAM role ARN/),
    ]);
    expect(issuesOf({ aws: { profile: "my profile" } })).toEqual([
      expect.stringMatching(/^aws\.profile: must be a profile name/),
    ]);
    expect(issuesOf({ eks: { adminPrincipalArns: ["arn:aws:iam::123456789012:group/ops"] } })).toEqual([
      expect.stringMatching(/^eks\.adminPrincipalArns\.0: must be an IAM role or user ARN/),
    ]);
    expect(issuesOf({ eks: { publicAccessCidrs: ["203.0.113.0/33"] } })).toEqual([
      expect.stringMatching(/^eks\.publicAccessCidrs\.0: must be an IPv4 CIDR/),
    ]);
    const { config } = parseStackConfig({
      aws: { profile: "ops", roleArn: "arn:aws:iam::123456789012:role/deployer" },
      eks: { adminPrincipalArns: ["arn:aws:iam::123456789012:user/alice"] },
    });
    expect(config.aws).toMatchObject({ profile: "ops", roleArn: "arn:aws:iam::123456789012:role/deployer" });
    expect(config.eks.publicAccessCidrs).toEqual(["0.0.0.0/0"]);
    expect(config.eks.adminPrincipalArns).toEqual(["arn:aws:iam::123456789012:user/alice"]);
  });

  it("names the aws:* credential keys the stack's own AWS provider would ignore", () => {
    const { raw, issues } = rawFromPulumiConfig({
      "aws:region": "eu-west-1",
      "aws:profile": "ops",
      "aws:assumeRole": "{}",
      "aws:skipMetadataApiCheck": "false",
      "valkey-on-eks:platform": "eks",
    });
    expect(raw).toEqual({ "aws:region": "eu-west-1", "platform": "eks" });
    expect(issues).toEqual([
      {
        path: "aws:profile",
        message: "is not read by the stack's AWS provider; set valkey-on-eks:aws.profile (the kubeconfig uses it too)",
      },
      {
        path: "aws:assumeRole",
        message:
          "is not read by the stack's AWS provider; set valkey-on-eks:aws.roleArn (the kubeconfig assumes it too)",
      },
    ]);
  });

  it("refuses a private-only endpoint unless the checks connect directly, saying why", () => {
    const issues = issuesOf({ eks: { publicEndpoint: false } });
    expect(issues).toEqual([
      expect.stringMatching(
        /^eks\.publicEndpoint: false needs checks\.connector: direct: .*cannot reach the API from outside the VPC; run `pulumi up` from inside the VPC/,
      ),
    ]);
    expect(issuesOf({ eks: { publicEndpoint: false }, checks: { connector: "direct" } })).toEqual([]);
    expect(issuesOf({ platform: "byo", eks: { publicEndpoint: false } })).toEqual([]);
  });

  it("builds the AWS provider and the kubeconfig credentials from the same keys", () => {
    const { config } = parseStackConfig({
      "aws:region": "eu-west-1",
      "aws": { profile: "ops", roleArn: "arn:aws:iam::123456789012:role/deployer" },
    });
    expect(awsProviderArgs(config)).toEqual({
      region: "eu-west-1",
      profile: "ops",
      assumeRoles: [{ roleArn: "arn:aws:iam::123456789012:role/deployer", sessionName: "valkey-on-eks" }],
    });
    expect(awsProviderArgs(parseStackConfig({}).config)).toEqual({ region: "us-west-2" });
    const args = defaultClusterArgs({
      eks: { ...config.eks, publicAccessCidrs: ["203.0.113.0/24"] },
      credentials: { profile: "ops", roleArn: "arn:aws:iam::123456789012:role/deployer" },
    });
    expect(args.providerCredentialOpts).toEqual({
      profileName: "ops",
      roleArn: "arn:aws:iam::123456789012:role/deployer",
    });
    expect(args.publicAccessCidrs).toEqual(["203.0.113.0/24"]);
    const ambient = defaultClusterArgs({ eks: { ...config.eks, publicEndpoint: false } });
    expect(ambient.providerCredentialOpts).toBeUndefined();
    expect(ambient.publicAccessCidrs).toBeUndefined();
  });
});
