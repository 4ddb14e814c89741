/**
 * The read scale-out rows (`--reads replicas`): the read tests measured on the replicas, each
 * against the same tests read from the primary (primaries) by the same client on the matching
 * path. Pure: the rows say everything in their `notes`, which this module alone writes and reads:
 *
 *   `<READ_PATHS[k].note> [<R> replicas vs <P> primaries]; served (INFO commandstats): ...`
 *
 * R is the number of replicas that served some of the reads (from their commandstats), P the
 * primaries the reads would otherwise go to (1 in replication mode). A row whose notes start with
 * a READ_PATHS note is a read-path row: the side-by-side table leaves it out (it compares the
 * primary paths), the read scale-out table pairs it with its baseline:
 *
 * - the last row of the same mode and test, measured by the same client (`client_version`), that
 *   is not a replica-read row, and whose notes start with the path's `baseline` note when it has
 *   one and such a row exists (replication: reads direct to the replicas against reads direct to
 *   the primary; through the read endpoint against through the write endpoint).
 *
 * Figures: replicas ÷ primary rps (aggregate), and per server: (replica rps ÷ R) ÷ (primary rps ÷ P),
 * each with the range the runs allow (run-spread.ts).
 */
import { READ_TESTS } from "../../vocabulary/workload.js";
import type { ResultMode, ResultRow } from "./result-row.js";
import { REPLICATION_PATH_NOTES } from "./replication-paths.js";
import { alignedLines, markdownLines } from "./text-table.js";
import { rangeOf, ratioRange, type Range } from "./run-spread.js";
import { figureCells, ratioText } from "./figure-text.js";

export interface ReadPath {
  /** The notes prefix. */
  note: string;
  /** Short name for tables. */
  label: string;
  /** Reads on the replicas (false: the primaries' baseline measured for this table only). */
  replicas: boolean;
  /** The notes prefix of the baseline rows, when the path has a matching primary path. */
  baseline?: string;
}

export const READ_PATHS = {
  replicasDirect: {
    note: "path: reads direct to the replicas (a mix's writes direct to the primary)",
    label: "direct to the replicas",
    replicas: true,
    baseline: REPLICATION_PATH_NOTES.direct,
  },
  readEndpoint: {
    note: "path: reads through the HAProxy read endpoint (role:slave check) -> replicas (a mix's writes through the write endpoint)",
    label: "HAProxy read endpoint",
    replicas: true,
    baseline: REPLICATION_PATH_NOTES.endpoint,
  },
  readTargets: {
    note: "path: reads on the --read-target endpoints (a mix's writes to the target)",
    label: "--read-target",
    replicas: true,
  },
  clusterReplicas: {
    note: "path: reads from the replicas (READONLY)",
    label: "replicas (READONLY)",
    replicas: true,
  },
  clusterPrimaries: {
    note: "path: reads from the primaries",
    label: "primaries",
    replicas: false,
  },
} as const satisfies Record<string, ReadPath>;

export type ReadPathKey = keyof typeof READ_PATHS;

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** The notes prefix of a read-path row: the path, then the servers in brackets. */
export function readPathNote(path: ReadPathKey, servers: { replicas?: number; primaries: number }): string {
  const p = READ_PATHS[path];
  const primaries = plural(servers.primaries, "primary", "primaries");
  return p.replicas
    ? `${p.note} [${plural(servers.replicas ?? 0, "replica", "replicas")} vs ${primaries}]`
    : `${p.note} [${primaries}]`;
}

export interface ParsedReadPath {
  key: ReadPathKey;
  path: ReadPath;
  replicas: number | undefined;
  primaries: number;
}

/** The read path a row's notes name, or undefined for any other row. */
export function parseReadPath(notes: string): ParsedReadPath | undefined {
  for (const [key, path] of Object.entries(READ_PATHS) as [ReadPathKey, ReadPath][]) {
    if (!notes.startsWith(`${path.note} [`)) continue;
    const rest = notes.slice(path.note.length);
    const m = path.replicas
      ? /^ \[(\d+) replicas? vs (\d+) primar(?:y|ies)\]/.exec(rest)
      : /^ \[(\d+) primar(?:y|ies)\]/.exec(rest);
    if (m === null) continue;
    return path.replicas
      ? { key, path, replicas: Number(m[1]), primaries: Number(m[2]) }
      : { key, path, replicas: undefined, primaries: Number(m[1]) };
  }
  return undefined;
}

/**
 * A row measured for the read scale-out table (on the replicas, or its primaries' baseline): the side-by-side leaves it
 * out.
 */
export function isReadPathRow(r: Pick<ResultRow, "notes">): boolean {
  return parseReadPath(r.notes) !== undefined;
}

export interface ReadScaleOutPair {
  mode: ResultMode;
  test: string;
  path: ReadPath;
  primary: ResultRow;
  replica: ResultRow;
  replicas: number;
  primaries: number;
  /** replica rps ÷ primary rps (all servers together). */
  rpsRatio: number;
  /** (replica rps ÷ replicas) ÷ (primary rps ÷ primaries): what one replica does against one primary. */
  perServerRatio: number;
  /** The two ratios with the range the runs allow (NaN where not computable). */
  rpsRange: Range;
  perServerRange: Range;
}

const READ_ROW_TESTS = new Set(READ_TESTS.map((t) => t.toUpperCase()));

/**
 * Every replica-read row of a read test, or a mix's MIX row, with its baseline (rows without one
 * are left out; so are a mix's write rows, which went to the primary on both sides). A MIX row has
 * no per-server ratio: its writes went to the primaries.
 */
export function readScaleOutPairs(rows: readonly ResultRow[]): ReadScaleOutPair[] {
  const out: ReadScaleOutPair[] = [];
  for (const r of rows) {
    const p = parseReadPath(r.notes);
    if (p === undefined || !p.path.replicas || !(READ_ROW_TESTS.has(r.test) || r.test === "MIX")) continue;
    const candidates = rows.filter(
      (x) =>
        x.mode === r.mode &&
        x.test === r.test &&
        x.client_version === r.client_version &&
        parseReadPath(x.notes)?.path.replicas !== true,
    );
    const matching =
      p.path.baseline === undefined ? [] : candidates.filter((x) => x.notes.startsWith(p.path.baseline as string));
    const primary = (matching.length > 0 ? matching : candidates).at(-1);
    if (primary === undefined) continue;
    const replicas = p.replicas ?? 0;
    const rpsRange = ratioRange(rangeOf(r, "rps"), rangeOf(primary, "rps"));
    const scale = READ_ROW_TESTS.has(r.test) && replicas > 0 ? p.primaries / replicas : Number.NaN;
    const perServerRange = {
      ...rpsRange,
      median: rpsRange.median * scale,
      min: rpsRange.min * scale,
      max: rpsRange.max * scale,
    };
    out.push({
      mode: r.mode,
      test: r.test,
      path: p.path,
      primary,
      replica: r,
      replicas,
      primaries: p.primaries,
      rpsRatio: rpsRange.median,
      perServerRatio: perServerRange.median,
      rpsRange,
      perServerRange,
    });
  }
  return out;
}

export const READ_SCALE_OUT_HEADER = [
  "mode",
  "test",
  "replica path",
  "primary rps",
  "p50 ms",
  "p99 ms",
  "replicas rps",
  "p50 ms",
  "p99 ms",
  "servers",
  "replicas ÷ primary rps",
  "per replica ÷ per primary",
];

/** Plain cells, one row per pair (figures and ratios with their min–max over several runs). */
export function readScaleOutCells(pairs: readonly ReadScaleOutPair[]): string[][] {
  const ratio = (r: Range): string => (Number.isFinite(r.median) ? ratioText(r) : "n/a");
  return pairs.map((p) => [
    p.mode,
    p.test,
    p.path.label,
    ...figureCells(p.primary),
    ...figureCells(p.replica),
    `${p.replicas} vs ${p.primaries}`,
    ratio(p.rpsRange),
    ratio(p.perServerRange),
  ]);
}

/** What every reading of the table must carry: on one machine the ratio proves the path, not the scale-out. */
export const READ_SCALE_OUT_CAVEAT =
  "servers: replicas that served the reads vs primaries they would otherwise go to. On one machine every server and the client share its cores, so the ratios prove the path, not the scale-out; on separate nodes they measure it.";

/** Terminal text: a title line, aligned columns, the caveat. */
export function renderReadScaleOutTable(pairs: readonly ReadScaleOutPair[]): string {
  if (pairs.length === 0) return "";
  return [
    "read scale-out: the read tests on the replicas vs on the primary (same client, matching path)",
    ...alignedLines(READ_SCALE_OUT_HEADER, readScaleOutCells(pairs), 3),
    READ_SCALE_OUT_CAVEAT,
  ].join("\n");
}

/** summary.md section. */
export function renderReadScaleOutMarkdown(pairs: readonly ReadScaleOutPair[]): string[] {
  if (pairs.length === 0) return [];
  return [
    "## Read scale-out",
    "",
    "The read tests measured on the replicas (`--reads replicas`), each against the same tests read from the primary (primaries)",
    "by the same client on the matching path. Which server served every read is counted from INFO commandstats (the rows' notes).",
    READ_SCALE_OUT_CAVEAT,
    "",
    ...markdownLines(READ_SCALE_OUT_HEADER, readScaleOutCells(pairs)),
    "",
  ];
}
