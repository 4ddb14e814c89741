/**
 * The us-east-1 EC2 figures of prices.json, taken from Karpenter's generated on-demand price
 * table (pkg/providers/pricing/zz_generated.pricing_aws.go of the Go module
 * github.com/aws/karpenter-provider-aws at the chart version the program installs). Pure
 * functions: parse that Go file, rebuild the table's us-east-1 EC2 map for the permitted
 * instance types, and list where a table differs from it (price drift after a Karpenter bump).
 * benchmarks/cost/update-prices.ts runs them against the module in the Go module cache.
 */
import type { PriceFigure, PriceTable } from "./prices.js";

/** Path of the generated price table inside the Karpenter module. */
export const KARPENTER_PRICE_FILE = "pkg/providers/pricing/zz_generated.pricing_aws.go";
/** The region whose EC2 figures come from Karpenter (the only region its generated table has). */
export const KARPENTER_PRICE_REGION = "us-east-1";
/** The id under `sources` the Karpenter-derived figures cite. */
export const KARPENTER_SOURCE_ID = "karpenter-generated-us-east-1";

export interface KarpenterPrices {
  /** The "generated at" timestamp of the file's header comment, e.g. "2026-07-06T14:20:29Z". */
  generatedAt: string;
  /** Region → instance type → on-demand USD per hour. */
  regions: Map<string, Map<string, number>>;
}

/** Parses zz_generated.pricing_aws.go; throws naming what is missing when the layout is not the expected one. */
export function parseKarpenterPrices(source: string, where = KARPENTER_PRICE_FILE): KarpenterPrices {
  const generatedAt = /^\/\/ generated at (\S+) for /m.exec(source)?.[1];
  if (generatedAt === undefined) throw new Error(`${where}: no "// generated at <time> for <region>" comment`);
  const start = source.indexOf("var InitialOnDemandPricesAWS = ");
  if (start < 0) throw new Error(`${where}: no "var InitialOnDemandPricesAWS" map`);
  const regions = new Map<string, Map<string, number>>();
  let current: Map<string, number> | undefined;
  for (const line of source.slice(start).split("\n").slice(1)) {
    const region = /^\s*"([a-z0-9-]+)": \{\s*$/.exec(line)?.[1];
    if (region !== undefined) {
      current = new Map();
      regions.set(region, current);
      continue;
    }
    for (const m of line.matchAll(/"([a-z0-9-]+\.[a-z0-9-]+)": ([0-9]+(?:\.[0-9]+)?)/g)) {
      const [, type = "", usd = ""] = m;
      if (current === undefined) throw new Error(`${where}: price of ${type} outside a region block`);
      current.set(type, Number(usd));
    }
  }
  if (regions.size === 0 || [...regions.values()].every((r) => r.size === 0))
    throw new Error(`${where}: InitialOnDemandPricesAWS has no prices`);
  return { generatedAt, regions };
}

/** The `sources` entry describing the module file the figures were read from. */
export function karpenterSourceEntry(
  moduleVersion: string,
  generatedAt: string,
  read: string,
): PriceTable["sources"][string] {
  return {
    url: `https://github.com/aws/karpenter-provider-aws/blob/v${moduleVersion}/${KARPENTER_PRICE_FILE}`,
    published: generatedAt.slice(0, 10),
    read,
    note:
      `Karpenter's on-demand price table (generated from the AWS Pricing API), read from the Go module github.com/aws/karpenter-provider-aws@v${moduleVersion} ` +
      `(Go module proxy), ${KARPENTER_PRICE_FILE}, 'generated at ${generatedAt} for us-east-1'; us-east-1 only. ` +
      `Regenerate with: npx tsx benchmarks/cost/update-prices.ts --write`,
  };
}

/**
 * The us-east-1 EC2 figures for `instanceTypes` (in that order); a type Karpenter's table lacks is missing, with why.
 */
export function karpenterEc2Figures(
  prices: KarpenterPrices,
  instanceTypes: readonly string[],
  moduleVersion: string,
): Record<string, PriceFigure> {
  const region = prices.regions.get(KARPENTER_PRICE_REGION);
  if (region === undefined) throw new Error(`${KARPENTER_PRICE_FILE} has no ${KARPENTER_PRICE_REGION} prices`);
  return Object.fromEntries(
    instanceTypes.map((type): [string, PriceFigure] => {
      const usd = region.get(type);
      return usd === undefined
        ? [
            type,
            {
              usd: null,
              source: null,
              note: `not in Karpenter v${moduleVersion}'s generated price table (${KARPENTER_PRICE_FILE})`,
            },
          ]
        : [type, { usd, source: KARPENTER_SOURCE_ID }];
    }),
  );
}

/**
 * The table with its us-east-1 EC2 map replaced by `figures` and the Karpenter source entry set
 * (its `read` date kept when nothing else changed); sources no figure cites any more are dropped.
 * Everything else (other regions, EKS, NAT, gp3 and their sources) is left as it is.
 */
export function withKarpenterPrices(
  table: PriceTable,
  figures: Record<string, PriceFigure>,
  source: PriceTable["sources"][string],
): PriceTable {
  const east = table.regions[KARPENTER_PRICE_REGION];
  if (east === undefined) throw new Error(`the price table has no ${KARPENTER_PRICE_REGION} region`);
  const old = table.sources[KARPENTER_SOURCE_ID];
  const unchanged =
    old !== undefined && JSON.stringify({ ...old, read: "" }) === JSON.stringify({ ...source, read: "" });
  const next: PriceTable = {
    ...table,
    sources: {
      ...table.sources,
      [KARPENTER_SOURCE_ID]:
        unchanged && JSON.stringify(east.ec2OnDemandPerHour) === JSON.stringify(figures) ? old : source,
    },
    regions: { ...table.regions, [KARPENTER_PRICE_REGION]: { ...east, ec2OnDemandPerHour: figures } },
  };
  const cited = new Set<string>();
  const cite = (f: PriceFigure) => f.source !== null && cited.add(f.source);
  cite(next.eksControlPlanePerHour.standard);
  cite(next.eksControlPlanePerHour.extended);
  for (const r of Object.values(next.regions)) {
    Object.values(r.ec2OnDemandPerHour).forEach(cite);
    cite(r.ebsGp3PerGiBMonth);
    cite(r.natGatewayPerHour);
    if (r.dataTransferInterAzPerGB) cite(r.dataTransferInterAzPerGB);
  }
  next.sources = Object.fromEntries(Object.entries(next.sources).filter(([id]) => cited.has(id)));
  return next;
}

/** One line per us-east-1 EC2 figure of `table` that differs from `figures` (added, removed or another price). */
export function ec2PriceDrift(table: PriceTable, figures: Record<string, PriceFigure>): string[] {
  const have = table.regions[KARPENTER_PRICE_REGION]?.ec2OnDemandPerHour ?? {};
  const show = (f: PriceFigure | undefined) =>
    f === undefined ? "absent" : f.usd === null ? "missing" : `$${f.usd}/h (${f.source})`;
  const types = [...new Set([...Object.keys(figures), ...Object.keys(have)])];
  return types.flatMap((type) => {
    const a = have[type];
    const b = figures[type];
    const same = a !== undefined && b !== undefined && a.usd === b.usd && a.source === b.source;
    return same ? [] : [`${type}: prices.json has ${show(a)}, Karpenter's table gives ${show(b)}`];
  });
}
