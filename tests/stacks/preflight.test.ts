/**
 * Platform eks under Pulumi mocks: the preflight's invokes (zones, instance type offerings per
 * zone, the vCPU quota) go to the stack's own AWS provider and fail naming the zone, type or
 * quota; and the program hands that provider to every AWS resource, including the ones awsx and
 * pulumi-eks create (their components get it in their providers map), whatever AWS_REGION says.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { kubernetesVersionOf } from "../../components/capacity/preflight.js";
import {
  EKS_GET_KUBECONFIG,
  awsMockInvokes,
  awsMockOutputs,
  installMocks,
  mockKubeconfig,
  settle,
} from "../support/pulumi-mocks.js";

const ZONES_TOKEN = "aws:index/getAvailabilityZones:getAvailabilityZones";
const OFFERINGS_TOKEN = "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings";
const QUOTA_TOKEN = "aws:servicequotas/getServiceQuota:getServiceQuota";
const CALLER_TOKEN = "aws:index/getCallerIdentity:getCallerIdentity";
const SESSION_TOKEN = "aws:iam/getSessionContext:getSessionContext";
const SSM_TOKEN = "aws:ssm/getParameter:getParameter";
const ECR_TOKEN = "aws:ecr/getImage:getImage";
const EKS_TOKEN = "aws:eks/getCluster:getCluster";

/** The account the mocks answer for: zones, what each zone offers, and the vCPU quota. */
const account = {
  zones: ["eu-west-1a", "eu-west-1b", "eu-west-1c"],
  offered: {} as Record<string, string[]>,
  quota: 64 as number | Error,
  caller: "arn:aws:sts::123456789012:assumed-role/deployer/session-1",
  /** The AL2023 arm64 releases SSM publishes, by Kubernetes version; an Error: the read fails. */
  amiReleases: {} as Record<string, string[]> | Error,
  /** The ECR images of the account, `<repository>:<tag>`; an Error: the read fails. */
  ecrImages: [] as string[] | Error,
  /** The Kubernetes version the stack's cluster runs; undefined: no such cluster yet; an Error: the read fails. */
  liveCluster: undefined as string | undefined | Error,
};
const RELEASES = { "1.35": ["v20260625", "v20260714"], "1.36": ["v20260714"] };
const ALL_TYPES = ["m7g.large", "r7g.large", "r7g.xlarge", "r7g.2xlarge"];

const recorder = installMocks({
  outputs: awsMockOutputs,
  invokes: {
    ...awsMockInvokes,
    [CALLER_TOKEN]: () => ({
      accountId: "123456789012",
      arn: account.caller,
      userId: "AROAEXAMPLE:session-1",
      id: "123456789012",
    }),
    [SESSION_TOKEN]: (inputs) => {
      const m = /^arn:aws:sts::(\d+):assumed-role\/([^/]+)\/(.+)$/.exec(String(inputs.arn));
      if (!m) throw new Error(`not a session ARN: ${String(inputs.arn)}`);
      return {
        arn: inputs.arn,
        issuerArn: `arn:aws:iam::${m[1]}:role/${m[2]}`,
        issuerId: "AROAEXAMPLE",
        issuerName: m[2],
        sessionName: m[3],
      };
    },
    [ZONES_TOKEN]: () => ({
      names: account.zones,
      zoneIds: account.zones.map((_, i) => `euw1-az${i + 1}`),
      state: "available",
    }),
    [OFFERINGS_TOKEN]: (inputs) => {
      const filters = inputs.filters as Array<{ name: string; values: string[] }>;
      const zone = filters.find((f) => f.name === "location")?.values[0] ?? "";
      const wanted = filters.find((f) => f.name === "instance-type")?.values ?? [];
      const types = (account.offered[zone] ?? ALL_TYPES).filter((t) => wanted.includes(t));
      return {
        instanceTypes: types,
        locations: types.map(() => zone),
        locationTypes: types.map(() => "availability-zone"),
      };
    },
    [SSM_TOKEN]: (inputs) => {
      if (account.amiReleases instanceof Error) throw account.amiReleases;
      const m =
        /^\/aws\/service\/eks\/optimized-ami\/([\d.]+)\/amazon-linux-2023\/arm64\/standard\/amazon-eks-node-al2023-arm64-standard-\1-(v\d{8})\/image_id$/.exec(
          String(inputs.name),
        );
      if (!m || !(account.amiReleases[m[1] as string] ?? []).includes(m[2] as string))
        throw new Error(`ParameterNotFound: ${String(inputs.name)}`);
      return {
        name: inputs.name,
        type: "String",
        value: "ami-0123456789abcdef0",
        arn: `arn:aws:ssm:eu-west-1::parameter${String(inputs.name)}`,
      };
    },
    [ECR_TOKEN]: (inputs) => {
      if (account.ecrImages instanceof Error) throw account.ecrImages;
      const ref = `${String(inputs.repositoryName)}:${String(inputs.imageTag)}`;
      if (!account.ecrImages.includes(ref))
        throw new Error(
          `ImageNotFoundException: The image with imageId {imageTag:'${String(inputs.imageTag)}'} does not exist`,
        );
      return {
        registryId: inputs.registryId,
        repositoryName: inputs.repositoryName,
        imageTag: inputs.imageTag,
        imageDigest: `sha256:${"0".repeat(64)}`,
      };
    },
    [EKS_TOKEN]: (inputs) => {
      if (account.liveCluster instanceof Error) throw account.liveCluster;
      // The AWS provider's own text for a missing cluster (its eks_cluster data source, findClusterByName).
      if (account.liveCluster === undefined)
        throw new Error(`reading EKS Cluster (${String(inputs.name)}): couldn't find resource`);
      return { name: inputs.name, version: account.liveCluster, platformVersion: "eks.5", status: "ACTIVE" };
    },
    [QUOTA_TOKEN]: () => {
      if (account.quota instanceof Error) throw account.quota;
      return {
        value: account.quota,
        quotaName: "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances",
        adjustable: true,
      };
    },
  },
});

const { parseStackConfig, loadStackFile } = await import("../../config/schema.js");
const { collectPreflight, createAwsProvider, preflightEks, probeAmiParameterCli } =
  await import("../../stacks/preflight.js");
const { runProgram } = await import("../../stacks/program.js");
const { runStack } = await import("../../stacks/index.js");
const pulumi = await import("@pulumi/pulumi");

const PROVIDER_REF = /::pulumi:providers:aws::aws::aws-id$/;

beforeEach(() => {
  recorder.reset();
  account.zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"];
  account.offered = {};
  account.quota = 64;
  account.caller = "arn:aws:sts::123456789012:assumed-role/deployer/session-1";
  account.amiReleases = RELEASES;
  account.ecrImages = [];
  account.liveCluster = undefined;
});

describe("preflight invokes", () => {
  const { config } = parseStackConfig({ "aws:region": "eu-west-1" });

  it("passes on an account that offers everything, every invoke through the stack's provider", async () => {
    const provider = createAwsProvider(config);
    await expect(preflightEks(config, provider)).resolves.toBeUndefined();
    expect(recorder.calls).toEqual([
      CALLER_TOKEN,
      SESSION_TOKEN,
      ZONES_TOKEN,
      OFFERINGS_TOKEN,
      OFFERINGS_TOKEN,
      OFFERINGS_TOKEN,
      EKS_TOKEN,
      SSM_TOKEN,
      QUOTA_TOKEN,
    ]);
    for (const call of recorder.invokes) expect(call.provider, call.token).toMatch(PROVIDER_REF);
    const offerings = recorder.invokes.filter((c) => c.token === OFFERINGS_TOKEN).map((c) => c.inputs);
    expect(offerings[0]).toEqual({
      locationType: "availability-zone",
      filters: [
        { name: "location", values: ["eu-west-1a"] },
        { name: "instance-type", values: ["m7g.large", "r7g.large", "r7g.xlarge", "r7g.2xlarge"] },
      ],
    });
    expect(recorder.invokes.find((c) => c.token === QUOTA_TOKEN)?.inputs).toEqual({
      serviceCode: "ec2",
      quotaCode: "L-1216C47A",
    });
    expect(recorder.get("pulumi:providers:aws", "aws").inputs).toMatchObject({ region: "eu-west-1" });
  });

  it("names a zone the account lacks, a type a zone does not offer, and the quota with the vCPUs needed", async () => {
    account.zones = ["eu-west-1a", "eu-west-1b"];
    account.offered = { "eu-west-1b": ["m7g.large", "r7g.large", "r7g.xlarge"] };
    account.quota = 8;
    const { problems } = await collectPreflight(config, createAwsProvider(config));
    expect(problems).toEqual([
      'aws.zones.2: "eu-west-1c" is not an available zone of eu-west-1 for this account (available: eu-west-1a, eu-west-1b)',
      "karpenter.nodePool (permitted instance types): r7g.2xlarge is not offered in eu-west-1b; pick types offered in every zone of aws.zones, or other zones",
      expect.stringMatching(
        /^EC2 quota L-1216C47A .* in eu-west-1 is 8 vCPUs; this stack needs at least 16 vCPUs .*--desired-value 60 --region eu-west-1$/,
      ),
    ]);
    // No offerings invoke for the zone that does not exist.
    expect(recorder.calls.filter((t) => t === OFFERINGS_TOKEN)).toHaveLength(2);
  });

  it("throws a RunError listing every problem (no stack trace), and only warns when the quota cannot be read", async () => {
    account.quota = 4;
    const err = await preflightEks(config, createAwsProvider(config)).catch((e: unknown) => e);
    expect(pulumi.RunError.isInstance(err)).toBe(true);
    expect((err as Error).message).toMatch(
      /^AWS preflight failed \(nothing was created\):\n {2}- EC2 quota L-1216C47A/,
    );
    account.quota = new Error("AccessDeniedException: not authorized to perform servicequotas:GetServiceQuota");
    const result = await collectPreflight(config, createAwsProvider(config));
    expect(result.problems).toEqual([]);
    expect(result.warnings).toEqual([
      expect.stringMatching(/could not read EC2 quota L-1216C47A in eu-west-1 .*needs 16–60 vCPUs/),
    ]);
  });
});

describe("the live cluster's version against eks.version", () => {
  const { config } = parseStackConfig({ "aws:region": "eu-west-1", "eks": { version: "1.36" } });
  const run = () => collectPreflight(config, createAwsProvider(config));

  it("reads the stack's own cluster by its name; none yet (a first up) or the same version passes", async () => {
    expect((await run()).problems).toEqual([]);
    const read = recorder.invokes.filter((c) => c.token === EKS_TOKEN);
    expect(read.map((c) => c.inputs)).toEqual([{ name: `valkey-${pulumi.getStack()}` }]);
    expect(read[0]?.provider).toMatch(PROVIDER_REF);
    account.liveCluster = "1.36";
    expect(await run()).toEqual({ problems: [], warnings: [] });
  });

  it("refuses a cluster EKS upgraded by itself (the up would ask for a downgrade), naming eks.version and the live version", async () => {
    account.liveCluster = "1.37";
    const { problems } = await run();
    expect(problems).toEqual([
      expect.stringMatching(
        /^eks\.version is 1\.36 but cluster valkey-\S+ runs 1\.37: EKS upgraded it .*Set eks\.version to 1\.37 /,
      ),
    ]);
    const err = await preflightEks(config, createAwsProvider(config)).catch((e: unknown) => e);
    expect(pulumi.RunError.isInstance(err)).toBe(true);
  });

  it("a planned upgrade of one minor passes; of two is refused (EKS upgrades one at a time); an unreadable cluster warns", async () => {
    account.liveCluster = "1.35";
    expect((await run()).problems).toEqual([]);
    account.liveCluster = "1.34";
    expect((await run()).problems).toEqual([
      expect.stringMatching(/runs 1\.34: EKS upgrades one minor version at a time; set eks\.version to 1\.35/),
    ]);
    account.liveCluster = new Error("AccessDeniedException: not authorized to perform eks:DescribeCluster");
    const r = await run();
    expect(r.problems).toEqual([]);
    expect(r.warnings).toEqual([expect.stringMatching(/^could not read EKS cluster valkey-\S+ \(AccessDenied/)]);
  });
});

describe("the pinned AMI release for eks.version", () => {
  const ssmNames = () => recorder.invokes.filter((c) => c.token === SSM_TOKEN).map((c) => c.inputs.name);

  it("reads the exact parameter Karpenter resolves for karpenter.amiAlias, arm64, eks.version", async () => {
    const { config } = parseStackConfig({
      "aws:region": "eu-west-1",
      "eks": { version: "1.35" },
      "karpenter": { amiAlias: "al2023@v20260625" },
    });
    expect((await collectPreflight(config, createAwsProvider(config))).problems).toEqual([]);
    expect(ssmNames()).toEqual([
      "/aws/service/eks/optimized-ami/1.35/amazon-linux-2023/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.35-v20260625/image_id",
    ]);
    for (const call of recorder.invokes) expect(call.provider, call.token).toMatch(PROVIDER_REF);
  });

  it("an eks.version bump without a release for it fails the preview naming both keys and the command to list releases", async () => {
    // v20260625 exists for 1.35, not for 1.36: the pin of a stack upgraded by eks.version alone.
    const { config } = parseStackConfig({
      "aws:region": "eu-west-1",
      "eks": { version: "1.36" },
      "karpenter": { amiAlias: "al2023@v20260625" },
    });
    const err = await preflightEks(config, createAwsProvider(config)).catch((e: unknown) => e);
    expect(pulumi.RunError.isInstance(err)).toBe(true);
    const message = (err as Error).message;
    expect(message).toContain(
      'karpenter.amiAlias "al2023@v20260625" has no arm64 AL2023 AMI for eks.version 1.36 in eu-west-1',
    );
    expect(message).toContain(
      "aws ssm get-parameters-by-path --path /aws/service/eks/optimized-ami/1.36/amazon-linux-2023/arm64/standard --recursive --region eu-west-1",
    );
  });

  it("the default pin exists for the default version; an unreadable parameter warns; Auto Mode (no alias) asks nothing", async () => {
    const { config } = parseStackConfig({ "aws:region": "eu-west-1" });
    expect(await collectPreflight(config, createAwsProvider(config))).toEqual({ problems: [], warnings: [] });
    account.amiReleases = new Error("AccessDeniedException: not authorized to perform ssm:GetParameter");
    const unreadable = await collectPreflight(config, createAwsProvider(config));
    expect(unreadable.problems).toEqual([]);
    expect(unreadable.warnings).toEqual([
      expect.stringMatching(
        /^could not read SSM parameter .*AccessDeniedException.*cannot confirm karpenter\.amiAlias/,
      ),
    ]);
    recorder.reset();
    const auto = parseStackConfig({ "aws:region": "eu-west-1", "eks": { autoMode: true } }).config;
    await collectPreflight(auto, createAwsProvider(auto));
    expect(recorder.calls).not.toContain(SSM_TOKEN);
  });
});

describe("the load generator's image of a deployed mix (benchmark.loadgenImage)", () => {
  const ECR = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/vbench/vload";
  const mix = (loadgenImage: string) =>
    parseStackConfig({ "aws:region": "eu-west-1", "benchmark": { mix: "get:80,set:20", loadgenImage } }).config;

  it("an ECR image of the stack's region is read through the stack's provider; a missing one fails the preview naming the key and the push command", async () => {
    account.ecrImages = ["vbench/vload:512c32473f63"];
    const present = mix(`${ECR}:512c32473f63`);
    expect(await collectPreflight(present, createAwsProvider(present))).toEqual({ problems: [], warnings: [] });
    const read = recorder.invokes.find((c) => c.token === ECR_TOKEN);
    expect(read?.inputs).toEqual({
      registryId: "123456789012",
      repositoryName: "vbench/vload",
      imageTag: "512c32473f63",
    });
    expect(read?.provider).toMatch(PROVIDER_REF);
    const absent = mix(`${ECR}:0000000000aa`);
    const err = await preflightEks(absent, createAwsProvider(absent)).catch((e: unknown) => e);
    expect((err as Error).message).toContain(
      `benchmark.loadgenImage: ${ECR}:0000000000aa is not in ECR; build and push it: npm run loadgen:image -- --push ${ECR}:0000000000aa`,
    );
  });

  it("an unreadable image, another region's or another registry's only warns, saying it was not checked; no mix, no read", async () => {
    account.ecrImages = new Error("AccessDeniedException: not authorized to perform ecr:DescribeImages");
    const denied = await collectPreflight(mix(`${ECR}:1`), createAwsProvider(mix(`${ECR}:1`)));
    expect([denied.problems, denied.warnings]).toEqual([
      [],
      [expect.stringMatching(/^could not read benchmark\.loadgenImage .*AccessDeniedException/)],
    ]);
    const elsewhere = mix("123456789012.dkr.ecr.us-east-1.amazonaws.com/vload:1");
    expect((await collectPreflight(elsewhere, createAwsProvider(elsewhere))).warnings).toEqual([
      expect.stringMatching(/an ECR image of us-east-1, the stack is in eu-west-1/),
    ]);
    const other = mix("registry.example.com/vload:1");
    expect((await collectPreflight(other, createAwsProvider(other))).warnings).toEqual([
      expect.stringMatching(/not an ECR image\): make sure the nodes can pull it/),
    ]);
    recorder.reset();
    const { config } = parseStackConfig({ "aws:region": "eu-west-1" });
    await collectPreflight(config, createAwsProvider(config));
    expect(recorder.calls).not.toContain(ECR_TOKEN);
  });
});

describe("the deploying identity", () => {
  it("refuses the deployer (an assumed role, resolved to its role) listed in eks.adminPrincipalArns; a user ARN is compared as is", async () => {
    const admins = {
      eks: { adminPrincipalArns: ["arn:aws:iam::123456789012:role/oncall", "arn:aws:iam::123456789012:role/deployer"] },
    };
    const { config } = parseStackConfig({ "aws:region": "eu-west-1", ...admins });
    const { problems } = await collectPreflight(config, createAwsProvider(config));
    expect(problems).toEqual([
      expect.stringMatching(
        /^eks\.adminPrincipalArns\.1: arn:aws:iam::123456789012:role\/deployer is the identity running pulumi up/,
      ),
    ]);
    recorder.reset();
    account.caller = "arn:aws:iam::123456789012:user/alice";
    expect((await collectPreflight(config, createAwsProvider(config))).problems).toEqual([]);
    expect(recorder.calls).not.toContain(SESSION_TOKEN);
  });
});

describe("one AWS provider for the whole eks program", () => {
  it("every AWS resource and every awsx/pulumi-eks component uses the validated region's provider, whatever AWS_REGION says", async () => {
    const before = process.env.AWS_REGION;
    process.env.AWS_REGION = "ap-south-1";
    try {
      const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
      const awsProvider = createAwsProvider(config);
      runProgram({ stack: "cluster", config, password: pulumi.secret("pw"), awsProvider });
      await settle();
    } finally {
      if (before === undefined) delete process.env.AWS_REGION;
      else process.env.AWS_REGION = before;
    }
    // Besides the stack's provider, only the Pricing API's (its endpoint region; stacks/cost.ts), which no resource
    // uses.
    expect(recorder.ofType("pulumi:providers:aws").map((p) => [p.name, p.inputs.region])).toEqual([
      ["aws", "us-west-2"],
      ["pricing-api", "us-east-1"],
    ]);
    const custom = recorder.resources.filter((r) => r.type.startsWith("aws:"));
    expect(custom.length).toBeGreaterThan(15);
    for (const r of custom) expect(r.provider, `${r.type} ${r.name}`).toMatch(PROVIDER_REF);
    const remote = recorder.resources.filter((r) => /^(awsx|eks):/.test(r.type));
    expect(remote.map((r) => r.type).sort()).toEqual([
      "awsx:ec2:Vpc",
      "eks:index:Cluster",
      "eks:index:ManagedNodeGroup",
    ]);
    for (const r of remote) expect(r.providers?.aws, `${r.type} ${r.name}`).toMatch(PROVIDER_REF);
  });

  it("passes the profile / role to the cluster's kubeconfig, the endpoint CIDRs and the configured admins", async () => {
    const { config } = parseStackConfig({
      aws: { profile: "ops", roleArn: "arn:aws:iam::123456789012:role/deployer" },
      eks: { publicAccessCidrs: ["203.0.113.0/24"], adminPrincipalArns: ["arn:aws:iam::123456789012:role/oncall"] },
    });
    runProgram({ stack: "t", config, password: pulumi.secret("pw") });
    await settle();
    const cluster = recorder.get("eks:index:Cluster", "eks-cluster");
    expect(cluster.inputs.providerCredentialOpts).toEqual({
      profileName: "ops",
      roleArn: "arn:aws:iam::123456789012:role/deployer",
    });
    // pulumi-eks leaves the profile out of kubeconfigJson: the provider and every post-deploy
    // step get getKubeconfig's, whose `aws eks get-token` runs with --profile ops and --role.
    const kubeconfig = mockKubeconfig({ profileName: "ops", roleArn: "arn:aws:iam::123456789012:role/deployer" });
    expect(recorder.invokes.filter((c) => c.token === EKS_GET_KUBECONFIG).map((c) => c.inputs)).toEqual([
      { profileName: "ops", roleArn: "arn:aws:iam::123456789012:role/deployer" },
    ]);
    expect(recorder.get("pulumi:providers:kubernetes", "eks-k8s").inputs.kubeconfig).toBe(kubeconfig);
    const steps = recorder.resources.filter(
      (r) => r.type.startsWith("pulumi-nodejs:dynamic") && "kubeconfig" in r.inputs,
    );
    expect(steps.map((r) => r.name).sort()).toEqual([
      "valkey-benchmark-results-run",
      "valkey-check-after-benchmark-run",
      "valkey-check-run",
      "valkey-live-config-run",
      "valkey-rolling-restart-run",
      "valkey-volume-release-run",
    ]);
    for (const step of steps) expect(step.inputs.kubeconfig, step.name).toBe(kubeconfig);
    expect(cluster.inputs.publicAccessCidrs).toEqual(["203.0.113.0/24"]);
    expect(
      Object.values(cluster.inputs.accessEntries as Record<string, { principalArn: string }>).map(
        (e) => e.principalArn,
      ),
    ).toEqual(["arn:aws:iam::123456789012:role/oncall"]);
    const provider = recorder.get("pulumi:providers:aws", "aws").inputs;
    expect(provider).toMatchObject({ region: "us-west-2", profile: "ops" });
    // Provider inputs reach the engine JSON-encoded.
    expect(JSON.parse(String(provider.assumeRoles))).toEqual([
      { roleArn: "arn:aws:iam::123456789012:role/deployer", sessionName: "valkey-on-eks" },
    ]);
  });
});

describe("the stack entry point on platform eks", () => {
  const config = { "aws:region": "eu-west-1", "valkey-on-eks:valkey": JSON.stringify({ auth: { enabled: false } }) };

  it("stops on a missing AWS CLI before any resource, naming the tool", async () => {
    pulumi.runtime.setAllConfig(config);
    const err = await runStack(() => ({ found: false, error: "`aws` is not on PATH" })).catch((e: unknown) => e);
    expect(pulumi.RunError.isInstance(err)).toBe(true);
    expect((err as Error).message).toMatch(/^platform eks needs the AWS CLI v2 \(`aws`\)/);
    await settle();
    expect(recorder.resources).toEqual([]);
  });

  it("stops on a failed preflight with only the AWS provider registered, and deploys once it passes", async () => {
    pulumi.runtime.setAllConfig(config);
    account.quota = 4;
    const v2 = () => ({ found: true as const, output: "aws-cli/2.17.40 Python/3.11.9" });
    const err = await runStack(v2).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/EC2 quota L-1216C47A .* is 4 vCPUs/);
    await settle();
    expect(recorder.resources.map((r) => r.type)).toEqual(["pulumi:providers:aws"]);
    recorder.reset();
    account.quota = 64;
    await runStack(v2);
    await settle();
    expect(recorder.ofType("eks:index:Cluster")).toHaveLength(1);
    expect(recorder.ofType("pulumi:providers:aws").map((p) => p.name)).toEqual(["aws", "pricing-api"]);
  });
});

describe("byo with a managed Karpenter NodePool: the AMI alias against the version the cluster runs", () => {
  const dir = mkdtempSync(join(tmpdir(), "byo-preflight-"));
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const byo = {
    "aws:region": "eu-west-1",
    "valkey-on-eks:platform": "byo",
    "valkey-on-eks:byo": JSON.stringify({
      kubeconfig,
      manageKarpenterNodePool: true,
      karpenterNodeRole: "KarpenterNodeRole-prod",
      karpenterDiscoveryTag: "prod",
    }),
    "valkey-on-eks:valkey": JSON.stringify({ auth: { enabled: false } }),
  };
  const v2 = () => ({ found: true as const, output: "aws-cli/2.17.40 Python/3.11.9" });
  /** The AMI parameters read, and the answer the account's releases give (what SSM_TOKEN's mock does). */
  const asked: string[] = [];
  const probes = (version: string | Error) => ({
    kubeVersion: () => Promise.resolve(version instanceof Error ? { error: version.message } : { version }),
    cluster: () =>
      Promise.resolve({
        nodes: [],
        storageClasses: [{ name: "gp3", isDefault: true }],
        daemonSets: [],
        ciliumNodes: 1,
      }),
    amiParameter: () => (alias: string, kubernetesVersion: string) => {
      asked.push(`${alias}@${kubernetesVersion}`);
      const releases = account.amiReleases instanceof Error ? [] : (account.amiReleases[kubernetesVersion] ?? []);
      return { found: releases.includes(alias.replace(/^al2023@/, "")) };
    },
  });
  beforeEach(() => (asked.length = 0));

  it("refuses an alias with no AMI for the cluster's version, naming the key and that version, before any resource, with no AWS provider", async () => {
    pulumi.runtime.setAllConfig(byo);
    const err = await runStack(v2, probes("1.37")).catch((e: unknown) => e);
    expect(pulumi.RunError.isInstance(err)).toBe(true);
    expect((err as Error).message).toMatch(
      /karpenter\.amiAlias "al2023@v\d{8}" has no arm64 AL2023 AMI for eks\.version 1\.37 in eu-west-1 .*\(the byo cluster runs 1\.37\)/,
    );
    expect(asked).toEqual([expect.stringMatching(/@1\.37$/)]);
    await settle();
    expect(recorder.resources).toEqual([]);
  });

  it("deploys when the alias exists for that version, still with no AWS provider; an unreadable version only warns", async () => {
    pulumi.runtime.setAllConfig(byo);
    await runStack(v2, probes("1.36"));
    await settle();
    expect(recorder.ofType("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")).toHaveLength(1);
    expect(recorder.ofType("pulumi:providers:aws")).toEqual([]);
    recorder.reset();
    asked.length = 0;
    await runStack(v2, probes(new Error("connect ECONNREFUSED 127.0.0.1:6443")));
    await settle();
    expect(asked).toEqual([]);
    expect(recorder.ofType("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")).toHaveLength(1);
  });

  it("byo without a managed NodePool reads no AMI parameter", async () => {
    pulumi.runtime.setAllConfig({ ...byo, "valkey-on-eks:byo": JSON.stringify({ kubeconfig, nodeChecks: false }) });
    await runStack(v2, { ...probes("1.36"), kubeVersion: () => Promise.reject(new Error("must not be asked")) });
    await settle();
    expect(asked).toEqual([]);
    expect(recorder.ofType("pulumi:providers:aws")).toEqual([]);
  });
});

describe("the AMI parameter read through the AWS CLI (byo)", () => {
  const { config } = parseStackConfig({ "aws:region": "eu-west-1", "aws": { profile: "ops" } });
  const fake =
    (status: number | null, stderr = "", error?: NodeJS.ErrnoException) =>
    (cmd: string, args: readonly string[]) => {
      calls.push([cmd, ...args]);
      return { status, stdout: "", stderr, error, pid: 1, output: [], signal: null };
    };
  const calls: string[][] = [];
  beforeEach(() => (calls.length = 0));

  it("asks for the exact parameter in the stack's region with its profile, and reads the three answers", () => {
    expect(probeAmiParameterCli("al2023@v20260714", "1.36", config, fake(0) as never)).toEqual({ found: true });
    expect(calls[0]).toEqual([
      "aws",
      "ssm",
      "get-parameter",
      "--name",
      "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.36-v20260714/image_id",
      "--region",
      "eu-west-1",
      "--output",
      "json",
      "--profile",
      "ops",
    ]);
    const notFound =
      "\nAn error occurred (ParameterNotFound) when calling the GetParameter operation: Parameter /aws/service/x not found.\n";
    expect(probeAmiParameterCli("al2023@v20990101", "1.36", config, fake(254, notFound) as never)).toEqual({
      found: false,
    });
    expect(
      probeAmiParameterCli(
        "al2023@v20260714",
        "1.36",
        config,
        fake(null, "", Object.assign(new Error("spawn aws ENOENT"), { code: "ENOENT" })) as never,
      ),
    ).toEqual({ error: "`aws` is not on PATH" });
    expect(
      probeAmiParameterCli(
        "al2023@v20260714",
        "1.36",
        config,
        fake(255, 'Unable to locate credentials. You can configure credentials by running "aws configure".') as never,
      ),
    ).toEqual({ error: 'Unable to locate credentials. You can configure credentials by running "aws configure".' });
  });
});

describe("the Kubernetes version an API server reports", () => {
  it.each([
    [{ major: "1", minor: "36" }, { version: "1.36" }],
    [{ major: "1", minor: "36+" }, { version: "1.36" }],
    [{ major: "", minor: "" }, { error: 'the API server reports version major "", minor ""' }],
  ])("%j → %j", (v, want) => expect(kubernetesVersionOf(v)).toEqual(want));
});
