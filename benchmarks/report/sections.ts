/**
 * The report's content sections, each a pure function of the model returning escaped HTML, or
 * null when its data is absent (the section is then left out, with no placeholder content).
 */
import type { ResultRow } from "../run/result-row.js";
import { clientCpuText, isClientBound } from "../run/client-cpu.js";
import { rangeOf, type Figure } from "../run/run-spread.js";
import { fmtInt, fmtMs, fmtNumber, fmtRps, speedupParts } from "./format.js";
import { html, join, type SafeHtml } from "./html.js";
import {
  rowFor,
  seriesOf,
  speedupPairs,
  testsOf,
  type ReportInput,
  type ReportSource,
  type TopologyView,
} from "./model.js";

/** A figure's median, with its min–max under it over several runs; `extra` after it (a mark). */
export function figureCell(
  r: ResultRow,
  figure: Figure,
  fmt: (x: number) => string,
  extra: SafeHtml | string = "",
): SafeHtml {
  const x = rangeOf(r, figure);
  const spread =
    x.runs > 1 || x.min !== x.max ? html`<br><span class="sub range">${fmt(x.min)}–${fmt(x.max)}</span>` : "";
  return html`<td class="num">${fmt(x.median)}${spread}${extra}</td>`;
}

/** A client-bound row's mark (its load generator was the limit, not the server). */
function boundMark(r: ResultRow): SafeHtml | string {
  return isClientBound(r)
    ? html`<br><span class="warn client-bound" title="${clientCpuText(r)}">client-bound</span>`
    : "";
}

/** Per test: rps, p50, p99 of every series (median, min–max under it), then the cluster speedup of every pair. */
export function sideBySideTable(input: ReportInput): SafeHtml | null {
  const series = seriesOf(input);
  if (series.length === 0) return null;
  const pairs = speedupPairs(series);
  const cells = (r: ResultRow | undefined) =>
    r === undefined
      ? html`<td class="num missing">—</td><td class="num missing">—</td><td class="num missing">—</td>`
      : html`${figureCell(r, "rps", fmtRps, boundMark(r))}${figureCell(r, "p50", fmtMs)}${figureCell(r, "p99", fmtMs)}`;
  const speedup = (test: string) =>
    pairs.map((p) => {
      const c = rowFor(p.cluster, test);
      const r = rowFor(p.replication, test);
      const s = c && r ? speedupParts(c, r) : undefined;
      return s
        ? html`<td class="speedup">${s.rps}<br><span class="sub">${s.p50}</span></td>`
        : html`<td class="missing">—</td>`;
    });
  return html`<table class="side-by-side" data-section="side-by-side">
<thead>
<tr><th rowspan="2">Test</th>${series.map((s) => html`<th colspan="3" class="group" data-series="${s.name}">${s.name}</th>`)}${pairs.map(
    (p) => html`<th rowspan="2">Cluster speedup<br><span class="sub">${p.label}</span></th>`,
  )}</tr>
<tr>${series.map(() => html`<th class="num">rps</th><th class="num">p50 ms</th><th class="num">p99 ms</th>`)}</tr>
</thead>
<tbody>
${testsOf(input).map((t) => html`<tr data-test="${t}"><th scope="row">${t}</th>${series.map((s) => cells(rowFor(s, t)))}${speedup(t)}</tr>\n`)}</tbody>
</table>
<p class="note">Cluster speedup: cluster rps ÷ replication rps, and replication p50 ÷ cluster p50 (above 1× means cluster mode has the lower p50). Over several runs each figure is the median with the lowest–highest run under it, a ratio carries the range its runs allow, and "within run-to-run noise" means the two rps ranges overlap. <span class="warn">client-bound</span>: the load generator used ≥ 90 % of its cores, so that row is the client's limit, not the server's.</p>`;
}

function yesNo(b: boolean | null): string {
  return b === null ? "not recorded" : b ? "up" : "down";
}

function topologyBlock(source: ReportSource, t: TopologyView, showSource: boolean): SafeHtml {
  const verdict = t.ok
    ? html`<span class="pass">PASS</span>`
    : html`<span class="fail">FAIL</span> ${join(
        t.failures.map((f) => html`<code>${f.code}</code>`),
        ", ",
      )}`;
  const perZone = Object.entries(t.primariesPerZone)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([z, n]) => `${z}: ${n}`)
    .join(", ");
  const rows = t.shards.flatMap((s) => {
    const span = Math.max(1, s.replicas.length);
    const primary = html`<td rowspan="${span}"><code>${s.address}</code></td><td rowspan="${span}">${s.zone ?? "unknown"}</td><td rowspan="${span}">${
      s.slotRanges.length > 0 ? s.slotRanges.join(", ") : "—"
    }</td><td rowspan="${span}" class="num">${s.keys === null ? "—" : fmtInt(s.keys)}</td>`;
    if (s.replicas.length === 0) return [html`<tr>${primary}<td colspan="4" class="fail">no replica</td></tr>`];
    return s.replicas.map(
      (r, i) =>
        html`<tr>${i === 0 ? primary : ""}<td><code>${r.address}</code></td><td>${r.zone ?? "unknown"}</td><td class="${r.crossAz ? "pass" : "warn"}">${
          r.crossAz ? "✓ other zone" : "✗ same zone"
        }</td><td>${yesNo(r.linkUp)}</td></tr>`,
    );
  });
  return html`<div class="topology" data-mode="${t.mode}">
<h3>${showSource ? `${source.label} · ` : ""}${t.mode} mode: ${verdict}</h3>
<p>${t.nodeCount} nodes, ${t.shards.length} primar${t.shards.length === 1 ? "y" : "ies"} · zones: ${t.zones.join(", ") || "unknown"} · primaries per zone: ${perZone || "—"}</p>
<table class="pairs">
<thead><tr><th>Primary</th><th>Zone</th><th>Slots</th><th class="num">Keys</th><th>Replica</th><th>Zone</th><th>Pairing</th><th>Link</th></tr></thead>
<tbody>
${rows}</tbody>
</table>
${t.failures.length > 0 ? html`<ul class="failures">${t.failures.map((f) => html`<li><code>${f.code}</code> ${f.message}</li>`)}</ul>` : ""}
${t.notes.length > 0 ? html`<ul class="notes">${t.notes.map((n) => html`<li>${n}</li>`)}</ul>` : ""}
</div>`;
}

/** The verifier's topology per source and mode: zones, primary → replica pairs, verdict. */
export function topologySection(input: ReportInput): SafeHtml | null {
  const many = input.sources.length > 1;
  const blocks = input.sources.flatMap((s) => s.topology.map((t) => topologyBlock(s, t, many)));
  const without = input.sources.filter((s) => s.topology.length === 0 && s.rows.length > 0).map((s) => s.label);
  if (blocks.length === 0 && without.length === 0) return null;
  return html`${blocks}${
    without.length > 0 ? html`<p class="note">No verifier report recorded for: ${without.join(", ")}.</p>` : ""
  }<p class="note">Keys are counted by the verifier after the benchmark (DBSIZE per primary). Pairing ✓ means the replica is in a different zone from its primary.</p>`;
}

function dl(pairs: [string, string | number | null][]): SafeHtml {
  return html`<dl>${pairs.map(([k, v]) => html`<dt>${k}</dt><dd>${v === null ? "not recorded" : typeof v === "number" ? fmtNumber(v) : v}</dd>`)}</dl>`;
}

const KIND_LABEL: Record<ReportSource["kind"], string> = {
  "local-run": "local run",
  "endpoint": "endpoint benchmark (vbench bench)",
  "stack": "deployed stack",
  "results-csv": "results.csv",
};

/** Workload, versions, machine and environment, one card per source. */
export function setupSection(input: ReportInput): SafeHtml {
  return html`<div class="cards">${input.sources.map((s) => {
    const w = s.workload;
    const m = s.machine;
    return html`<div class="card" data-source="${s.label}">
<h3>${s.label}</h3>
<p class="sub">${KIND_LABEL[s.kind]} · <code>${s.path}</code></p>
<h4>Workload</h4>
${dl([
  ["Name", w.name],
  ["Tests", w.tests.join(", ")],
  ["Requests per test (-n)", w.requests],
  ["Connections (-c)", w.clients],
  ["Pipeline (-P)", w.pipeline],
  ["Value size (-d, bytes)", w.dataSize],
  ["Client threads (--threads)", w.threads],
  ["Keyspace (-r)", w.keyspaceLength],
  ["Minimum test duration (s)", w.minDurationSeconds],
])}
<h4>Versions</h4>
${dl(s.versions)}
<h4>Where it ran</h4>
<p>${s.environment}</p>
${s.describe.length > 0 ? html`<ul>${s.describe.map((d) => html`<li>${d}</li>`)}</ul>` : ""}
${
  m
    ? dl([
        ["CPU", m.cpuModel],
        ["CPUs", m.cpus],
        ["Memory", `${m.memoryGiB} GiB`],
        ["OS", m.os],
        ["Node.js", m.node],
      ])
    : s.kind === "local-run" || s.kind === "endpoint"
      ? html`<p class="note">Machine not recorded (no run.json: a run from before the report existed).</p>`
      : ""
}
</div>`;
  })}</div>`;
}

/** Every row in full, notes (re-runs) included. */
export function allRowsTable(input: ReportInput): SafeHtml | null {
  const series = seriesOf(input);
  if (series.length === 0) return null;
  return html`<table class="rows">
<thead><tr><th>Series</th><th>Test</th><th class="num">Runs</th><th class="num">Requests</th><th class="num">Duration s</th><th class="num">rps</th><th class="num">avg ms</th><th class="num">min ms</th><th class="num">p50 ms</th><th class="num">p95 ms</th><th class="num">p99 ms</th><th class="num">max ms</th><th>Client CPU</th><th>Notes</th></tr></thead>
<tbody>
${series.flatMap((s) =>
  s.rows.map(
    (r) =>
      html`<tr><td>${s.name}</td><td>${r.test}</td><td class="num">${r.runs ?? 1}</td><td class="num">${fmtInt(r.requests)}</td><td class="num">${r.duration_s.toFixed(2)}</td>${figureCell(
        r,
        "rps",
        fmtRps,
      )}<td class="num">${fmtMs(r.avg_ms)}</td><td class="num">${fmtMs(r.min_ms)}</td>${figureCell(r, "p50", fmtMs)}${figureCell(r, "p95", fmtMs)}${figureCell(
        r,
        "p99",
        fmtMs,
      )}<td class="num">${fmtMs(r.max_ms)}</td><td class="${isClientBound(r) ? "warn" : ""}">${clientCpuText(r)}</td><td class="notes">${r.notes}</td></tr>\n`,
  ),
)}</tbody>
</table>`;
}
