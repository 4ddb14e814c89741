/**
 * The drill table: one row per mode × fault, the figures as columns (drills.csv, summary.md,
 * terminal). Pure.
 */
import { stringify } from "csv-stringify/sync";
import { formatBound } from "./bounds.js";
import { formatKeyspaceStop, formatShardOutages, STOPPED_MS } from "./shard-outage.js";
import type { DrillResult } from "./drill-result.js";
import type { FailureKind } from "./ledger.js";
import { parseStreamName } from "./writers.js";
import { renderAlertsSeen, type AlertSeen } from "./alerts-seen.js";
import { renderAofAtKill } from "./aof-at-kill.js";

/** drills.csv's alerts cell: `name(pod) pending/firing/resolved` seconds from the fault, or `none` (watched, quiet). */
function alertsCell(rows: readonly AlertSeen[]): string {
  if (rows.length === 0) return "none";
  const s = (v: number | null): string => (v === null ? "-" : (v / 1000).toFixed(1));
  return rows
    .map(
      (r) =>
        // ≤: already active at the first sample read, so it began no later than that.
        `${r.alert}${r.pod === undefined ? "" : `(${r.pod})`} ${r.activeAtStart ? "≤" : ""}${s(r.pendingMs)}/${s(r.firingMs)}/${s(r.resolvedMs)}`,
    )
    .join("; ");
}

export const DRILL_CSV_COLUMNS = [
  "mode",
  "fault",
  "ok",
  "healed",
  "writeOutageMs",
  "writeOutageOpen",
  "recoveryMs",
  "detectionMs",
  "writes",
  "failedWrites",
  "ackedWrites",
  "lostAckedWrites",
  "waitedWrites",
  "lostWaitedWrites",
  "unknownWrites",
  "lostAckedOutsideBound",
  "unexpectedReplies",
  "waitWriterAckedWrites",
  "waitWriterLostAckedWrites",
  "waitWriterLostOutsideBound",
  "aggregateOutageMs",
  "stoppedSlots",
  "stoppedShare",
  "stoppedForMs",
  "shardOutages",
  "boundWrites",
  "boundFromMs",
  "boundToMs",
  "p50MsBefore",
  "p99MsBefore",
  "maxMsBefore",
  "p50MsDuring",
  "p99MsDuring",
  "maxMsDuring",
  "rate",
  "failureDetectionMs",
  "streams",
  "fault_description",
  "bound_reason",
  "failures",
  "alerts",
] as const;

type Row = Pick<
  DrillResult,
  | "rollSteps"
  | "mode"
  | "fault"
  | "ok"
  | "healed"
  | "writes"
  | "failedWrites"
  | "writeOutageMs"
  | "writeOutageOpen"
  | "recoveryMs"
  | "detectionMs"
  | "ackedWrites"
  | "lostAckedWrites"
  | "waitedWrites"
  | "lostWaitedWrites"
  | "unknownWrites"
  | "lostAckedOutsideBound"
  | "unexpectedReplies"
  | "waitWriter"
  | "aggregateOutageMs"
  | "shards"
  | "keyspaceStopped"
  | "failures"
  | "ackedLossBound"
  | "p50MsBefore"
  | "p99MsBefore"
  | "maxMsBefore"
  | "p50MsDuring"
  | "p99MsDuring"
  | "maxMsDuring"
  | "rate"
  | "faultDescription"
  | "alerts"
  | "aofAtKill"
> & {
  streams: { stream: string; failureKinds?: readonly FailureKind[] }[];
  timings: Pick<DrillResult["timings"], "failureDetectionMs">;
};

/** "NOREPLICAS … ×40 (+0.3…+1.5 s)" per no-WAIT stream that failed after the fault; empty when none did. */
export function formatFailureKinds(streams: Row["streams"]): string {
  const sec = (ms: number): string => `${ms < 0 ? "−" : "+"}${(Math.abs(ms) / 1000).toFixed(1)}`;
  return streams
    .filter((x) => parseStreamName(x.stream).writer === "no-wait" && (x.failureKinds ?? []).length > 0)
    .map(
      (x) =>
        `${x.stream}: ${(x.failureKinds ?? []).map((k) => `${k.error} ×${k.count} (${sec(k.firstMs)}…${sec(k.lastMs)} s)`).join(", ")}`,
    )
    .join("; ");
}

const cell = (v: number | null | boolean | string): string => (v === null ? "" : String(v));

export function drillCsvRow(r: Row): string[] {
  return DRILL_CSV_COLUMNS.map((c) => {
    if (c === "failureDetectionMs") return String(r.timings.failureDetectionMs);
    if (c === "streams") return r.streams.map((s) => s.stream).join(" ");
    if (c === "fault_description") return r.faultDescription;
    if (c === "bound_reason") return r.ackedLossBound?.reason ?? "";
    if (c === "boundWrites") return cell(r.ackedLossBound?.writes ?? null);
    if (c === "waitWriterAckedWrites") return cell(r.waitWriter?.ackedWrites ?? null);
    if (c === "waitWriterLostAckedWrites") return cell(r.waitWriter?.lostAckedWrites ?? null);
    if (c === "waitWriterLostOutsideBound") return cell(r.waitWriter?.lostAckedOutsideBound ?? null);
    if (c === "stoppedSlots") return cell(r.keyspaceStopped?.slots ?? null);
    if (c === "stoppedShare")
      return cell(r.keyspaceStopped === null ? null : Number(r.keyspaceStopped.share.toFixed(4)));
    if (c === "stoppedForMs") return cell(r.keyspaceStopped?.forMs ?? null);
    if (c === "shardOutages") return r.shards.map((x) => `${x.affected ? "*" : ""}${x.shard}=${x.outageMs}`).join(" ");
    if (c === "failures") return r.failures.join("; ");
    if (c === "boundFromMs") return cell(r.ackedLossBound?.fromMs ?? null);
    if (c === "boundToMs") return cell(r.ackedLossBound?.toMs ?? null);
    if (c === "alerts") return r.alerts === undefined ? "" : alertsCell(r.alerts);
    return cell(r[c]);
  });
}

export function renderDrillsCsv(rows: readonly Row[]): string {
  return stringify(rows.map(drillCsvRow), {
    header: true,
    columns: [...DRILL_CSV_COLUMNS],
    eof: true,
    record_delimiter: "unix",
  });
}

const ms = (v: number | null): string => (v === null ? "—" : String(Math.round(v)));
const lat = (v: number | null): string => (v === null ? "—" : v.toFixed(v < 10 ? 2 : 1));

const HEADER = [
  "mode",
  "fault",
  "ok",
  "healed",
  "outage ms",
  "keyspace stopped",
  "aggregate ms",
  "recovery ms",
  "detect ms",
  "failed",
  "acked",
  "lost acked (no WAIT)",
  "WAIT writer lost / acked",
  "waited",
  "lost waited",
  "unexpected",
  "unknown",
  "acked-loss bound",
  "p99 before",
  "p99 during",
  "max during",
];

function cells(r: Row): string[] {
  return [
    r.mode,
    r.fault,
    r.ok ? "yes" : "NO",
    r.healed ? "yes" : "NO",
    `${r.writeOutageOpen ? "≥ " : ""}${ms(r.writeOutageMs)}`,
    formatKeyspaceStop(r.keyspaceStopped),
    r.shards.length === 0 ? "—" : ms(r.aggregateOutageMs),
    ms(r.recoveryMs),
    ms(r.detectionMs),
    String(r.failedWrites),
    String(r.ackedWrites),
    String(r.lostAckedWrites),
    r.waitWriter === null ? "—" : `${r.waitWriter.lostAckedWrites} / ${r.waitWriter.ackedWrites}`,
    String(r.waitedWrites),
    String(r.lostWaitedWrites),
    r.unexpectedReplies > 0 ? `${r.unexpectedReplies} FAIL` : "0",
    String(r.unknownWrites),
    r.ackedLossBound === null
      ? "none"
      : `${formatBound(r.ackedLossBound)}${r.lostAckedOutsideBound > 0 ? ` ${r.lostAckedOutsideBound} OUTSIDE` : ""}`,
    lat(r.p99MsBefore),
    lat(r.p99MsDuring),
    lat(r.maxMsDuring),
  ];
}

/** Terminal table, columns aligned. */
export function renderDrillTable(rows: readonly Row[]): string {
  const all = [HEADER, ...rows.map(cells)];
  const widths = HEADER.map((_, c) => Math.max(...all.map((r) => (r[c] ?? "").length)));
  const line = (r: string[]): string =>
    r.map((v, c) => (c < 2 ? v.padEnd(widths[c] ?? 0) : v.padStart(widths[c] ?? 0))).join("  ");
  return [line(HEADER), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice().map((r) => line(cells(r)))].join(
    "\n",
  );
}

/** summary.md section: the table side by side (modes as row groups) and how to read it. */
export function renderDrillMarkdown(rows: readonly Row[]): string[] {
  if (rows.length === 0) return [];
  return [
    "## Failure drills",
    "",
    `| ${HEADER.join(" | ")} |`,
    `|${HEADER.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${cells(r).join(" | ")} |`),
    "",
    "- Two writers per client path (cluster: per shard, each shard's keys hash-tagged into it), side by side: a no-WAIT writer",
    "  (plain SET, as applications write) and a WAIT writer (SET pipelined with `WAIT 1` and ROLE). A write is acknowledged only",
    "  when SET answers exactly `OK`; unexpected: any other reply (never acknowledged; one fails the drill).",
    "- outage: replication, the longest gap between two acknowledged no-WAIT writes (worst client path); cluster, the affected",
    `  shard's (its own writer's longest gap); keyspace stopped: the share of the slots whose shard stopped ≥ ${STOPPED_MS / 1000} s, and the`,
    "  longest such stop; ≥: writes had not resumed when the load stopped, so the outage is at least that (the load's end,",
    "  not the recovery); aggregate: cluster, the longest gap of all shards' writes merged (secondary: other shards hide a",
    "  stopped one). recovery: fault → every member back and the verifier passing (zones included); detect: fault → first",
    "  node marking a killed member failed (— where nobody can see it).",
    "- failed / acked / lost acked: the no-WAIT writer's writes that errored, timed out or got an unexpected reply; that it",
    "  got `OK` for; acknowledged and missing after recovery. WAIT writer lost / acked: the same for the WAIT writer; waited:",
    "  its writes confirmed by `WAIT 1` in the same pipeline, by the node that acknowledged them while it was primary; lost",
    "  waited: those lost. unknown: keys no node answered for.",
    "- acked-loss bound: the most acknowledged writes the fault may cost as promised (the writes acknowledged in the window",
    "  around the fault, seconds relative to it), counted in the no-WAIT writer's writes; OUTSIDE counts its lost writes",
    "  acknowledged outside it. ok: healed, no unexpected reply, nothing unknown, no WAIT-confirmed write lost and every lost",
    "  acknowledged write of either writer inside the bound.",
    "- Latencies in ms: p99 of acknowledged writes in the 10 s before the fault, and from the fault to the end of the outage.",
    "",
    ...rows.map((r) => {
      const why = formatFailureKinds(r.streams);
      return (
        `- ${r.mode} ${r.fault}: ${r.faultDescription.replace(/\|/g, "\\|")}; bound: ${(r.ackedLossBound?.reason ?? "none").replace(/\|/g, "\\|")}` +
        (r.shards.length === 0 ? "" : `; per shard (* affected): ${formatShardOutages(r.shards)}`) +
        (why === "" ? "" : `; why writes failed: ${why.replace(/\|/g, "\\|")}`) +
        (r.failures.length === 0 ? "" : `; NOT ok: ${r.failures.join("; ").replace(/\|/g, "\\|")}`) +
        (r.alerts === undefined ? "" : `; alerts: ${renderAlertsSeen(r.alerts)}`) +
        (r.aofAtKill === undefined ? "" : `; ${renderAofAtKill(r.aofAtKill)}`)
      );
    }),
    "",
    ...(renderRollSteps(rows).length === 0
      ? []
      : ["### Rolling upgrade, step by step", "", ...renderRollSteps(rows), ""]),
  ];
}

/**
 * The `upgrade` drills' roll, step by step: what was restarted (or failed over) when, and how long until the verifier
 * passed again. Empty without upgrade rows.
 */
export function renderRollSteps(rows: readonly Pick<DrillResult, "mode" | "fault" | "rollSteps">[]): string[] {
  const rolled = rows.filter((r) => r.rollSteps !== undefined && r.rollSteps.length > 0);
  if (rolled.length === 0) return [];
  return [
    "| mode | # | step | started (s into the roll) | until the verifier passed (s) |",
    "|---|---|---|---|---|",
    ...rolled.flatMap((r) =>
      (r.rollSteps ?? []).map(
        (s, i) =>
          `| ${r.mode} | ${i + 1} | ${s.step} | ${(s.startMs / 1000).toFixed(1)} | ${(s.ms / 1000).toFixed(1)} |`,
      ),
    ),
  ];
}
