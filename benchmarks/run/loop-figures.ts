/**
 * Closed loop and open loop side by side at the same throughput (loop-comparison.ts runs both):
 * the figures of each side's MIX row. Declared here, apart from the runner, so the mix's result
 * type can carry them without an import cycle.
 */
import type { ResultRow } from "./result-row.js";

/** One loop's MIX row, the figures the comparison shows. */
export interface LoopFigures {
  rps: number;
  requests: number;
  p50_ms: number;
  p99_ms: number;
  p999_ms: number;
  max_ms: number;
}

/** The same mix at the same rate: closed loop paced to it (closed-loop.ts), then open loop (open-loop.ts). */
export interface LoopComparison {
  /** Requests per second in total, both sides. */
  rate: number;
  durationSeconds: number;
  closed: LoopFigures;
  open: LoopFigures;
}

/** The figures of a mix's MIX row; throws when the rows have none (not a mix's rows). */
export function loopFigures(rows: readonly ResultRow[]): LoopFigures {
  const r = rows.find((x) => x.test === "MIX");
  if (r === undefined) throw new RangeError("loop comparison: the rows have no MIX row");
  return {
    rps: r.rps,
    requests: r.requests,
    p50_ms: r.p50_ms,
    p99_ms: r.p99_ms,
    p999_ms: r.p999_ms ?? r.max_ms,
    max_ms: r.max_ms,
  };
}
