/**
 * The zod shape of one ResultRow (result-row.ts), for rows that arrive as JSON from elsewhere: a
 * deployed stack's report (benchmarks/report/stack-report-schema.ts) and the benchmark Job's mix
 * result line (mix-job.ts). Declared once.
 */
import { z } from "zod";
import { RESULT_MODES, RESULT_TIMESTAMP_PATTERN, type ResultMode, type ResultRow } from "./result-row.js";

export const resultRowSchema = z.object({
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
  p999_ms: z.number().nonnegative().optional(),
  usd_per_hour: z.number().nonnegative().nullable().optional(),
  usd_per_million_ops_per_s: z.number().nonnegative().nullable().optional(),
  cross_zone_bytes_per_s: z.number().nonnegative().nullable().optional(),
  transfer_usd_per_hour: z.number().nonnegative().nullable().optional(),
  runs: z.int().min(1).optional(),
  rps_min: z.number().nonnegative().optional(),
  rps_max: z.number().nonnegative().optional(),
  p50_min_ms: z.number().nonnegative().optional(),
  p50_max_ms: z.number().nonnegative().optional(),
  p95_min_ms: z.number().nonnegative().optional(),
  p95_max_ms: z.number().nonnegative().optional(),
  p99_min_ms: z.number().nonnegative().optional(),
  p99_max_ms: z.number().nonnegative().optional(),
  client_cpu_pct: z.number().nonnegative().optional(),
  client_cores: z.number().positive().optional(),
  client_bound: z.boolean().optional(),
}) satisfies z.ZodType<ResultRow>;
