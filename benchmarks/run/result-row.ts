/** One measured test: a line of results.csv (the seed's nine columns plus the ones it lacked). */

export type ResultMode = "cluster" | "replication";

export interface ResultRow {
  /** The workload's name tag. */
  workload: string;
  mode: ResultMode;
  /** Upper case, as the benchmark tool prints it: `SET`. */
  test: string;
  /** Requests per second as the tool reports it: requests / elapsed whole milliseconds. */
  rps: number;
  p50_ms: number;
  clients: number;
  pipeline: number;
  datasize: number;
  /** `YYYYMMDD-HHMMSS`, the seed's format (the run's start, UTC). */
  timestamp: string;
  p95_ms: number;
  p99_ms: number;
  /** Wall time of the benchmark process for this test, connection setup included. */
  duration_s: number;
  /** Requests of the run reported (the re-run's when the test was re-run). */
  requests: number;
  server_version: string;
  client_version: string;
  avg_ms: number;
  min_ms: number;
  max_ms: number;
  /** e.g. `rerun: first run 0.42 s < 5 s; requests scaled 500000→6000000`, or `` */
  notes: string;
  /** p99.9, ms: a mix's rows (the generator's HdrHistogram); absent where the client reports none (valkey-benchmark). */
  p999_ms?: number;
  /**
   * Appended cost columns (deployed stacks only; benchmarks/cost/): the stack's estimated on-demand
   * USD per hour, and that ÷ (rps ÷ 1e6). Absent on local runs; null when a price is missing.
   */
  usd_per_hour?: number | null;
  usd_per_million_ops_per_s?: number | null;
  /**
   * Appended data transfer columns (benchmarks/cost/transfer.ts): bytes per second that crossed
   * zones at this row's rps (replication, client traffic under the placement assumed, cluster
   * bus), and their USD per hour at the price table's inter-AZ rate (locally: what it would cost
   * on AWS). Absent when the run measured no transfer; null when this row's was not measured.
   */
  cross_zone_bytes_per_s?: number | null;
  transfer_usd_per_hour?: number | null;
  /**
   * Appended spread columns (run-spread.ts): how many runs the row's figures are the medians of,
   * and the lowest and highest value of rps, p50, p95 and p99 over those runs. Absent on a row of
   * one run written before `--repeat` existed (read as one run: its range is its value).
   */
  runs?: number;
  rps_min?: number;
  rps_max?: number;
  p50_min_ms?: number;
  p50_max_ms?: number;
  p95_min_ms?: number;
  p95_max_ms?: number;
  p99_min_ms?: number;
  p99_max_ms?: number;
  /**
   * Appended client columns (client-cpu.ts): the load generator's CPU time over its wall time, in
   * percent of the cores it may use (`client_cores`: min(its threads, the CPUs it may run on, its
   * CPU limit)); `client_bound` when that is at least CLIENT_SATURATION. Absent when not measured.
   */
  client_cpu_pct?: number;
  client_cores?: number;
  client_bound?: boolean;
}

export const RESULT_MODES: readonly ResultMode[] = ["cluster", "replication"];

/** `YYYYMMDD-HHMMSS`. */
export const RESULT_TIMESTAMP_PATTERN = /^\d{8}-\d{6}$/;

/** `YYYYMMDD-HHMMSS` in UTC. */
export function formatResultTimestamp(d: Date = new Date()): string {
  return d.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}
