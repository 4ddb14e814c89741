/**
 * results.csv: the artifact to keep. The seed's nine columns come first and in its order, so
 * old tooling that reads `workload,mode,test,rps,p50_ms,clients,pipeline,datasize,timestamp`
 * still works; the measurements the seed lacked follow, and free-text notes last.
 */
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { RESULT_MODES, RESULT_TIMESTAMP_PATTERN, type ResultMode, type ResultRow } from "./result-row.js";
import { SPREAD_FIELDS } from "./run-spread.js";

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
 * Appended when any row carries a cost (a deployed stack's rows): written only then, so a
 * local results.csv keeps its columns; an empty field is a missing price (null).
 */
export const COST_CSV_COLUMNS = [
  "usd_per_hour",
  "usd_per_million_ops_per_s",
] as const satisfies readonly (keyof ResultRow)[];
/**
 * Appended after the cost columns when any row carries a data transfer figure (benchmarks/cost/
 * transfer.ts): an empty field is "not measured" (null).
 */
export const TRANSFER_CSV_COLUMNS = [
  "cross_zone_bytes_per_s",
  "transfer_usd_per_hour",
] as const satisfies readonly (keyof ResultRow)[];
/**
 * Appended after the transfer columns when any row carries its spread over runs (run-spread.ts: `--repeat`,
 * `benchmark.repeat`).
 */
export const SPREAD_CSV_COLUMNS = SPREAD_FIELDS;
/** Appended last when any row carries its client's CPU use (client-cpu.ts); empty = not measured. */
export const CLIENT_CPU_CSV_COLUMNS = [
  "client_cpu_pct",
  "client_cores",
  "client_bound",
] as const satisfies readonly (keyof ResultRow)[];

type Column = (typeof RESULTS_CSV_COLUMNS)[number];
type OptionalColumn =
  | (typeof P999_CSV_COLUMNS)[number]
  | (typeof COST_CSV_COLUMNS)[number]
  | (typeof TRANSFER_CSV_COLUMNS)[number]
  | (typeof SPREAD_CSV_COLUMNS)[number]
  | (typeof CLIENT_CPU_CSV_COLUMNS)[number];
type OptionalValue = number | boolean | null | undefined;

interface OptionalGroup {
  columns: readonly OptionalColumn[];
  /** What an empty field reads back as. */
  empty: null | undefined;
  /** What a field must be, for the error message. */
  what: string;
  /** The field's value, or undefined when it is not one. */
  parse: (raw: string, column: OptionalColumn) => OptionalValue;
}

const nonNegative = (raw: string): number | undefined => {
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
};
const spreadValue = (raw: string, column: OptionalColumn): number | undefined => {
  const n = nonNegative(raw);
  return column === "runs" && (n === undefined || !Number.isSafeInteger(n) || n < 1) ? undefined : n;
};
const clientValue = (raw: string, column: OptionalColumn): number | boolean | undefined =>
  column === "client_bound" ? ({ true: true, false: false } as Record<string, boolean>)[raw] : nonNegative(raw);

/** The optional column groups, in their order after `notes`; each is written when any row carries one of its fields. */
const OPTIONAL_GROUPS: readonly OptionalGroup[] = [
  {
    columns: P999_CSV_COLUMNS,
    empty: undefined,
    what: "a non-negative number or empty (not measured)",
    parse: nonNegative,
  },
  { columns: COST_CSV_COLUMNS, empty: null, what: "a non-negative number or empty (no price)", parse: nonNegative },
  {
    columns: TRANSFER_CSV_COLUMNS,
    empty: null,
    what: "a non-negative number or empty (not measured)",
    parse: nonNegative,
  },
  {
    columns: SPREAD_CSV_COLUMNS,
    empty: undefined,
    what: "a non-negative number (runs: a whole number ≥ 1) or empty (one run)",
    parse: spreadValue,
  },
  {
    columns: CLIENT_CPU_CSV_COLUMNS,
    empty: undefined,
    what: "a non-negative number (client_bound: true or false) or empty (not measured)",
    parse: clientValue,
  },
];

const groupsOf = (rows: readonly ResultRow[]) =>
  OPTIONAL_GROUPS.filter((g) => rows.some((r) => g.columns.some((c) => r[c] !== undefined)));

const STRING_COLUMNS = new Set<Column>([
  "workload",
  "mode",
  "test",
  "timestamp",
  "server_version",
  "client_version",
  "notes",
]);
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

function optionalValue(
  rec: Record<string, string>,
  c: OptionalColumn,
  g: OptionalGroup,
  lineNo: number,
): OptionalValue {
  const raw = (rec[c] ?? "").trim();
  if (raw === "") return g.empty;
  const v = g.parse(raw, c);
  if (v === undefined)
    throw new ResultsCsvError(`results.csv line ${lineNo}: ${c} is ${JSON.stringify(rec[c])}, not ${g.what}`);
  return v;
}

function toRow(rec: Record<string, string>, lineNo: number, groups: readonly OptionalGroup[]): ResultRow {
  const out: Record<string, string | number> = {};
  for (const c of RESULTS_CSV_COLUMNS) {
    const raw = rec[c] ?? "";
    if (STRING_COLUMNS.has(c)) {
      out[c] = raw;
      continue;
    }
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n) || (INTEGER_COLUMNS.has(c) && !Number.isSafeInteger(n))) {
      throw new ResultsCsvError(
        `results.csv line ${lineNo}: ${c} is ${JSON.stringify(raw)}, not a ${INTEGER_COLUMNS.has(c) ? "whole " : ""}number`,
      );
    }
    out[c] = n;
  }
  if (!RESULT_MODES.includes(out.mode as ResultMode)) {
    throw new ResultsCsvError(
      `results.csv line ${lineNo}: mode is ${JSON.stringify(out.mode)}, not cluster or replication`,
    );
  }
  if (!RESULT_TIMESTAMP_PATTERN.test(String(out.timestamp))) {
    throw new ResultsCsvError(
      `results.csv line ${lineNo}: timestamp ${JSON.stringify(out.timestamp)} is not YYYYMMDD-HHMMSS`,
    );
  }
  const optional: Partial<Record<OptionalColumn, OptionalValue>> = {};
  for (const g of groups)
    for (const c of g.columns) {
      const v = optionalValue(rec, c, g, lineNo);
      if (v !== undefined) optional[c] = v;
    }
  return { ...(out as unknown as ResultRow), ...(optional as Partial<ResultRow>) };
}

/**
 * Reads what renderResultsCsv wrote: the header is RESULTS_CSV_COLUMNS, then any of the optional
 * groups in their order (P999, COST, TRANSFER, SPREAD, CLIENT_CPU); a file written before a group
 * existed simply lacks it.
 */
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
  const variants = OPTIONAL_GROUPS.reduce<OptionalGroup[][]>((acc, g) => [...acc, ...acc.map((v) => [...v, g])], [[]]);
  const groups = variants.find(
    (v) => [...RESULTS_CSV_COLUMNS, ...v.flatMap((g) => g.columns)].join(",") === header.join(","),
  );
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
