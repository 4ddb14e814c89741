/**
 * The AWS Pricing API's side, pure: the filters that select exactly one on-demand Linux product
 * of an instance type in a region, and the hourly USD read from the product JSON that
 * `aws.pricing.getProduct` returns (`result`). The invoke itself is in stacks/cost.ts.
 */

/** The Pricing API answers only from these endpoints' regions. */
export const PRICING_API_REGIONS = ["us-east-1", "ap-south-1"] as const;

export interface PricingFilter {
  field: string;
  value: string;
}

/** Filters for one on-demand, shared-tenancy Linux instance type in `region` (one product). */
export function ec2ProductFilters(region: string, instanceType: string): PricingFilter[] {
  return [
    { field: "instanceType", value: instanceType },
    { field: "regionCode", value: region },
    { field: "operatingSystem", value: "Linux" },
    { field: "tenancy", value: "Shared" },
    { field: "preInstalledSw", value: "NA" },
    { field: "capacitystatus", value: "Used" },
    { field: "licenseModel", value: "No License required" },
  ];
}

export class PricingResultError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PricingResultError";
  }
}

interface PriceDimension {
  unit?: string;
  pricePerUnit?: { USD?: string };
}

/** The hourly USD of a getProduct `result` (its one OnDemand term's "Hrs" dimension). */
export function onDemandHourlyUsd(result: string, what: string): number {
  let product: { terms?: { OnDemand?: Record<string, { priceDimensions?: Record<string, PriceDimension> }> } };
  try {
    product = JSON.parse(result) as typeof product;
  } catch (err) {
    throw new PricingResultError(`${what}: the Pricing API result is not JSON (${(err as Error).message})`);
  }
  const dimensions = Object.values(product.terms?.OnDemand ?? {}).flatMap((term) =>
    Object.values(term.priceDimensions ?? {}),
  );
  const hourly = dimensions.filter((d) => d.unit === "Hrs" && d.pricePerUnit?.USD !== undefined);
  if (hourly.length !== 1) {
    throw new PricingResultError(
      `${what}: expected one on-demand hourly price in the Pricing API result, found ${hourly.length}`,
    );
  }
  const usd = Number(hourly[0]?.pricePerUnit?.USD);
  if (!Number.isFinite(usd) || usd <= 0)
    throw new PricingResultError(
      `${what}: the Pricing API price ${JSON.stringify(hourly[0]?.pricePerUnit?.USD)} is not a positive number`,
    );
  return usd;
}
