/**
 * The stack's report (`pulumi stack output report --json`): its one declaration. stacks/outputs.ts
 * writes it (its `StackReport` is this schema's type plus the parts whose types live above this
 * layer: the rollout, the restore check, the metrics, and the drills as the step records them);
 * the report loader (load.ts) and the stack sweep read it through `stackReportReadSchema`.
 * `STACK_REPORT_VERSION` changes whenever a field is removed or changes meaning; fields are only
 * ever added within a version.
 */
import { z } from "zod";
import { platformSchema } from "../../config/sections.js";
import { stackCostSchema } from "../cost/cost-model.js";
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

export const STACK_REPORT_VERSION = 1;

/** Where clients connect (in-cluster DNS names). */
export const endpointsSchema = z.object({
  namespace: z.string(),
  /** Replication: the primary Service; cluster: the client Service (any member; clients follow MOVED). */
  write: z.string(),
  /** Replication: the Service selecting replicas only; cluster: null (reads go to the owning shard). */
  read: z.string().nullable(),
  port: z.number().int(),
  /** Replication: the Sentinel Service for Sentinel-aware clients (ask it for `masterName`); cluster: null. */
  sentinel: z.string().nullable().optional(),
  /** Replication: the Sentinels' port (26379); cluster: null. */
  sentinelPort: z.number().int().nullable().optional(),
  /** Replication: the Sentinel master name; cluster: null. */
  masterName: z.string().nullable().optional(),
});
export type Endpoints = z.infer<typeof endpointsSchema>;

/** One Sentinel as the post-deploy check saw it. */
export const sentinelSummarySchema = z.object({
  address: z.string(),
  zone: z.string().nullable(),
  reachable: z.boolean(),
  /** Whether it names the primary the check verified. */
  agrees: z.boolean(),
});
export type SentinelSummary = z.infer<typeof sentinelSummarySchema>;

/**
 * What the benchmark gives the report: results.csv's rows and text. On eks the rows (and csv) carry the appended
 * `usd_per_hour` and `usd_per_million_ops_per_s`.
 */
export const benchmarkPartSchema = z.object({
  rows: z.array(resultRowSchema),
  csv: z.string(),
  /**
   * Added within schemaVersion 1: with `benchmark.mix`, the served shares, p99.9 and HdrHistogram text per row and the
   * open loop's series; null otherwise.
   */
  mix: mixExtrasSchema.nullable().optional(),
  /**
   * Added within schemaVersion 1: data transfer between zones (benchmarks/cost/stack-transfer.ts); absent before the
   * results are known.
   */
  transfer: transferFileSchema.nullable().optional(),
});
export type BenchmarkPart = z.infer<typeof benchmarkPartSchema>;

/** The report (schemaVersion 1) as the stack writes it, but for the parts stacks/outputs.ts adds. */
export const stackReportSchema = z.object({
  schemaVersion: z.literal(STACK_REPORT_VERSION),
  project: z.literal("valkey-on-eks"),
  stack: z.string(),
  platform: platformSchema.unwrap(),
  mode: z.enum(["cluster", "replication"]),
  /** P × (1 + M) or 1 + N. */
  pods: z.number().int(),
  zones: z.array(z.string()),
  endpoints: endpointsSchema,
  /** null when `checks.verify` is false. */
  topology: topologySummarySchema.nullable(),
  /** Replication: every Sentinel as the topology check saw it; null in cluster mode or without `checks.verify`. */
  sentinels: z.array(sentinelSummarySchema).nullable(),
  /** null when `benchmark.enabled` is false. */
  benchmark: benchmarkPartSchema.nullable(),
  /**
   * Added within schemaVersion 1: the estimated on-demand cost per hour (benchmarks/cost/), its lines, which instance
   * types were assumed, and `priceSource`; null on byo (the cluster is yours, its price unknown here).
   */
  cost: stackCostSchema.nullable(),
  /**
   * Added within schemaVersion 1: the failure drills (`drills.enabled`), one row per fault in order, as the report
   * reads them (the step writes more: components/steps/failure-drill/types.ts DeployedDrill); null when drills are off.
   */
  drills: z.array(drillFileSchema.omit({ timeline: true })).nullable(),
  /** Added within schemaVersion 1: drills.csv (one row per fault); null when drills are off. */
  drillsCsv: z.string().nullable(),
  /** Added within schemaVersion 1: which clock the drills' times come from; null when drills are off. */
  drillsNote: z.string().nullable(),
  versions: z.object({
    valkeyImage: z.string(),
    /** From the benchmark rows (the server's INFO and the client's --version); null without a benchmark. */
    server: z.string().nullable(),
    client: z.string().nullable(),
    kubernetesVersion: z.string().nullable(),
    karpenterChart: z.string().nullable(),
  }),
});
export type StackReportShape = z.infer<typeof stackReportSchema>;

/** What the readers accept: a schemaVersion 1 report written before a field was added lacks it. */
export const stackReportReadSchema = stackReportSchema.partial({
  sentinels: true,
  cost: true,
  drills: true,
  drillsCsv: true,
  drillsNote: true,
});
export type StackReportInput = z.infer<typeof stackReportReadSchema>;
