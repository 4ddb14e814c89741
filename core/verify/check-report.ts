/**
 * The topology check report: the verifier's report as plain JSON (unknowns null, no undefined),
 * declared once. The TopologyCheck step returns it as its `report` output (stack outputs), the
 * FailureDrill step keeps one per drill (`after`), and the stack report summarises it
 * (stacks/outputs.ts). The in-memory TopologyReport (verify-types.ts) derives its shared fields
 * from these parts, and to-check-report.ts projects it onto this shape; `verifierReportJsonSchema`
 * reads the JSON a TopologyReport is written as (`verify --json`, raw/verify-<mode>.json).
 */
import { z } from "zod";

/** A failure: a stable code (verify-types.ts FailureCode), its message and the node concerned, when one is. */
export const checkFailureSchema = z.object({
  code: z.string(),
  message: z.string(),
  /** `host:port` of the node concerned, when one is. */
  node: z.string().optional(),
});

export const checkReplicaSchema = z.object({
  address: z.string(),
  zone: z.string().nullable(),
  crossAz: z.boolean(),
  linkUp: z.boolean(),
});

export const checkPrimarySchema = z.object({
  address: z.string(),
  zone: z.string().nullable(),
  /** e.g. ["0-5460", "6000"]; empty (slotCount 0) in replication mode. */
  slotRanges: z.array(z.string()),
  slotCount: z.number().int().nonnegative(),
  /** DBSIZE on the primary; null when not counted or not reachable. */
  keys: z.number().int().nonnegative().nullable(),
});

export const checkShardSchema = z.object({ primary: checkPrimarySchema, replicas: z.array(checkReplicaSchema) });

/** One Sentinel as the verifier saw it. */
export const checkSentinelSchema = z.object({
  /** `host:port` as given. */
  address: z.string(),
  zone: z.string().nullable(),
  reachable: z.boolean(),
  /** Whether it names the primary the verifier checked. */
  agrees: z.boolean(),
  /** The primary it names (`host:port`); null when unreachable or it knows none. */
  primary: z.string().nullable(),
});

export const topologyCheckReportSchema = z.object({
  ok: z.boolean(),
  mode: z.enum(["cluster", "replication"]),
  failures: z.array(checkFailureSchema),
  shards: z.array(checkShardSchema),
  /** Primaries per known zone (primaries with no known zone are not counted here). */
  primariesPerZone: z.record(z.string(), z.number().int().nonnegative()),
  nodeCount: z.number().int().nonnegative(),
  /** Replication under Sentinel: the master name asked; absent otherwise. */
  masterName: z.string().optional(),
  /** Replication under Sentinel: every Sentinel's view; absent otherwise. */
  sentinels: z.array(checkSentinelSchema).optional(),
});

export type CheckFailure = z.infer<typeof checkFailureSchema>;
export type CheckReplica = z.infer<typeof checkReplicaSchema>;
export type CheckPrimary = z.infer<typeof checkPrimarySchema>;
export type CheckSentinel = z.infer<typeof checkSentinelSchema>;
/** The report as plain JSON (no undefined fields): what the stack outputs carry. */
export type TopologyCheckReport = z.infer<typeof topologyCheckReportSchema>;

/**
 * The JSON a TopologyReport is written as (`JSON.stringify`: the CLI's `--json`, a local run's
 * raw/verify-<mode>.json): the check report's fields, with what the verifier did not know absent
 * rather than null, plus its notes. Its other fields (node ids, lag, cluster state) are not read.
 */
export const verifierReportJsonSchema = topologyCheckReportSchema.extend({
  shards: z.array(
    checkShardSchema.extend({
      primary: checkPrimarySchema.partial({ zone: true, keys: true }),
      replicas: z.array(checkReplicaSchema.partial({ zone: true })),
    }),
  ),
  sentinels: z.array(checkSentinelSchema.partial({ zone: true, primary: true })).optional(),
  /** Informational observations that are not failures. */
  notes: z.array(z.string()).optional(),
});

export type VerifierReportJson = z.infer<typeof verifierReportJsonSchema>;
