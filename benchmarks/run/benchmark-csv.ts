/**
 * Parses `valkey-benchmark --csv` / `redis-benchmark --csv` output:
 *
 *   "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
 *   "SET","79051.38","2.030","0.248","1.671","4.383","8.399","11.855"
 *
 * rps is requests / elapsed *whole milliseconds* as the tool measures them, so short runs give
 * coarse, quantised figures (and `inf` when a test finishes inside one millisecond). There is
 * no 1,000,000 rps cap in the tool.
 *
 * Tolerated around the CSV: blank lines, the preamble `--cluster` mode prints ("Cluster has
 * 3 master nodes:", "Master 0: <id> <host:port>") and `\r` progress fragments ("SET:
 * rps=... (overall: ...)"). Anything else, a truncated record, a missing header or a
 * non-numeric field is a BenchmarkOutputError quoting the offending line; no field is ever NaN.
 */
import { parse } from "csv-parse/sync";

export interface BenchmarkLine {
  /** As the tool prints it, upper case: `SET`, `GET`, `LRANGE_100 (first 100 elements)`. */
  test: string;
  /** Requests per second; Infinity only when parsed with `allowInfiniteRps`. */
  rps: number;
  avgMs: number;
  minMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class BenchmarkOutputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BenchmarkOutputError";
  }
}

export interface ParseBenchmarkCsvOptions {
  /**
   * Accept `inf` in the rps column (the test finished within the tool's 1 ms resolution) as
   * Infinity instead of failing. The runner uses it for first runs it re-runs anyway.
   */
  allowInfiniteRps?: boolean;
}

export const BENCHMARK_CSV_HEADER = [
  "test",
  "rps",
  "avg_latency_ms",
  "min_latency_ms",
  "p50_latency_ms",
  "p95_latency_ms",
  "p99_latency_ms",
  "max_latency_ms",
] as const;

const NUMERIC: readonly [Exclude<keyof BenchmarkLine, "test">, (typeof BENCHMARK_CSV_HEADER)[number]][] = [
  ["rps", "rps"],
  ["avgMs", "avg_latency_ms"],
  ["minMs", "min_latency_ms"],
  ["p50Ms", "p50_latency_ms"],
  ["p95Ms", "p95_latency_ms"],
  ["p99Ms", "p99_latency_ms"],
  ["maxMs", "max_latency_ms"],
];

/** Non-CSV lines the tool prints on stdout that carry no result. */
const PREAMBLE = [
  /^Cluster has \d+ master nodes:?$/,
  /^Master \d+: [0-9a-f]+ \S+$/,
  // Progress fragments: `SET: rps=0.0 (overall: -nan) avg_msec=-nan (overall: -nan)`.
  /^[A-Z][A-Z0-9_ ()]*: rps=/,
];

const DECIMAL = /^\d+(\.\d+)?([eE][+-]?\d+)?$/;

function quote(line: string): string {
  const clipped = line.length > 200 ? `${line.slice(0, 200)}…` : line;
  return `\`${clipped}\``;
}

function fields(line: string, lineNo: number): string[] {
  let rows: string[][];
  try {
    rows = parse(line, { relax_quotes: false, skip_empty_lines: true });
  } catch (err) {
    throw new BenchmarkOutputError(
      `benchmark output line ${lineNo} is not valid CSV (${(err as Error).message}): ${quote(line)}`,
    );
  }
  if (rows.length !== 1 || rows[0] === undefined) {
    throw new BenchmarkOutputError(`benchmark output line ${lineNo} is not one CSV record: ${quote(line)}`);
  }
  return rows[0];
}

function numberField(raw: string, column: string, allowInfinite: boolean, line: string, lineNo: number): number {
  const v = raw.trim();
  if (allowInfinite && column === "rps" && v === "inf") return Number.POSITIVE_INFINITY;
  if (!DECIMAL.test(v)) {
    const hint = v === "inf" ? " (the test finished within 1 ms; run more requests)" : "";
    throw new BenchmarkOutputError(
      `benchmark output line ${lineNo}: ${column} is ${JSON.stringify(raw)}, not a number${hint}: ${quote(line)}`,
    );
  }
  return Number(v);
}

/** Parses the result lines of one benchmark run; see the module comment for what is tolerated. */
export function parseBenchmarkCsv(text: string, opts: ParseBenchmarkCsvOptions = {}): BenchmarkLine[] {
  // `\r` separates progress fragments from each other and from real lines.
  const lines = text.split(/\r\n|\r|\n/);
  let header: Map<string, number> | undefined;
  const out: BenchmarkLine[] = [];
  lines.forEach((rawLine, i) => {
    const lineNo = i + 1;
    const line = rawLine.trim();
    if (line === "" || PREAMBLE.some((re) => re.test(line))) return;
    if (header === undefined) {
      if (!line.startsWith('"test"') && !line.startsWith("test,")) {
        throw new BenchmarkOutputError(
          `benchmark output has no CSV header (expected ${BENCHMARK_CSV_HEADER.map((h) => `"${h}"`).join(",")}); ` +
            `unexpected line ${lineNo}: ${quote(line)}`,
        );
      }
      const names = fields(line, lineNo).map((f) => f.trim());
      const missing = BENCHMARK_CSV_HEADER.filter((h) => !names.includes(h));
      if (missing.length > 0) {
        throw new BenchmarkOutputError(
          `benchmark CSV header on line ${lineNo} lacks ${missing.join(", ")}: ${quote(line)}`,
        );
      }
      header = new Map(names.map((n, idx) => [n, idx]));
      return;
    }
    const values = fields(line, lineNo);
    if (values.length !== header.size) {
      throw new BenchmarkOutputError(
        `benchmark output line ${lineNo} has ${values.length} field(s), the header has ${header.size} (truncated?): ${quote(line)}`,
      );
    }
    const get = (column: string): string => values[header?.get(column) ?? -1] ?? "";
    const test = get("test").trim();
    if (!/^[A-Z]/.test(test)) {
      throw new BenchmarkOutputError(`benchmark output line ${lineNo} has no test name: ${quote(line)}`);
    }
    const row: BenchmarkLine = { test, rps: 0, avgMs: 0, minMs: 0, p50Ms: 0, p95Ms: 0, p99Ms: 0, maxMs: 0 };
    for (const [key, column] of NUMERIC)
      row[key] = numberField(get(column), column, opts.allowInfiniteRps === true, line, lineNo);
    out.push(row);
  });
  if (header === undefined) {
    throw new BenchmarkOutputError(
      text.trim() === ""
        ? "benchmark output is empty (no CSV header, no results)"
        : "benchmark output has no CSV header line",
    );
  }
  if (out.length === 0)
    throw new BenchmarkOutputError("benchmark output has a CSV header but no result lines (truncated?)");
  return out;
}
