/**
 * Builds the result row of a test's final run, shared by the local runner (benchmark-runner.ts)
 * and the benchmark Job's log parser (components/benchmark/job-log.ts). Pure.
 */
import type { Workload } from "../../vocabulary/workload.js";
import type { BenchmarkLine } from "./benchmark-csv.js";
import type { ResultMode, ResultRow } from "./result-row.js";

/** What a result row says about the run beyond the measurement itself. */
export interface ResultRowContext {
  workload: Workload;
  mode: ResultMode;
  timestamp: string;
  serverVersion: string;
  /** e.g. `valkey-benchmark 9.0.2`. */
  clientVersion: string;
}

const round = (x: number, digits: number): number => Number(x.toFixed(digits));

/** The row for the final run of a test: `m` is that run, `notes` what the re-run rule said. */
export function resultRow(
  c: ResultRowContext,
  m: { line: BenchmarkLine; requests: number; wallSeconds: number },
  notes: string,
): ResultRow {
  const w = c.workload;
  const l = m.line;
  return {
    workload: w.name,
    mode: c.mode,
    test: l.test,
    rps: l.rps,
    p50_ms: l.p50Ms,
    clients: w.clients,
    pipeline: w.pipeline,
    datasize: w.dataSize,
    timestamp: c.timestamp,
    p95_ms: l.p95Ms,
    p99_ms: l.p99Ms,
    duration_s: round(m.wallSeconds, 3),
    requests: m.requests,
    server_version: c.serverVersion,
    client_version: c.clientVersion,
    avg_ms: l.avgMs,
    min_ms: l.minMs,
    max_ms: l.maxMs,
    notes,
  };
}
