/**
 * The verdict's cost line with data transfer (verdict.ts `cost`, extended here): per mode, the
 * bytes per second that crossed zones at the SET and GET rows' rps and their price per hour, the
 * client placement assumed, and what reads from a member in the client's own zone would save.
 * Where a mode's transfer was not measured the line says so and why, never 0. Its own module so
 * the verdict's other lines stay apart; it imports nothing of verdict.ts (no cycle).
 */
import type { TransferFile, TransferRecord } from "../cost/transfer-record.js";
import { REPLICATION_PATH_NOTES } from "../run/replication-paths.js";
import type { ResultMode } from "../run/result-row.js";
import { fmtRps } from "./format.js";
import type { ReportSource } from "./model.js";
import { placementText, rateText } from "./transfer-section.js";

interface Sides {
  replication: ReportSource | undefined;
  cluster: ReportSource | undefined;
}

const TESTS = ["SET", "GET", "MIX"] as const;

function fileOf(s: ReportSource | undefined, mode: ResultMode): TransferFile | undefined {
  return s?.transfer?.find((f) => f.mode === mode);
}

/**
 * The record of `test` a cost line speaks for: replication direct to the primary first (as the write ceiling), else the
 * last.
 */
function recordOf(f: TransferFile | undefined, test: string): TransferRecord | undefined {
  const all = (f?.records ?? []).filter((r) => r.test === test);
  return all.find((r) => r.path === REPLICATION_PATH_NOTES.direct) ?? all.at(-1);
}

const mbps = (b: number): string => `${(b / 1e6).toFixed(b >= 1e6 ? 1 : 3)} MB/s`;
const usd = (n: number | null): string => (n === null ? "no price" : `$${n.toFixed(n >= 1 ? 2 : 4)}/h`);

function say(mode: ResultMode, r: TransferRecord | undefined): string {
  if (r === undefined) return `${mode} not measured`;
  if (r.figures === null) return `${mode} not measured (${r.missing ?? "no figures"})`;
  return `${mode} ${mbps(r.figures.crossZone.total)} crossing zones, ${usd(r.usdPerHour)} at ${fmtRps(r.rps)} ops/s`;
}

/** The transfer clause and its sources; `measured` false when no mode has a figure. */
export function transferClause(i: Sides, priced: boolean): { text: string; from: string[]; measured: boolean } {
  const files = { replication: fileOf(i.replication, "replication"), cluster: fileOf(i.cluster, "cluster") };
  const both = [files.replication, files.cluster].filter((f): f is TransferFile => f !== undefined);
  if (both.length === 0)
    return {
      text: "Data transfer: not measured (no member's INFO byte counters were read for these rows: a local run or a deployed mix reads them).",
      from: [],
      measured: false,
    };
  const tests = TESTS.filter(
    (t) => recordOf(files.replication, t) !== undefined || recordOf(files.cluster, t) !== undefined,
  ).slice(0, 2);
  const parts = tests.map(
    (t) => `${t} ${say("replication", recordOf(files.replication, t))}; ${say("cluster", recordOf(files.cluster, t))}`,
  );
  const savings = (["replication", "cluster"] as const).flatMap((m) => {
    const r = recordOf(files[m], "GET");
    return r?.readSavingUsdPerHour === null || r?.readSavingUsdPerHour === undefined
      ? []
      : [`${m} ${usd(r.readSavingUsdPerHour)}`];
  });
  const placement = [...new Set(both.map((f) => placementText(f)))].join("; ");
  const measured = both.some((f) => f.records.some((r) => r.figures !== null));
  return {
    text:
      `Data transfer (${placement}; ${rateText(both[0] as TransferFile)}${priced ? "; included in the cost per 1M ops/s above where measured" : "; what this traffic would cost on AWS"}): ` +
      `${parts.length === 0 ? "no SET, GET or MIX row measured" : parts.join("; ")}.` +
      (savings.length === 0
        ? ""
        : ` Reads (GET) from a member in the client's own zone would save ${savings.join(", ")}.`),
    from: both.map(
      (f) =>
        `${f === files.replication ? (i.replication?.label ?? "?") : (i.cluster?.label ?? "?")}: ${f.mode} data transfer (raw/transfer-${f.mode}.json or benchmark.transfer)`,
    ),
    measured,
  };
}

/** The cost line with the transfer clause appended (its `measured` unchanged: transfer alone prices no node). */
export function withTransfer<L extends { text: string; from: string[] }>(line: L, i: Sides): L {
  const priced = [i.replication, i.cluster].some((s) =>
    (s?.rows ?? []).some((r) => typeof r.usd_per_hour === "number"),
  );
  const t = transferClause(i, priced);
  return { ...line, text: `${line.text} ${t.text}`, from: [...line.from, ...t.from] };
}
