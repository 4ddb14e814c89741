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
 * Appended after `notes` when any row carries p99.9 (a mix's rows: the generator's histogram has
 * it; valkey-benchmark's --csv does not): an empty field is "not measured" (undefined).
 */
export const P999_CSV_COLUMNS = ["p999_ms"] as const satisfies readonly (keyof ResultRow)[];
/**
 * Appended last when any row carries a cost (a deployed stack's rows): written only then, so a
 * local results.csv keeps its columns; an empty field is a missing price (null).
 */
export const COST_CSV_COLUMNS = ["usd_per_hour", "usd_per_million_ops_per_s"] as const satisfies readonly (keyof ResultRow)[];

/**
 * Appended after the cost columns when any row carries a data transfer figure (benchmarks/cost/
 * transfer.ts): an empty field is "not measured" (null).
 */
export const TRANSFER_CSV_COLUMNS = ["cross_zone_bytes_per_s", "transfer_usd_per_hour"] as const satisfies readonly (keyof ResultRow)[];

type Column = (typeof RESULTS_CSV_COLUMNS)[number];
type OptionalColumn = (typeof P999_CSV_COLUMNS)[number] | (typeof COST_CSV_COLUMNS)[number] | (typeof TRANSFER_CSV_COLUMNS)[number];

/** The optional column groups, in their order after `notes`; each is written when any row carries one of its fields. */
const OPTIONAL_GROUPS: readonly { columns: readonly OptionalColumn[]; empty: null | undefined; what: string }[] = [
  { columns: P999_CSV_COLUMNS, empty: undefined, what: "a non-negative number or empty (not measured)" },
  { columns: COST_CSV_COLUMNS, empty: null, what: "a non-negative number or empty (no price)" },
  { columns: TRANSFER_CSV_COLUMNS, empty: null, what: "a non-negative number or empty (not measured)" },
];

const groupsOf = (rows: readonly ResultRow[]) => OPTIONAL_GROUPS.filter((g) => rows.some((r) => g.columns.some((c) => r[c] !== undefined)));

const STRING_COLUMNS = new Set<Column>(["workload", "mode", "test", "timestamp", "server_version", "client_version", "notes"]);
const INTEGER_COLUMNS = new Set<Column>(["clients", "pipeline", "datasize", "requests"]);

export class ResultsCsvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ResultsCsvError";
  }
}

export function renderResultsCsv(rows: readonly ResultRow[]): string {
  const columns: (Column | OptionalColumn)[] = [...RESULTS_CSV_COLUMNS, ...groupsOf(rows).flatMap((g) => g.columns)];
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

function optionalValue(rec: Record<string, string>, c: OptionalColumn, g: (typeof OPTIONAL_GROUPS)[number], lineNo: number): number | null | undefined {
  const raw = (rec[c] ?? "").trim();
  if (raw === "") return g.empty;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new ResultsCsvError(`results.csv line ${lineNo}: ${c} is ${JSON.stringify(rec[c])}, not ${g.what}`);
  return n;
}

function toRow(rec: Record<string, string>, lineNo: number, groups: readonly (typeof OPTIONAL_GROUPS)[number][]): ResultRow {
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
  const optional: Partial<Record<OptionalColumn, number | null>> = {};
  for (const g of groups)
    for (const c of g.columns) {
      const v = optionalValue(rec, c, g, lineNo);
      if (v !== undefined) optional[c] = v;
    }
  return { ...(out as unknown as ResultRow), ...(optional as Partial<ResultRow>) };
}

/** Reads what renderResultsCsv wrote (the header is RESULTS_CSV_COLUMNS, then optionally P999_CSV_COLUMNS, COST_CSV_COLUMNS and TRANSFER_CSV_COLUMNS, in that order). */
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
  // Every subset of the optional groups, in their order.
  const variants = OPTIONAL_GROUPS.reduce<(typeof OPTIONAL_GROUPS)[number][][]>((acc, g) => [...acc, ...acc.map((v) => [...v, g])], [[]]);
  const groups = variants.find((v) => [...RESULTS_CSV_COLUMNS, ...v.flatMap((g) => g.columns)].join(",") === header.join(","));
  if (groups === undefined) {
    throw new ResultsCsvError(
      `results.csv header is ${JSON.stringify(header.join(","))}, expected ${JSON.stringify(base)} (optionally followed by ${OPTIONAL_GROUPS.map((g) => `,${g.columns.join(",")}`).join(" then ")})`,
    );
  }
  return body.map((fields, i) => {
    if (fields.length !== header.length) {
      throw new ResultsCsvError(`results.csv line ${i + 2} has ${fields.length} fields, expected ${header.length}`);
    }
    return toRow(Object.fromEntries(header.map((h, j) => [h, fields[j] ?? ""])), i + 2, groups);
  });
}
