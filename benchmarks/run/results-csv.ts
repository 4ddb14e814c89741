/**
 * results.csv: the artifact to keep. The seed's nine columns come first and in its order, so
 * old tooling that reads `workload,mode,test,rps,p50_ms,clients,pipeline,datasize,timestamp`
 * still works; the measurements the seed lacked follow, and free-text notes last.
 */
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { RESULT_MODES, RESULT_TIMESTAMP_PATTERN, type ResultMode, type ResultRow } from "./result-row.js";

export const RESULTS_CSV_COLUMNS = [
  "workload",
  "mode",
  "test",
  "rps",
  "p50_ms",
  "clients",
  "pipeline",
  "datasize",
  "timestamp",
  "p95_ms",
  "p99_ms",
  "duration_s",
  "requests",
  "server_version",
  "client_version",
  "avg_ms",
  "min_ms",
  "max_ms",
  "notes",
] as const satisfies readonly (keyof ResultRow)[];

/**
 * Appended after `notes` when any row carries a cost (a deployed stack's rows): written only
 * then, so a local results.csv keeps its columns; an empty field is a missing price (null).
 */
export const COST_CSV_COLUMNS = ["usd_per_hour", "usd_per_million_ops_per_s"] as const satisfies readonly (keyof ResultRow)[];

type Column = (typeof RESULTS_CSV_COLUMNS)[number];
type CostColumn = (typeof COST_CSV_COLUMNS)[number];

const hasCost = (rows: readonly ResultRow[]): boolean => rows.some((r) => COST_CSV_COLUMNS.some((c) => r[c] !== undefined));

const STRING_COLUMNS = new Set<Column>(["workload", "mode", "test", "timestamp", "server_version", "client_version", "notes"]);
const INTEGER_COLUMNS = new Set<Column>(["clients", "pipeline", "datasize", "requests"]);

export class ResultsCsvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ResultsCsvError";
  }
}

export function renderResultsCsv(rows: readonly ResultRow[]): string {
  const columns: (Column | CostColumn)[] = hasCost(rows) ? [...RESULTS_CSV_COLUMNS, ...COST_CSV_COLUMNS] : [...RESULTS_CSV_COLUMNS];
  return stringify(
    rows.map((r) =>
      columns.map((c) => {
        const v = r[c];
        if (typeof v === "number" && !Number.isFinite(v)) {
          throw new ResultsCsvError(`cannot write ${c}=${v} for ${r.mode} ${r.test}: not a finite number`);
        }
        return v === null || v === undefined ? "" : String(v);
      }),
    ),
    { header: true, columns, eof: true, record_delimiter: "unix" },
  );
}

function costValue(rec: Record<string, string>, c: CostColumn, lineNo: number): number | null {
  const raw = (rec[c] ?? "").trim();
  if (raw === "") return null;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0)
    throw new ResultsCsvError(`results.csv line ${lineNo}: ${c} is ${JSON.stringify(rec[c])}, not a non-negative number or empty`);
  return n;
}

function toRow(rec: Record<string, string>, lineNo: number, withCost: boolean): ResultRow {
  const out: Record<string, string | number> = {};
  for (const c of RESULTS_CSV_COLUMNS) {
    const raw = rec[c] ?? "";
    if (STRING_COLUMNS.has(c)) {
      out[c] = raw;
      continue;
    }
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n) || (INTEGER_COLUMNS.has(c) && !Number.isSafeInteger(n))) {
      throw new ResultsCsvError(`results.csv line ${lineNo}: ${c} is ${JSON.stringify(raw)}, not a ${INTEGER_COLUMNS.has(c) ? "whole " : ""}number`);
    }
    out[c] = n;
  }
  if (!RESULT_MODES.includes(out.mode as ResultMode)) {
    throw new ResultsCsvError(`results.csv line ${lineNo}: mode is ${JSON.stringify(out.mode)}, not cluster or replication`);
  }
  if (!RESULT_TIMESTAMP_PATTERN.test(String(out.timestamp))) {
    throw new ResultsCsvError(`results.csv line ${lineNo}: timestamp ${JSON.stringify(out.timestamp)} is not YYYYMMDD-HHMMSS`);
  }
  const row = out as unknown as ResultRow;
  if (withCost) for (const c of COST_CSV_COLUMNS) row[c] = costValue(rec, c, lineNo);
  return row;
}

/** Reads what renderResultsCsv wrote (the header is RESULTS_CSV_COLUMNS, optionally + COST_CSV_COLUMNS). */
export function parseResultsCsv(text: string): ResultRow[] {
  let records: string[][];
  try {
    records = parse(text, { skip_empty_lines: true });
  } catch (err) {
    throw new ResultsCsvError(`results.csv is not valid CSV: ${(err as Error).message}`);
  }
  const [header, ...body] = records;
  if (header === undefined) throw new ResultsCsvError("results.csv is empty");
  const base = RESULTS_CSV_COLUMNS.join(",");
  const withCost = [...RESULTS_CSV_COLUMNS, ...COST_CSV_COLUMNS].join(",");
  if (header.join(",") !== base && header.join(",") !== withCost) {
    throw new ResultsCsvError(
      `results.csv header is ${JSON.stringify(header.join(","))}, expected ${JSON.stringify(base)} (optionally followed by ,${COST_CSV_COLUMNS.join(",")})`,
    );
  }
  return body.map((fields, i) => {
    if (fields.length !== header.length) {
      throw new ResultsCsvError(`results.csv line ${i + 2} has ${fields.length} fields, expected ${header.length}`);
    }
    return toRow(Object.fromEntries(header.map((h, j) => [h, fields[j] ?? ""])), i + 2, header.length > RESULTS_CSV_COLUMNS.length);
  });
}
