/**
 * Cost: the shipped price table's shape and sources, the instance-type estimate rule, the
 * hourly cost from a known table (exact arithmetic), the per-million-ops column, the Pricing
 * API result parser, and the appended CSV columns.
 */
import { controlPlaneSupportOf } from "../../benchmarks/cost/control-plane-support.js";
import { describe, expect, it } from "vitest";
import {
  estimateInstanceType,
  stackCost,
  usdPerMillionOpsPerSecond,
  withCostColumns,
  type CostInputs,
} from "../../benchmarks/cost/cost-model.js";
import { ec2ProductFilters, onDemandHourlyUsd, PricingResultError } from "../../benchmarks/cost/pricing-api.js";
import {
  instanceHourly,
  loadPriceTable,
  parsePriceTable,
  PriceTableError,
  type PriceTable,
} from "../../benchmarks/cost/prices.js";
import {
  COST_CSV_COLUMNS,
  parseResultsCsv,
  renderResultsCsv,
  ResultsCsvError,
  RESULTS_CSV_COLUMNS,
  TRANSFER_CSV_COLUMNS,
} from "../../benchmarks/run/results-csv.js";
import type { ResultRow } from "../../benchmarks/run/result-row.js";
import { knownSizesOf } from "../../config/instance-types.js";
import { resultRow } from "../support/result-rows.js";

const GiB = 2 ** 30;

/** A small known table: every figure chosen so the sums are checkable by hand. */
const KNOWN: PriceTable = parsePriceTable({
  description: "test",
  currency: "USD",
  hoursPerMonth: 730,
  sources: {
    t: { url: "https://example.com/prices", published: "2026-01-01", read: "2026-11-23", note: "test figures" },
  },
  eksControlPlanePerHour: { standard: { usd: 0.1, source: "t" }, extended: { usd: 0.6, source: "t" } },
  regions: {
    "us-test-1": {
      ec2OnDemandPerHour: {
        "r7g.large": { usd: 0.1, source: "t" },
        "r7g.xlarge": { usd: 0.2, source: "t" },
        "m7g.large": { usd: 0.08, source: "t" },
        "r8gn.large": { usd: null, source: null, note: "not listed" },
      },
      ebsGp3PerGiBMonth: { usd: 0.08, source: "t" },
      natGatewayPerHour: { usd: 0.045, source: "t" },
    },
  },
});

const INPUTS: CostInputs = {
  region: "us-test-1",
  permittedInstanceTypes: ["r7g.xlarge", "r7g.large"],
  valkeyPods: 6,
  valkeyRequest: { cpuMillicores: 1000, memoryBytes: 12 * GiB },
  volumeGiB: 50,
  clientPods: 1,
  clientRequest: { cpuMillicores: 2000, memoryBytes: 4 * GiB },
  systemNodes: { instanceType: "m7g.large", count: 2, diskSizeGiB: 20 },
  natGateways: 1,
  controlPlaneSupport: "standard",
};

describe("the shipped price table (benchmarks/cost/prices.json)", () => {
  const table = loadPriceTable();
  it("covers the three regions × every family the config allows × every size, each figure with a source or a reason", () => {
    for (const region of ["us-west-2", "us-east-1", "eu-west-1"]) {
      const r = table.regions[region];
      expect(r, region).toBeDefined();
      for (const family of ["r7g", "m7g", "r8g", "r8gn", "m8g", "m8gn"]) {
        for (const size of knownSizesOf(family))
          expect(r?.ec2OnDemandPerHour[`${family}.${size}`], `${region} ${family}.${size}`).toBeDefined();
      }
    }
    for (const s of Object.values(table.sources)) {
      expect(s.url).toMatch(/^https?:\/\//);
      expect(s.read).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });
  it("carries the figures as read: r7g.large us-east-1 $0.1071/h; a price not found is missing, not zero", () => {
    expect(instanceHourly(table, "us-east-1", "r7g.large")).toEqual({
      usd: 0.1071,
      source: "karpenter-generated-us-east-1",
    });
    const missing = instanceHourly(table, "us-west-2", "r7g.large");
    expect(missing.usd).toBeNull();
    expect(instanceHourly(table, "ap-nowhere-1", "r7g.large")).toEqual({
      usd: null,
      missing: "r7g.large in ap-nowhere-1: not in the price table",
    });
  });
  it("rejects a figure that names no listed source, and a missing figure without a reason, by key path", () => {
    const bad = structuredClone(KNOWN) as unknown as {
      regions: Record<string, { natGatewayPerHour: unknown; ebsGp3PerGiBMonth: unknown }>;
    };
    const region = bad.regions["us-test-1"];
    if (!region) throw new Error("fixture");
    region.natGatewayPerHour = { usd: 0.045, source: "nowhere" };
    region.ebsGp3PerGiBMonth = { usd: null, source: null };
    expect(() => parsePriceTable(bad)).toThrow(PriceTableError);
    expect(() => parsePriceTable(bad)).toThrow(
      /regions\.us-test-1\.natGatewayPerHour\.source: names no source listed under "sources" \(got "nowhere"\)/,
    );
    expect(() => parsePriceTable(bad)).toThrow(
      /regions\.us-test-1\.ebsGp3PerGiBMonth\.note: a missing figure must say why/,
    );
  });
});

describe("estimateInstanceType: the smallest permitted type whose allocatable fits", () => {
  it("takes r7g.large for the seed's 1 vCPU / 12Gi pod, whatever order the NodePool lists types in", () => {
    expect(
      estimateInstanceType(["r7g.2xlarge", "r7g.xlarge", "r7g.large"], { cpuMillicores: 1000, memoryBytes: 12 * GiB }),
    ).toBe("r7g.large");
  });
  it("steps up when the request does not fit the allocatable of the smaller one (15Gi > r7g.large's ~13.9Gi)", () => {
    expect(estimateInstanceType(["r7g.large", "r7g.xlarge"], { cpuMillicores: 1000, memoryBytes: 15 * GiB })).toBe(
      "r7g.xlarge",
    );
  });
  it("prefers fewer vCPU over less memory (m7g.xlarge 4 vCPU vs r7g.large 2 vCPU) and is undefined when nothing fits", () => {
    expect(estimateInstanceType(["m7g.xlarge", "r7g.large"], { cpuMillicores: 1000, memoryBytes: 8 * GiB })).toBe(
      "r7g.large",
    );
    expect(estimateInstanceType(["r7g.large"], { cpuMillicores: 4000, memoryBytes: GiB })).toBeUndefined();
  });
});

describe("stackCost from a known table", () => {
  it("sums nodes, volumes, control plane and NAT to the cent (hand-computed)", () => {
    const c = stackCost(INPUTS, KNOWN);
    // 6 × r7g.large 0.1 + 1 × r7g.xlarge 0.2 (2 vCPU request > r7g.large allocatable) + 2 × m7g.large 0.08
    // + (300 + 40) GiB × 0.08 / 730 + 0.10 + 0.045
    const expected = 0.6 + 0.2 + 0.16 + (340 * 0.08) / 730 + 0.1 + 0.045;
    expect(c.usdPerHour).toBeCloseTo(expected, 5);
    expect(c.usdPerHour).toBeCloseTo(1.14226, 5);
    expect(c).toMatchObject({
      valkeyInstanceType: "r7g.large",
      clientInstanceType: "r7g.xlarge",
      priceSource: "table",
      missing: [],
    });
    expect(c.lines.map((l) => l.item)).toEqual([
      "Valkey nodes (r7g.large)",
      "benchmark client nodes (r7g.xlarge)",
      "system nodes (m7g.large)",
      "Valkey volumes (gp3)",
      "system node root volumes (gp3 rate)",
      "EKS control plane (standard support)",
      "NAT gateways",
    ]);
  });
  it.each([
    [[{ clusterVersion: "1.36", versionStatus: "STANDARD_SUPPORT" }], "standard", "EKS lists 1.36 in standard support"],
    [[{ clusterVersion: "1.36", versionStatus: "EXTENDED_SUPPORT" }], "extended", "EKS lists 1.36 in extended support"],
    // The deprecated field, lower case with a dash (the CLI's older spelling).
    [[{ clusterVersion: "1.36", status: "extended-support" }], "extended", "EKS lists 1.36 in extended support"],
    [[{ clusterVersion: "1.35", versionStatus: "STANDARD_SUPPORT" }], "standard", "assumed, EKS does not list 1.36"],
    [
      [{ clusterVersion: "1.36", versionStatus: "UNSUPPORTED" }],
      "standard",
      'assumed, EKS lists 1.36 as "UNSUPPORTED"',
    ],
    [{ error: "AccessDenied" }, "standard", "assumed, EKS's support window for 1.36 not read: AccessDenied"],
  ] as const)("control-plane rate of 1.36 from %j: %s (%s)", (listed, support, basis) => {
    expect(controlPlaneSupportOf("1.36", listed)).toEqual({ controlPlaneSupport: support, controlPlaneBasis: basis });
  });
  it("extended support bills $0.60 instead of $0.10; no client pods, no client line", () => {
    const standard = stackCost({ ...INPUTS, clientPods: 0 }, KNOWN);
    const extended = stackCost({ ...INPUTS, clientPods: 0, controlPlaneSupport: "extended" }, KNOWN);
    expect((extended.usdPerHour ?? 0) - (standard.usdPerHour ?? 0)).toBeCloseTo(0.5, 9);
    expect(standard.lines.some((l) => l.item.startsWith("benchmark"))).toBe(false);
  });
  it("a missing price makes the total null (never a partial sum) and says which", () => {
    const c = stackCost({ ...INPUTS, permittedInstanceTypes: ["r8gn.large"], clientPods: 0 }, KNOWN);
    expect(c.usdPerHour).toBeNull();
    expect(c.missing).toEqual(["r8gn.large in us-test-1: not listed"]);
  });
  it("live EC2 prices override the table and priceSource says which were used", () => {
    const all = stackCost(INPUTS, KNOWN, { "r7g.large": 0.11, "r7g.xlarge": 0.22, "m7g.large": 0.09 });
    expect(all.priceSource).toBe("aws-pricing-api");
    expect(all.usdPerHour).toBeCloseTo(0.66 + 0.22 + 0.18 + (340 * 0.08) / 730 + 0.145, 5);
    expect(stackCost(INPUTS, KNOWN, { "r7g.large": 0.11 }).priceSource).toBe("aws-pricing-api+table");
    expect(stackCost(INPUTS, KNOWN, {}, "AccessDenied").pricingApiError).toBe("AccessDenied");
  });
});

describe("usd_per_million_ops_per_s and the appended CSV columns", () => {
  const row = resultRow({ rps: 500000, duration_s: 5, requests: 2500000, client_version: "9.0.2" });
  it("is hourly cost ÷ (rps ÷ 1e6); null without a cost or without throughput", () => {
    expect(usdPerMillionOpsPerSecond(1.14226, 500000)).toBe(2.2845);
    expect(usdPerMillionOpsPerSecond(null, 500000)).toBeNull();
    expect(usdPerMillionOpsPerSecond(1, 0)).toBeNull();
  });
  it("rows with cost: the seed's nine columns first, cost columns appended, round-trip; an empty field reads as null", () => {
    const rows = [...withCostColumns([row], 1.14226), ...withCostColumns([{ ...row, test: "GET" }], null)];
    const text = renderResultsCsv(rows);
    const header = text.split("\n")[0] ?? "";
    expect(header).toBe([...RESULTS_CSV_COLUMNS, ...COST_CSV_COLUMNS].join(","));
    expect(header.startsWith("workload,mode,test,rps,p50_ms,clients,pipeline,datasize,timestamp,")).toBe(true);
    expect(text.split("\n")[2]?.endsWith(",,")).toBe(true);
    expect(parseResultsCsv(text)).toEqual(rows);
  });
  it("rows without cost keep the old header, and an old results.csv still parses", () => {
    const text = renderResultsCsv([row]);
    expect(text.split("\n")[0]).toBe(RESULTS_CSV_COLUMNS.join(","));
    expect(parseResultsCsv(text)).toEqual([row]);
  });
  it("a row's measured data transfer is added to its hour (and so to its cost per 1M ops/s); a row without one keeps the stack's hour, never + 0 said as measured", () => {
    const [measured, notMeasured] = withCostColumns(
      [
        { ...row, rps: 500_000, cross_zone_bytes_per_s: 60e6, transfer_usd_per_hour: 4.32 },
        { ...row, test: "GET", rps: 500_000, cross_zone_bytes_per_s: null, transfer_usd_per_hour: null },
      ],
      1.14226,
    );
    expect(measured).toMatchObject({ usd_per_hour: 5.46226, usd_per_million_ops_per_s: 10.9245 });
    expect(notMeasured).toMatchObject({
      usd_per_hour: 1.14226,
      usd_per_million_ops_per_s: 2.2845,
      transfer_usd_per_hour: null,
    });
    expect(withCostColumns([{ ...row, transfer_usd_per_hour: 4.32 }], null)[0]).toMatchObject({
      usd_per_hour: null,
      usd_per_million_ops_per_s: null,
    });
    // The transfer columns follow the cost columns in results.csv; empty reads back as not measured.
    const text = renderResultsCsv([measured as ResultRow, notMeasured as ResultRow]);
    expect(text.split("\n")[0]).toBe([...RESULTS_CSV_COLUMNS, ...COST_CSV_COLUMNS, ...TRANSFER_CSV_COLUMNS].join(","));
    expect(parseResultsCsv(text)).toEqual([measured, notMeasured]);
  });
  it("a cost field that is not a number is refused by name", () => {
    const text = renderResultsCsv(withCostColumns([row], 1)).replace(/,1,2$/m, ",abc,2");
    expect(() => parseResultsCsv(text)).toThrow(ResultsCsvError);
    expect(() => parseResultsCsv(text)).toThrow(/usd_per_hour is "abc"/);
  });
});

describe("the Pricing API result", () => {
  const product = (usd: string) =>
    JSON.stringify({
      product: { sku: "X" },
      terms: {
        OnDemand: {
          "X.JRTCKXETXF": {
            priceDimensions: { "X.JRTCKXETXF.6YS6EN2CT7": { unit: "Hrs", pricePerUnit: { USD: usd } } },
          },
        },
      },
    });
  it("reads the one on-demand hourly USD", () => {
    expect(onDemandHourlyUsd(product("0.1071000000"), "r7g.large")).toBe(0.1071);
  });
  it("refuses a zero price, no price, and non-JSON, naming the type", () => {
    expect(() => onDemandHourlyUsd(product("0.0000000000"), "r7g.large")).toThrow(
      /r7g\.large: the Pricing API price "0.0000000000"/,
    );
    expect(() => onDemandHourlyUsd(JSON.stringify({ terms: {} }), "r7g.large")).toThrow(PricingResultError);
    expect(() => onDemandHourlyUsd("<html>", "r7g.large")).toThrow(/not JSON/);
  });
  it("filters select Linux, shared tenancy, the instance type and the region code", () => {
    expect(ec2ProductFilters("us-west-2", "r7g.large")).toEqual(
      expect.arrayContaining([
        { field: "instanceType", value: "r7g.large" },
        { field: "regionCode", value: "us-west-2" },
        { field: "operatingSystem", value: "Linux" },
        { field: "tenancy", value: "Shared" },
      ]),
    );
  });
});
