/**
 * The cost wiring of the program under Pulumi mocks: the Pricing API invoke answered by the
 * mocks (through the explicit us-east-1 provider, with the stack's region in its filters) gives
 * `priceSource: "aws-pricing-api"` and cost columns on every row; a failing invoke falls back
 * to the table and says so.
 */
import { describe, expect, it } from "vitest";
import { awsMockInvokes, awsMockOutputs, installMocks, settle, valueOf } from "../support/pulumi-mocks.js";
import { resultRow } from "../support/result-rows.js";

const ROW = resultRow({ rps: 400000 });
/** Live prices the mocked Pricing API answers (deliberately not the table's). */
const LIVE: Record<string, string> = { "r7g.large": "0.1000000000", "m7g.large": "0.0800000000" };
let pricingFails = false;
const asked: { type: string; region: string }[] = [];
/** What the mocked describe-cluster-versions says of the asked version: a status, or an error to throw. */
let versionStatus: string | Error = "STANDARD_SUPPORT";
const versionsAsked: Record<string, unknown>[] = [];

const recorder = installMocks({
  invokes: {
    ...awsMockInvokes,
    "aws:eks/getClusterVersions:getClusterVersions": (inputs) => {
      versionsAsked.push(inputs);
      if (versionStatus instanceof Error) throw versionStatus;
      const [version] = inputs.clusterVersionsOnlies as string[];
      return { clusterVersions: [{ clusterVersion: version, versionStatus }], region: inputs.region };
    },
    "aws:pricing/getProduct:getProduct": (inputs) => {
      const filters = inputs.filters as { field: string; value: string }[];
      const type = filters.find((f) => f.field === "instanceType")?.value ?? "";
      asked.push({ type, region: filters.find((f) => f.field === "regionCode")?.value ?? "" });
      if (pricingFails) throw new Error("AccessDeniedException: not authorized to perform pricing:GetProducts");
      const usd = LIVE[type];
      if (usd === undefined) throw new Error(`no mock price for ${type}`);
      return {
        result: JSON.stringify({
          terms: { OnDemand: { t: { priceDimensions: { d: { unit: "Hrs", pricePerUnit: { USD: usd } } } } } },
        }),
      };
    },
  },
  outputs: (r) => {
    if (r.name === "valkey-benchmark-results-run") return { rows: [ROW], csv: "" };
    if (r.name === "valkey-check-after-benchmark-run" || r.name === "valkey-check-run")
      return { report: { ok: true, mode: "cluster", failures: [], shards: [], primariesPerZone: {} }, table: "" };
    return awsMockOutputs(r);
  },
});

const { loadStackFile } = await import("../../config/schema.js");
const { runProgram } = await import("../../stacks/program.js");
const { parseResultsCsv } = await import("../../benchmarks/run/results-csv.js");
const pulumi = await import("@pulumi/pulumi");

async function run() {
  recorder.reset();
  asked.length = 0;
  const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
  // The stack's credentials (aws.profile, aws.roleArn) must reach the pricing provider too.
  const withCredentials = {
    ...config,
    aws: { ...config.aws, profile: "bench", roleArn: "arn:aws:iam::123456789012:role/bench" },
  };
  const out = runProgram({ stack: "cluster", config: withCredentials, password: pulumi.secret("pw") });
  await settle();
  return valueOf(out.report);
}

describe("cost wiring under mocks", () => {
  it("prices from the Pricing API (us-east-1 provider with the stack's profile and role, the stack's region in the filters): priceSource aws-pricing-api, cost columns on rows and CSV", async () => {
    pricingFails = false;
    const report = await run();
    const provider = recorder.get("pulumi:providers:aws", "pricing-api");
    expect(provider.inputs.region).toBe("us-east-1");
    expect(provider.inputs.profile).toBe("bench");
    expect(JSON.stringify(provider.inputs.assumeRoles)).toContain("arn:aws:iam::123456789012:role/bench");
    expect(asked.map((a) => a.region)).toEqual(["us-west-2", "us-west-2", "us-west-2"].slice(0, asked.length));
    expect(asked.map((a) => a.type).sort()).toEqual(["m7g.large", "r7g.large"]);
    const cost = report.cost;
    expect(cost).toMatchObject({
      priceSource: "aws-pricing-api",
      pricingApiError: null,
      valkeyInstanceType: "r7g.large",
      clientInstanceType: "r7g.large",
    });
    // EC2 lines are live (6 Valkey + 1 client r7g.large at 0.10, 2 m7g.large at 0.08); the rest needs
    // us-west-2 table prices (gp3, NAT), which are missing: the total stays null rather than partial.
    const ec2 = cost?.lines.filter((l) => l.unit === "node-hour").map((l) => [l.usdPerHour, l.source]);
    expect(ec2).toEqual([
      [0.6, "aws-pricing-api"],
      [0.1, "aws-pricing-api"],
      [0.16, "aws-pricing-api"],
    ]);
    expect(cost?.usdPerHour).toBeNull();
    expect(cost?.missing).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^EBS gp3 in us-west-2/),
        expect.stringMatching(/^NAT gateway in us-west-2/),
      ]),
    );
    expect(report.benchmark?.rows[0]).toMatchObject({ usd_per_hour: null, usd_per_million_ops_per_s: null });
    expect(parseResultsCsv(report.benchmark?.csv ?? "")).toEqual(report.benchmark?.rows);
  });

  it("in a region the table prices fully (us-east-1), the live total lands in every row as usd_per_hour and ÷ (rps ÷ 1e6)", async () => {
    pricingFails = false;
    const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
    recorder.reset();
    asked.length = 0;
    const east = {
      ...config,
      aws: { ...config.aws, region: "us-east-1", zones: ["us-east-1a", "us-east-1b", "us-east-1c"] },
    };
    const out = runProgram({ stack: "cluster", config: east, password: pulumi.secret("pw") });
    await settle();
    const report = await valueOf(out.report);
    // 0.6 + 0.1 + 0.16 (live) + (6×50 Valkey + 2×50 system root) GiB × 0.08 / 730 + 0.10 + 0.045 (table)
    const expected = 0.86 + (400 * 0.08) / 730 + 0.145;
    expect(report.cost?.usdPerHour).toBeCloseTo(expected, 5);
    expect(report.benchmark?.rows[0]?.usd_per_hour).toBeCloseTo(expected, 5);
    expect(report.benchmark?.rows[0]?.usd_per_million_ops_per_s).toBeCloseTo(expected / 0.4, 3);
  });

  it("when the invoke fails, falls back to the table and records why (us-east-1 table: r7g.large $0.1071)", async () => {
    pricingFails = true;
    const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
    recorder.reset();
    const east = {
      ...config,
      aws: { ...config.aws, region: "us-east-1", zones: ["us-east-1a", "us-east-1b", "us-east-1c"] },
    };
    const out = runProgram({ stack: "cluster", config: east, password: pulumi.secret("pw") });
    await settle();
    const report = await valueOf(out.report);
    expect(report.cost?.priceSource).toBe("table");
    expect(report.cost?.pricingApiError).toContain(
      "AccessDeniedException: not authorized to perform pricing:GetProducts",
    );
    expect(asked.length).toBeGreaterThan(0);
    expect(report.cost?.lines[0]).toMatchObject({
      item: "Valkey nodes (r7g.large)",
      usdPerHour: 0.6426,
      source: "karpenter-generated-us-east-1",
    });
    const expected = 7 * 0.1071 + 2 * 0.0816 + (400 * 0.08) / 730 + 0.145;
    expect(report.cost?.usdPerHour).toBeCloseTo(expected, 5);
  });

  it("the control plane's rate is what EKS lists for eks.version in the stack's region: extended support bills $0.60/h; an invoke that fails leaves $0.10/h, the line saying it was assumed and why", async () => {
    pricingFails = false;
    const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
    const line = async (status: string | Error) => {
      versionStatus = status;
      versionsAsked.length = 0;
      recorder.reset();
      const out = runProgram({ stack: "cluster", config, password: pulumi.secret("pw") });
      await settle();
      return (await valueOf(out.report)).cost?.lines.find((l) => l.unit === "cluster-hour");
    };
    const v = config.eks.version;
    expect(await line("STANDARD_SUPPORT")).toMatchObject({
      item: `EKS control plane (standard support: EKS lists ${v} in standard support)`,
      usdPerHour: 0.1,
    });
    expect(versionsAsked).toEqual([expect.objectContaining({ clusterVersionsOnlies: [v], region: "us-west-2" })]);
    expect(await line("EXTENDED_SUPPORT")).toMatchObject({
      item: `EKS control plane (extended support: EKS lists ${v} in extended support)`,
      usdPerHour: 0.6,
    });
    expect(await line(new Error("AccessDeniedException: eks:DescribeClusterVersions"))).toMatchObject({
      item: expect.stringMatching(
        new RegExp(
          `^EKS control plane \\(standard support: assumed, EKS's support window for ${v.replace(".", "\\.")} not read: .*AccessDeniedException`,
        ),
      ) as unknown,
      usdPerHour: 0.1,
    });
    versionStatus = "STANDARD_SUPPORT";
  });

  it("network.natGateways: perZone gives the VPC one NAT gateway per zone, and the estimate bills three gateway-hours", async () => {
    pricingFails = false;
    const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
    recorder.reset();
    const east = {
      ...config,
      aws: { ...config.aws, region: "us-east-1", zones: ["us-east-1a", "us-east-1b", "us-east-1c"] },
    };
    const nat = async (natGateways: "single" | "perZone") => {
      recorder.reset();
      const out = runProgram({
        stack: "cluster",
        config: { ...east, network: { natGateways } },
        password: pulumi.secret("pw"),
      });
      await settle();
      const report = await valueOf(out.report);
      return {
        vpc: recorder.get("awsx:ec2:Vpc", "eks-vpc").inputs.natGateways,
        line: report.cost?.lines.find((l) => l.unit === "gateway-hour"),
      };
    };
    expect(await nat("single")).toMatchObject({ vpc: { strategy: "Single" }, line: { usdPerHour: 0.045 } });
    const perZone = await nat("perZone");
    expect(perZone.vpc).toEqual({ strategy: "OnePerAz" });
    expect(perZone.line?.usdPerHour).toBeCloseTo(0.135, 6);
  });
});
