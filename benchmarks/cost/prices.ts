/**
 * The price table (prices.json beside this file): on-demand list prices of what a deployed stack
 * runs, per region, each figure with the source it was read from. A figure no source gave is
 * `usd: null` (missing, never zero), and every lookup says so instead of guessing.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";

export const PRICES_FILE = new URL("./prices.json", import.meta.url);

const figure = z.strictObject({
  usd: z.number().nonnegative().nullable(),
  source: z.string().nullable(),
  note: z.string().optional(),
});

export const priceTableSchema = z
  .strictObject({
    description: z.string(),
    currency: z.literal("USD"),
    hoursPerMonth: z.number().positive(),
    sources: z.record(
      z.string(),
      z.strictObject({
        url: z.url(),
        published: z.string(),
        read: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
        note: z.string(),
      }),
    ),
    eksControlPlanePerHour: z.strictObject({ standard: figure, extended: figure }),
    regions: z.record(
      z.string(),
      z.strictObject({
        ec2OnDemandPerHour: z.record(z.string(), figure),
        ebsGp3PerGiBMonth: figure,
        natGatewayPerHour: figure,
        /**
         * Data crossing Availability Zones in the region, USD per GB in each direction (a crossing byte pays it leaving
         * one zone and entering the other).
         */
        dataTransferInterAzPerGB: figure.optional(),
      }),
    ),
  })
  .superRefine((table, ctx) => {
    const check = (f: z.infer<typeof figure>, path: (string | number)[]) => {
      if (f.usd !== null && (f.source === null || !(f.source in table.sources))) {
        ctx.addIssue({
          code: "custom",
          path: [...path, "source"],
          message: `names no source listed under "sources" (got ${JSON.stringify(f.source)})`,
        });
      }
      if (f.usd === null && !f.note)
        ctx.addIssue({ code: "custom", path: [...path, "note"], message: "a missing figure must say why (note)" });
    };
    check(table.eksControlPlanePerHour.standard, ["eksControlPlanePerHour", "standard"]);
    check(table.eksControlPlanePerHour.extended, ["eksControlPlanePerHour", "extended"]);
    for (const [region, r] of Object.entries(table.regions)) {
      for (const [type, f] of Object.entries(r.ec2OnDemandPerHour))
        check(f, ["regions", region, "ec2OnDemandPerHour", type]);
      check(r.ebsGp3PerGiBMonth, ["regions", region, "ebsGp3PerGiBMonth"]);
      check(r.natGatewayPerHour, ["regions", region, "natGatewayPerHour"]);
      if (r.dataTransferInterAzPerGB)
        check(r.dataTransferInterAzPerGB, ["regions", region, "dataTransferInterAzPerGB"]);
    }
  });

export type PriceTable = z.infer<typeof priceTableSchema>;
export type PriceFigure = z.infer<typeof figure>;

export class PriceTableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PriceTableError";
  }
}

/** Validates a parsed price table; the error names the key path of every fault. */
export function parsePriceTable(json: unknown, where = "prices.json"): PriceTable {
  const parsed = priceTableSchema.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new PriceTableError(`${where} is not a valid price table:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/** The table shipped with the project (benchmarks/cost/prices.json). */
export function loadPriceTable(url: URL = PRICES_FILE): PriceTable {
  return parsePriceTable(JSON.parse(readFileSync(url, "utf8")), url.pathname.split("/").slice(-3).join("/"));
}

/** A price as used: the figure, or why it is missing. */
export type Lookup = { usd: number; source: string } | { usd: null; missing: string };

function fromFigure(f: PriceFigure | undefined, what: string): Lookup {
  if (f === undefined) return { usd: null, missing: `${what}: not in the price table` };
  if (f.usd === null || f.source === null) return { usd: null, missing: `${what}: ${f.note ?? "missing"}` };
  return { usd: f.usd, source: f.source };
}

export function instanceHourly(table: PriceTable, region: string, instanceType: string): Lookup {
  return fromFigure(table.regions[region]?.ec2OnDemandPerHour[instanceType], `${instanceType} in ${region}`);
}

export function gp3PerGiBMonth(table: PriceTable, region: string): Lookup {
  return fromFigure(table.regions[region]?.ebsGp3PerGiBMonth, `EBS gp3 in ${region}`);
}

export function natGatewayHourly(table: PriceTable, region: string): Lookup {
  return fromFigure(table.regions[region]?.natGatewayPerHour, `NAT gateway in ${region}`);
}

export function eksControlPlaneHourly(table: PriceTable, support: "standard" | "extended"): Lookup {
  return fromFigure(table.eksControlPlanePerHour[support], `EKS control plane (${support} support)`);
}

/** The inter-AZ data transfer rate, USD per GB in each direction. */
export function interAzTransferPerGB(table: PriceTable, region: string): Lookup {
  return fromFigure(table.regions[region]?.dataTransferInterAzPerGB, `inter-AZ data transfer in ${region}`);
}

/** The source a lookup names, with the date it was read (for a figure's label). */
export function sourceRead(table: PriceTable, source: string): string {
  const s = table.sources[source];
  return s === undefined ? source : `${source}, read ${s.read}`;
}
