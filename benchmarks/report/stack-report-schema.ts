/**
 * The shape a deployed stack's report (`pulumi stack output report --json`, stacks/outputs.ts) must
 * have for the report loader (load.ts); tests check that the stack's own StackReport type fits it.
 */
import { z } from "zod";
import { resultRowSchema } from "../run/result-row.js";
import { mixExtrasSchema } from "../run/mix-job-result.js";
import { drillFileSchema } from "./drill-files.js";
import { transferFileSchema } from "../cost/transfer-record.js";

/** The verified topology as the post-deploy check saw it after the benchmark (stacks/outputs.ts summarizeTopology). */
export const topologySummarySchema = z.object({
  ok: z.boolean(),
  failureCodes: z.array(z.string()),
  failures: z.array(z.object({ code: z.string(), message: z.string(), node: z.string().optional() })),
  primaries: z.array(
    z.object({
      address: z.string(),
      zone: z.string().nullable(),
      slotRanges: z.array(z.string()),
      keys: z.number().nullable(),
      replicas: z.array(z.object({ address: z.string(), zone: z.string().nullable(), crossAz: z.boolean() })),
    }),
  ),
  primariesPerZone: z.record(z.string(), z.number()),
});

export type TopologySummary = z.infer<typeof topologySummarySchema>;

/** The fields of stacks/outputs.ts `StackReport` (schemaVersion 1) the report reads. */
export const stackReportSchema = z.object({
  schemaVersion: z.literal(1),
  project: z.literal("valkey-on-eks"),
  stack: z.string(),
  platform: z.string(),
  mode: z.enum(["cluster", "replication"]),
  pods: z.number().int(),
  zones: z.array(z.string()),
  /** null when `checks.verify` is false. */
  topology: topologySummarySchema.nullable(),
  /** `mix` added within schemaVersion 1 (a deployed mix); older reports lack it. */
  /**
   * `transfer` added within schemaVersion 1 (data transfer, benchmarks/cost/transfer-record.ts); older reports lack it.
   */
  benchmark: z
    .object({
      rows: z.array(resultRowSchema),
      csv: z.string(),
      mix: mixExtrasSchema.nullable().optional(),
      transfer: transferFileSchema.nullable().optional(),
    })
    .nullable(),
  /** Added within schemaVersion 1 (cost estimate); older reports lack it. */
  cost: z
    .object({
      region: z.string(),
      usdPerHour: z.number().nullable(),
      priceSource: z.string(),
      pricingApiError: z.string().nullable(),
      valkeyInstanceType: z.string().nullable(),
      clientInstanceType: z.string().nullable(),
      lines: z.array(
        z.object({
          item: z.string(),
          quantity: z.number(),
          unit: z.string(),
          usdPerHour: z.number().nullable(),
          source: z.string().nullable(),
          missing: z.string().optional(),
        }),
      ),
      missing: z.array(z.string()),
    })
    .nullable()
    .optional(),
  /**
   * Added within schemaVersion 1 (the FailureDrill step's results); older reports and stacks without drills lack it.
   */
  drills: z
    .array(drillFileSchema.omit({ timeline: true }))
    .nullable()
    .optional(),
  versions: z.object({
    valkeyImage: z.string(),
    server: z.string().nullable(),
    client: z.string().nullable(),
    kubernetesVersion: z.string().nullable(),
    karpenterChart: z.string().nullable(),
  }),
});

export type StackReportInput = z.infer<typeof stackReportSchema>;
