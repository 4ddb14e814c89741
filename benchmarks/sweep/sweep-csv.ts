/**
 * sweep.csv: one row per shard count × test of a shard-scaling sweep. The client CPU columns are
 * empty when the client's CPU was not measured (a sweep of a deployed stack: the client is the
 * in-cluster benchmark Job, not a process on this machine).
 */
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { z } from "zod";

export const SWEEP_CSV_COLUMNS = [
  "workload",
  "test",
  "shards",
  "replicas_per_primary",
  "rps",
  "p50_ms",
  "p99_ms",
  "scale",
  "exponent",
  "client_cpus",
  "client_cpu_pct",
  "client_saturated",
  "pinned",
  "duration_s",
  "timestamp",
  "server_version",
  "client_version",
  "notes",
] as const;

export interface SweepRow {
  workload: string;
  test: string;
  shards: number;
  replicas_per_primary: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** rps ÷ rps at the first step (same test); null when not computable. */
  scale: number | null;
  /** ln(scale) ÷ ln(shards ÷ first shards); null at the first step. */
  exponent: number | null;
  /** CPUs the benchmark client could run on; null when not measured. */
  client_cpus: number | null;
  /** Client CPU use as a percentage of min(client threads, client CPUs); null when not measured. */
  client_cpu_pct: number | null;
  /** The client, not the servers, was probably the limit (client_cpu_pct ≥ 90); null when not measured. */
  client_saturated: boolean | null;
  pinned: boolean;
  duration_s: number;
  timestamp: string;
  server_version: string;
  client_version: string;
  notes: string;
}

export class SweepCsvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SweepCsvError";
  }
}

const cell = (v: string | number | boolean | null): string =>
  v === null ? "" : typeof v === "number" ? String(Number(v.toFixed(6))) : String(v);

export function renderSweepCsv(rows: readonly SweepRow[]): string {
  return stringify(
    rows.map((r) => SWEEP_CSV_COLUMNS.map((c) => cell(r[c]))),
    { header: true, columns: [...SWEEP_CSV_COLUMNS], eof: true, record_delimiter: "unix" },
  );
}

const num = z.string().trim().min(1, "empty").transform(Number).pipe(z.number().finite());
const optNum = z
  .string()
  .trim()
  .transform((s) => (s === "" ? null : Number(s)))
  .pipe(z.number().finite().nullable());
const bool = z.enum(["true", "false"]).transform((s) => s === "true");

const rowSchema = z.object({
  workload: z.string(),
  test: z.string().min(1),
  shards: num.pipe(z.number().int().positive()),
  replicas_per_primary: num.pipe(z.number().int().nonnegative()),
  rps: num,
  p50_ms: num,
  p99_ms: num,
  scale: optNum,
  exponent: optNum,
  client_cpus: optNum.pipe(z.number().int().nonnegative().nullable()),
  client_cpu_pct: optNum,
  client_saturated: z.enum(["true", "false", ""]).transform((s) => (s === "" ? null : s === "true")),
  pinned: bool,
  duration_s: num,
  timestamp: z.string(),
  server_version: z.string(),
  client_version: z.string(),
  notes: z.string(),
});

/** Reads what renderSweepCsv wrote; errors name the line and column. */
export function parseSweepCsv(text: string): SweepRow[] {
  let records: Record<string, string>[];
  try {
    records = parse(text, { columns: true, skip_empty_lines: true });
  } catch (err) {
    throw new SweepCsvError(`sweep.csv is not valid CSV: ${(err as Error).message}`);
  }
  return records.map((rec, i) => {
    const parsed = rowSchema.safeParse(rec);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new SweepCsvError(
        `sweep.csv line ${i + 2}: ${issue?.path.join(".") ?? "?"}: ${issue?.message ?? "invalid"}`,
      );
    }
    return parsed.data;
  });
}
