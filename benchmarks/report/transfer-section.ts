/**
 * The "Data transfer" section: summary.md's (local runs) and report.html's, from the transfer
 * files (benchmarks/cost/transfer-record.ts; raw/transfer-<mode>.json of a run directory, or a
 * stack report's `benchmark.transfer`). One row per measured test: the bytes per request, the
 * bytes per second that crossed zones at the row's rps (client, replication, cluster bus), their
 * price at the table's inter-AZ rate, and what reads from a member in the client's own zone would
 * save; then the placement assumed and what is not counted.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { transferFileSchema, type TransferFile, type TransferRecord } from "../cost/transfer-record.js";
import { fmtRps } from "./format.js";
import { html, type SafeHtml } from "./html.js";
import type { ReportInput } from "./model.js";

/** raw/transfer-<mode>.json of a run directory, replication before cluster; undefined when none. */
export function loadTransfers(dir: string): TransferFile[] | undefined {
  const out = (["replication", "cluster"] as const).flatMap((mode) => {
    const file = join(dir, "raw", `transfer-${mode}.json`);
    if (!existsSync(file)) return [];
    const parsed = transferFileSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (!parsed.success)
      throw new Error(
        `${file}: not a transfer file (${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message})`,
      );
    return [parsed.data];
  });
  return out.length === 0 ? undefined : out;
}

const mb = (bytesPerS: number | null): string =>
  bytesPerS === null ? "—" : (bytesPerS / 1e6).toFixed(bytesPerS >= 1e6 ? 2 : 4);
const usd = (n: number | null): string => (n === null ? "—" : `$${n.toFixed(n >= 1 ? 2 : 4)}`);
const perOp = (n: number): string => n.toFixed(1);

/** "clients spread evenly over zone-a, zone-b, zone-c: 2/3 of each member's client bytes cross" and the like. */
export function placementText(f: Pick<TransferFile, "placement" | "clientZones" | "mode">): string {
  const z = f.clientZones;
  if (f.placement === "spread")
    return `clients spread evenly over ${z.join(", ")} (cost.clientZones spread: ${z.length - 1}/${z.length} of each member's client bytes cross zones)`;
  const where =
    f.mode === "cluster" ? "the zone holding the most primaries, ties to the first by name" : "the primary's zone";
  return `every client in ${z.join(", ")} (cost.clientZones primary: ${where}; the bytes to members elsewhere cross)`;
}

/** "$0.01/GB each way (us-east-1, <source>)" or why there is no price. */
export function rateText(f: Pick<TransferFile, "rate">): string {
  const r = f.rate;
  return r.usdPerGBEachDirection === null
    ? `no inter-AZ rate (${r.missing ?? "missing"})`
    : `$${r.usdPerGBEachDirection}/GB in each direction (${r.region}; ${r.source})`;
}

/** The load generator's own count beside the members' (a mix): a check of the client bytes. */
function generatorText(r: TransferRecord): string {
  const g = r.generatorBytes;
  const members = r.members.reduce((n, m) => n + (m.clientBytes ?? 0), 0);
  if (g === undefined || r.requests === 0) return "";
  return `the load generator counted ${perOp((g.written + g.read) / r.requests)} B/op on its sockets (${g.written} written, ${g.read} read), the members ${perOp(members / r.requests)} B/op of client bytes`;
}

/** Cluster mode: how the bus figures were had ("; cluster bus: ..."), "" otherwise. */
function busText(f: TransferFile): string {
  const notes = [...new Set(f.records.flatMap((r) => (r.figures ? [r.figures.bus] : [])))];
  return f.mode === "cluster" && notes.length > 0 ? `; cluster bus: ${notes.join("; ")}` : "";
}

export const TRANSFER_NOT_COUNTED =
  "Not counted: the client → HAProxy hop of the write-endpoint rows (HAProxy's zone is not modelled; those rows count the HAProxy → primary bytes the member saw), Sentinel ↔ Sentinel traffic (the snapshots read the data members only: a Sentinel's own INFO would count it), NAT gateway per-GB processing (no benchmark byte goes through a NAT gateway), a mix's per-command split (INFO counts bytes per member, not per command: a mix's bytes are on its MIX row). Inside the members' client bytes, besides the benchmark: Sentinel's and HAProxy's checks, replicas' REPLCONF ACKs and the snapshots' own INFO (a few kB per test).";

const cells = (r: TransferRecord): string[] => {
  const f = r.figures;
  if (f === null) return [fmtRps(r.rps), `not measured: ${r.missing ?? "no figures"}`, "", "", "", "", "", "", ""];
  const saving = f.readSaving === null ? "—" : `${usd(r.readSavingUsdPerHour)} (${mb(f.readSaving)} MB/s)`;
  return [
    fmtRps(r.rps),
    perOp(f.clientBytesPerOp),
    perOp(f.replicationBytesPerOp),
    mb(f.crossZone.client),
    mb(f.crossZone.replication),
    mb(f.crossZone.bus),
    mb(f.crossZone.total),
    usd(r.usdPerHour),
    saving,
  ];
};

const HEAD = [
  "mode",
  "test",
  "path",
  "rps",
  "client B/op",
  "replication B/op",
  "crossing MB/s: client",
  "replication",
  "cluster bus",
  "total",
  "USD/h at the rate",
  "reads in the client's zone would save",
];

/** summary.md's section ([] when no file). */
export function renderTransferMarkdown(files: readonly TransferFile[]): string[] {
  if (files.length === 0) return [];
  const rows = files.flatMap((f) =>
    f.records.map((r) => [f.mode, r.test, r.path.replace(/^path: /, "") || "—", ...cells(r)]),
  );
  return [
    "## Data transfer",
    "",
    "Bytes that crossed zones during each test, from every member's INFO `total_net_input_bytes`, `total_net_output_bytes`, `total_net_repl_input_bytes`, `total_net_repl_output_bytes` (and CLUSTER INFO `cluster_stats_bytes_sent`) read before and after it, with each member's zone; per request, then at the row's rps. Priced at AWS's inter-AZ rate: what this traffic would cost per hour on AWS.",
    "",
    ...files.map((f) => `- ${f.mode}: ${placementText(f)}; ${rateText(f)}${busText(f)}.`),
    "",
    `| ${HEAD.join(" | ")} |`,
    `|${HEAD.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
    "",
    ...files.flatMap((f) =>
      f.records.flatMap((r) => (r.note === undefined ? [] : [`- ${f.mode} ${r.test}: ${r.note}.`])),
    ),
    ...files.flatMap((f) =>
      f.records.flatMap((r) => (r.generatorBytes === undefined ? [] : [`- ${f.mode} ${r.test}: ${generatorText(r)}.`])),
    ),
    "",
    TRANSFER_NOT_COUNTED,
    "",
  ];
}

/** report.html's section; null when no source carries a transfer file. */
export function transferSection(input: ReportInput): SafeHtml | null {
  const all = input.sources.flatMap((s) => (s.transfer ?? []).map((f) => ({ s, f })));
  if (all.length === 0) return null;
  const many = input.sources.length > 1;
  return html`<p class="note">Bytes that crossed zones during each test, from every member's INFO byte counters (and the cluster bus's CLUSTER INFO) read before and after it, with each member's zone; per request, then at the row's rps, priced at AWS's inter-AZ rate (what this traffic would cost per hour on AWS).</p>
<ul class="note">${all.map(({ s, f }) => html`<li>${many ? `${s.label} · ` : ""}${f.mode}: ${placementText(f)}; ${rateText(f)}${busText(f)}.</li>`)}</ul>
<table class="transfer" data-section="transfer">
<thead><tr>${(many ? ["source", ...HEAD] : HEAD).map((h, i) => html`<th${i >= (many ? 4 : 3) ? html` class="num"` : ""}>${h}</th>`)}</tr></thead>
<tbody>
${all.flatMap(({ s, f }) =>
  f.records.map((r) => {
    const c = cells(r);
    const lead = [...(many ? [s.label] : []), f.mode, r.test, r.path.replace(/^path: /, "") || "—"];
    return r.figures === null
      ? html`<tr data-mode="${f.mode}" data-test="${r.test}">${lead.map((x) => html`<td>${x}</td>`)}<td class="num">${c[0]}</td><td colspan="8" class="missing">${c[1]}</td></tr>\n`
      : html`<tr data-mode="${f.mode}" data-test="${r.test}">${lead.map((x) => html`<td>${x}</td>`)}${c.map((x) => html`<td class="num">${x}</td>`)}</tr>\n`;
  }),
)}</tbody>
</table>
${all.flatMap(({ f }) => f.records.flatMap((r) => (r.note === undefined ? [] : [html`<p class="note warn">${f.mode} ${r.test}: ${r.note}.</p>`])))}
<p class="note">${TRANSFER_NOT_COUNTED}</p>`;
}
