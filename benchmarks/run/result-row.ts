/**
 * One measured test: a line of results.csv (the seed's nine columns plus the ones it lacked),
 * declared once. Rows that arrive as JSON (a deployed stack's report, the benchmark Job's mix
 * result line) are parsed with `resultRowSchema`; `ResultRow` is its type.
 */
import { z } from "zod";

export const RESULT_MODES = ["cluster", "replication"] as const;

export type ResultMode = (typeof RESULT_MODES)[number];

/** `YYYYMMDD-HHMMSS`. */
export const RESULT_TIMESTAMP_PATTERN = /^\d{8}-\d{6}$/;

export const resultRowSchema = z.object({
  /** The workload's name tag. */
  workload: z.string(),
  mode: z.enum(RESULT_MODES),
  /** Upper case, as the benchmark tool prints it: `SET`. */
  test: z.string().min(1),
  /** Requests per second as the tool reports it: requests / elapsed whole milliseconds. */
  rps: z.number().nonnegative(),
  p50_ms: z.number().nonnegative(),
  clients: z.number().int(),
  pipeline: z.number().int(),
  datasize: z.number().int(),
  /** `YYYYMMDD-HHMMSS`, the seed's format (the run's start, UTC). */
  timestamp: z.string().regex(RESULT_TIMESTAMP_PATTERN, "not YYYYMMDD-HHMMSS"),
  p95_ms: z.number().nonnegative(),
  p99_ms: z.number().nonnegative(),
  /** Wall time of the benchmark process for this test, connection setup included. */
  duration_s: z.number().nonnegative(),
  /** Requests of the run reported (the re-run's when the test was re-run). */
  requests: z.number().int(),
  server_version: z.string(),
  client_version: z.string(),
  avg_ms: z.number(),
  min_ms: z.number(),
  max_ms: z.number(),
  /** e.g. `rerun: first run 0.42 s < 5 s; requests scaled 500000→6000000`, or `` */
  notes: z.string(),
  /**
   * p99.9, ms: a mix's rows (the generator's HdrHistogram); absent where the client reports none (valkey-benchmark).
   */
  p999_ms: z.number().nonnegative().optional(),
  /**
   * Appended cost columns (deployed stacks only; benchmarks/cost/): the stack's estimated on-demand
   * USD per hour, and that ÷ (rps ÷ 1e6). Absent on local runs; null when a price is missing.
   */
  usd_per_hour: z.number().nonnegative().nullable().optional(),
  usd_per_million_ops_per_s: z.number().nonnegative().nullable().optional(),
  /**
   * Appended data transfer columns (benchmarks/cost/transfer.ts): bytes per second that crossed
   * zones at this row's rps (replication, client traffic under the placement assumed, cluster
   * bus), and their USD per hour at the price table's inter-AZ rate (locally: what it would cost
   * on AWS). Absent when the run measured no transfer; null when this row's was not measured.
   */
  cross_zone_bytes_per_s: z.number().nonnegative().nullable().optional(),
  transfer_usd_per_hour: z.number().nonnegative().nullable().optional(),
  /**
   * Appended spread columns (run-spread.ts): how many runs the row's figures are the medians of,
   * and the lowest and highest value of rps, p50, p95 and p99 over those runs. Absent on a row of
   * one run written before `--repeat` existed (read as one run: its range is its value).
   */
  runs: z.int().min(1).optional(),
  rps_min: z.number().nonnegative().optional(),
  rps_max: z.number().nonnegative().optional(),
  p50_min_ms: z.number().nonnegative().optional(),
  p50_max_ms: z.number().nonnegative().optional(),
  p95_min_ms: z.number().nonnegative().optional(),
  p95_max_ms: z.number().nonnegative().optional(),
  p99_min_ms: z.number().nonnegative().optional(),
  p99_max_ms: z.number().nonnegative().optional(),
  /**
   * Appended client columns (client-cpu.ts): the load generator's CPU time over its wall time, in
   * percent of the cores it may use (`client_cores`: min(its threads, the CPUs it may run on, its
   * CPU limit)); `client_bound` when that is at least CLIENT_SATURATION. Absent when not measured.
   */
  client_cpu_pct: z.number().nonnegative().optional(),
  client_cores: z.number().positive().optional(),
  client_bound: z.boolean().optional(),
});

export type ResultRow = z.infer<typeof resultRowSchema>;

/** `YYYYMMDD-HHMMSS` in UTC. */
export function formatResultTimestamp(d: Date = new Date()): string {
  return d.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}
