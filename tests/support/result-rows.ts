/**
 * One results.csv row for tests that need a row but test something else (cost columns, the
 * program's report): a cluster-mode SET row with the seed workload's flags; `over` sets the
 * fields a test cares about.
 */
import type { ResultRow } from "../../benchmarks/run/result-row.js";

export function resultRow(over: Partial<ResultRow> = {}): ResultRow {
  return {
    workload: "cluster",
    mode: "cluster",
    test: "SET",
    rps: 1000,
    p50_ms: 0.5,
    clients: 50,
    pipeline: 16,
    datasize: 256,
    timestamp: "20260101-000000",
    p95_ms: 0.9,
    p99_ms: 1.2,
    duration_s: 5.1,
    requests: 5100,
    server_version: "9.0.2",
    client_version: "valkey-benchmark 9.0.2",
    avg_ms: 0.6,
    min_ms: 0.1,
    max_ms: 3,
    notes: "",
    ...over,
  };
}
