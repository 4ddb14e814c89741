/**
 * prices.json's us-east-1 EC2 figures against Karpenter's generated price table
 * (pkg/providers/pricing/zz_generated.pricing_aws.go) in the Go module
 * github.com/aws/karpenter-provider-aws at versions.env KARPENTER_CHART_VERSION, from the Go
 * module cache (tests/support/karpenter-module.ts). A Karpenter bump whose table has other
 * prices fails here until `npx tsx benchmarks/cost/update-prices.ts --write` is run.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ec2PriceDrift,
  KARPENTER_PRICE_FILE,
  KARPENTER_SOURCE_ID,
  karpenterEc2Figures,
  karpenterSourceEntry,
  parseKarpenterPrices,
  withKarpenterPrices,
  type KarpenterPrices,
} from "../../benchmarks/cost/karpenter-prices.js";
import { instanceHourly, loadPriceTable, parsePriceTable } from "../../benchmarks/cost/prices.js";
import { INSTANCE_CAPACITY } from "../../config/instance-types.js";
import { versions } from "../../versions.js";
import { karpenterModuleDir } from "../support/karpenter-module.js";

const VERSION = versions.KARPENTER_CHART_VERSION;
const PERMITTED = Object.keys(INSTANCE_CAPACITY);
const table = loadPriceTable();
let source = "";
let prices: KarpenterPrices;

describe(`prices.json against Karpenter v${VERSION}'s generated price table`, () => {
  // The first run may download the module from the Go module proxy (a few MB).
  beforeAll(() => {
    source = readFileSync(join(karpenterModuleDir(), KARPENTER_PRICE_FILE), "utf8");
    prices = parseKarpenterPrices(source);
  }, 300_000);

  it("parses the module's table: its 'generated at' time and us-east-1 prices as written in the Go source", () => {
    expect(source).toContain(`// generated at ${prices.generatedAt} for us-east-1`);
    const east = prices.regions.get("us-east-1");
    expect(east?.size).toBeGreaterThan(500);
    for (const type of ["r7g.large", "m7g.large", "r8gn.large", "m8gn.16xlarge", "c7gn.large"]) {
      const written = new RegExp(`"${type.replace(".", "\\.")}": ([0-9.]+)`).exec(source)?.[1];
      expect(written, `${type} in ${KARPENTER_PRICE_FILE}`).toBeDefined();
      expect(east?.get(type), type).toBe(Number(written));
    }
  });

  it("every instance type config/instance-types.ts permits has its us-east-1 price in the module, and prices.json has exactly those figures", () => {
    const figures = karpenterEc2Figures(prices, PERMITTED, VERSION);
    expect(PERMITTED.filter((type) => figures[type]?.usd === null)).toEqual([]);
    expect(Object.keys(table.regions["us-east-1"]?.ec2OnDemandPerHour ?? {})).toEqual(PERMITTED);
    expect(ec2PriceDrift(table, figures), "run: npx tsx benchmarks/cost/update-prices.ts --write").toEqual([]);
  });

  it("the figures' source entry names the module version, the file and its 'generated at' time", () => {
    const entry = table.sources[KARPENTER_SOURCE_ID];
    expect(entry).toEqual(karpenterSourceEntry(VERSION, prices.generatedAt, entry?.read ?? ""));
    expect(entry?.url).toBe(`https://github.com/aws/karpenter-provider-aws/blob/v${VERSION}/${KARPENTER_PRICE_FILE}`);
    expect(entry?.note).toContain(`generated at ${prices.generatedAt} for us-east-1`);
  });
});

describe("refreshing the table from Karpenter's prices (pure)", () => {
  const GO = [
    "package pricing",
    "",
    "// generated at 2030-01-02T03:04:05Z for us-east-1",
    "",
    "var InitialOnDemandPricesAWS = map[string]map[ec2types.InstanceType]float64{",
    "\t// us-east-1",
    '\t"us-east-1": {',
    "\t\t// r7g family",
    '\t\t"r7g.large": 0.200000, "r7g.medium": 0.100000,',
    "\t},",
    "}",
  ].join("\n");
  const fake = parseKarpenterPrices(GO);

  it("parses a minimal generated file, and rejects one without the header or the map, naming what is missing", () => {
    expect(fake.generatedAt).toBe("2030-01-02T03:04:05Z");
    expect([...(fake.regions.get("us-east-1") ?? [])]).toEqual([
      ["r7g.large", 0.2],
      ["r7g.medium", 0.1],
    ]);
    expect(() => parseKarpenterPrices(GO.replace(/\/\/ generated at.*\n/, ""), "x.go")).toThrow(
      /x\.go: no "\/\/ generated at/,
    );
    expect(() => parseKarpenterPrices(GO.replace("InitialOnDemandPricesAWS", "Other"), "x.go")).toThrow(
      /x\.go: no "var InitialOnDemandPricesAWS" map/,
    );
  });

  it("a changed price shows as drift; the rewrite takes it, marks a type the module lacks missing, and leaves non-EC2 figures, other regions and their sources alone", () => {
    const figures = karpenterEc2Figures(fake, ["r7g.large", "r7g.medium", "r8g.large"], "9.9.9");
    expect(figures["r8g.large"]).toEqual({
      usd: null,
      source: null,
      note: `not in Karpenter v9.9.9's generated price table (${KARPENTER_PRICE_FILE})`,
    });
    const drift = ec2PriceDrift(table, figures);
    expect(drift).toContain(
      `r7g.large: prices.json has $${instanceHourly(table, "us-east-1", "r7g.large").usd}/h (${KARPENTER_SOURCE_ID}), Karpenter's table gives $0.2/h (${KARPENTER_SOURCE_ID})`,
    );
    expect(drift).toContain(
      "m7g.large: prices.json has $0.0816/h (karpenter-generated-us-east-1), Karpenter's table gives absent",
    );

    const next = parsePriceTable(
      withKarpenterPrices(table, figures, karpenterSourceEntry("9.9.9", fake.generatedAt, "2030-02-01")),
    );
    expect(next.regions["us-east-1"]?.ec2OnDemandPerHour).toEqual(figures);
    expect(next.sources[KARPENTER_SOURCE_ID]).toMatchObject({ published: "2030-01-02", read: "2030-02-01" });
    expect(next.regions["us-east-1"]?.natGatewayPerHour).toEqual(table.regions["us-east-1"]?.natGatewayPerHour);
    expect(next.regions["us-east-1"]?.ebsGp3PerGiBMonth).toEqual(table.regions["us-east-1"]?.ebsGp3PerGiBMonth);
    expect(next.eksControlPlanePerHour).toEqual(table.eksControlPlanePerHour);
    expect(next.regions["us-west-2"]).toEqual(table.regions["us-west-2"]);
    expect(next.regions["eu-west-1"]).toEqual(table.regions["eu-west-1"]);
    for (const id of Object.keys(table.sources)) expect(next.sources[id], id).toBeDefined();
  });

  it("a rewrite with the same prices keeps the source's read date; a source no figure cites any more is dropped", () => {
    const east = table.regions["us-east-1"]?.ec2OnDemandPerHour ?? {};
    const old = table.sources[KARPENTER_SOURCE_ID];
    if (old === undefined) throw new Error(`prices.json has no ${KARPENTER_SOURCE_ID} source`);
    const withStale = { ...table, sources: { ...table.sources, "stale-blog": { ...old, note: "cited by nothing" } } };
    const same = withKarpenterPrices(withStale, east, { ...old, read: "2099-12-31" });
    expect(same.sources[KARPENTER_SOURCE_ID]?.read).toBe(old.read);
    expect(same.sources["stale-blog"]).toBeUndefined();
    expect(same).toEqual(table);
  });
});

describe("regions Karpenter's table does not cover", () => {
  it.each(["us-west-2", "eu-west-1"])("%s: every EC2 price is missing with its reason, never 0", (region) => {
    const ec2 = table.regions[region]?.ec2OnDemandPerHour ?? {};
    expect(Object.keys(ec2)).toEqual(PERMITTED);
    for (const type of PERMITTED) {
      expect(instanceHourly(table, region, type), type).toEqual({
        usd: null,
        missing: `${type} in ${region}: no stored source gave the ${region} on-demand price (Karpenter's generated table, the EC2 source of this file, covers us-east-1 only): on eks the live AWS Pricing API price is used, else this type's cost is reported missing`,
      });
    }
  });
});
