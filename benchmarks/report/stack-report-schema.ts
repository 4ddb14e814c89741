/**
 * The shape a deployed stack's report (`pulumi stack output report --json`, stacks/outputs.ts) must
 * have for the report loader (load.ts); tests check that the stack's own StackReport type fits it.
 */
import { z } from "zod";
import { RESULT_MODES, RESULT_TIMESTAMP_PATTERN, type ResultMode } from "../run/result-row.js";

const resultRowSchema = z.object({
  workload: z.string(),
  mode: z.enum(RESULT_MODES as [ResultMode, ...ResultMode[]]),
  test: z.string().min(1),
  rps: z.number().nonnegative(),
  p50_ms: z.number().nonnegative(),
  clients: z.number().int(),
  pipeline: z.number().int(),
  datasize: z.number().int(),
  timestamp: z.string().regex(RESULT_TIMESTAMP_PATTERN, "not YYYYMMDD-HHMMSS"),
  p95_ms: z.number().nonnegative(),
  p99_ms: z.number().nonnegative(),
  duration_s: z.number().nonnegative(),
  requests: z.number().int(),
  server_version: z.string(),
  client_version: z.string(),
  avg_ms: z.number(),
  min_ms: z.number(),
  max_ms: z.number(),
  notes: z.string(),
  usd_per_hour: z.number().nonnegative().nullable().optional(),
  usd_per_million_ops_per_s: z.number().nonnegative().nullable().optional(),
});

/** The fields of stacks/outputs.ts `StackReport` (schemaVersion 1) the report reads. */
export const stackReportSchema = z.object({
  schemaVersion: z.literal(1),
  project: z.literal("valkey-on-eks"),
  stack: z.string(),
  platform: z.string(),
  mode: z.enum(["cluster", "replication"]),
  pods: z.number().int(),
  zones: z.array(z.string()),
  topology: z
    .object({
      ok: z.boolean(),
      failures: z.array(z.object({ code: z.string(), message: z.string() })),
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
    })
    .nullable(),
  benchmark: z.object({ rows: z.array(resultRowSchema), csv: z.string() }).nullable(),
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
  versions: z.object({
    valkeyImage: z.string(),
    server: z.string().nullable(),
    client: z.string().nullable(),
    kubernetesVersion: z.string().nullable(),
    karpenterChart: z.string().nullable(),
  }),
});

export type StackReportInput = z.infer<typeof stackReportSchema>;
