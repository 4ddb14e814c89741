/**
 * report.html: one self-contained page (inline CSS, inline SVG charts, no script, no external
 * font, stylesheet or image), built from the model and the charts already rendered to SVG.
 *
 * The page is an ordered list of sections (`SECTIONS`); a section whose data is absent renders
 * nothing. Where later sections go is marked below: each is one more entry
 * whose `render` returns null unless some source carries its data.
 */
import { html, jsonForScript, raw, type SafeHtml } from "./html.js";
import { seriesOf, type ReportInput } from "./model.js";
import { howToRead } from "./reading.js";
import { allRowsTable, setupSection, sideBySideTable, topologySection } from "./sections.js";
import { costSection } from "./cost-section.js";
import { transferSection } from "./transfer-section.js";
import { sweepSection } from "./sweep-section.js";
import { scaleSection } from "./scale-section.js";
import { drillSection } from "./drill-section.js";
import { soakSection } from "./soak-section.js";
import { loopSection } from "./loop-section.js";
import { sloSection } from "./slo-section.js";
import { verdictSection } from "./verdict-section.js";
import { readScaleOutSection } from "./read-scale-out-section.js";

/** Rendered charts by id (render.ts CHARTS): SVG markup from Vega, trusted. */
export type RenderedCharts = ReadonlyMap<string, { title: string; caption: string; svg: string }>;

export interface ReportSection {
  id: string;
  title: string;
  render: (input: ReportInput, charts: RenderedCharts) => SafeHtml | null;
}

function figures(charts: RenderedCharts, ids: string[]): SafeHtml | null {
  const present = ids.flatMap((id) => {
    const c = charts.get(id);
    return c ? [{ id, ...c }] : [];
  });
  if (present.length === 0) return null;
  return html`${present.map(
    (c) =>
      html`<figure class="chart" data-chart="${c.id}"><figcaption><strong>${c.title}</strong> ${c.caption}</figcaption>${raw(c.svg)}</figure>`,
  )}`;
}

export const SECTIONS: readonly ReportSection[] = [
  { id: "how-to-read", title: "How to read this", render: (i) => howToRead(i) },
  { id: "verdict", title: "When to use which", render: (i) => verdictSection(i) },
  { id: "side-by-side", title: "Side by side", render: (i) => sideBySideTable(i) },
  { id: "charts", title: "Throughput and latency", render: (_i, c) => figures(c, ["rps", "latency"]) },
  { id: "read-scale-out", title: "Read scale-out", render: (i) => readScaleOutSection(i) },
  { id: "topology", title: "Verified topology", render: (i) => topologySection(i) },
  {
    id: "scale",
    title: "Cost as the cluster grows",
    render: (i, c) => scaleSection(i, figures(c, ["scale-ladder"])),
  },
  { id: "sweep", title: "Shard-scaling sweep", render: (i, c) => sweepSection(i, figures(c, ["sweep"])) },
  { id: "slo", title: "Throughput at a latency target", render: (i, c) => sloSection(i, figures(c, ["slo"])) },
  { id: "loops", title: "Closed vs open loop", render: (i, c) => loopSection(i, figures(c, ["open-loop"])) },
  { id: "soak", title: "Soak", render: (i, c) => soakSection(i, figures(c, ["soak-load", "soak-memory"])) },
  {
    id: "drills",
    title: "Failure drills",
    render: (i, c) => drillSection(i, figures(c, ["drill-timeline", "drill-live-metrics"])),
  },
  { id: "cost", title: "Cost per topology", render: (i) => costSection(i) },
  { id: "transfer", title: "Data transfer", render: (i) => transferSection(i) },
  // A new section adds an optional field to ReportSource (model.ts), a loader branch (load.ts),
  // and, for a chart, an entry in render.ts CHARTS; it renders only when its data is present.
  { id: "setup", title: "Workload, versions and machine", render: (i) => setupSection(i) },
  { id: "rows", title: "All rows", render: (i) => allRowsTable(i) },
];

const CSS = `
:root { color-scheme: light; --fg: #1d2330; --muted: #5b6475; --line: #d9dde5; --bg-alt: #f5f7fa; --pass: #1a7f37; --fail: #cf222e; --warn: #9a6700; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--fg); margin: 0; line-height: 1.45; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 28px 64px; }
header h1 { margin: 0 0 4px; font-size: 1.6rem; }
header p { margin: 2px 0; color: var(--muted); }
nav { margin: 14px 0 8px; font-size: .92rem; }
nav a { margin-right: 14px; color: #0b5cad; text-decoration: none; }
section { margin-top: 30px; }
h2 { font-size: 1.25rem; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 1.05rem; margin: 18px 0 6px; }
h4 { margin: 12px 0 4px; font-size: .95rem; }
table { border-collapse: collapse; font-size: .9rem; margin: 8px 0; }
.table-wrap { overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
thead th { background: var(--bg-alt); }
th.group { text-align: center; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
td.missing { color: var(--muted); text-align: center; }
td.notes { font-size: .8rem; color: var(--muted); max-width: 360px; }
.sub { color: var(--muted); font-size: .85em; font-weight: normal; }
.note { color: var(--muted); font-size: .88rem; }
.pass { color: var(--pass); font-weight: 600; }
.fail { color: var(--fail); font-weight: 600; }
.warn { color: var(--warn); }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .88em; }
figure.chart { margin: 12px 0 22px; overflow-x: auto; }
figure.chart figcaption { margin-bottom: 6px; }
figure.chart svg { max-width: none; height: auto; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 16px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 4px 16px 12px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 4px 0; font-size: .9rem; }
dt { color: var(--muted); }
dd { margin: 0; }
ul.reading li { margin-bottom: 6px; }
@media print { nav { display: none; } section { break-inside: avoid-page; } }
`;

/** The whole page. `charts` holds SVG rendered from render.ts CHARTS specs. */
export function buildReportHtml(input: ReportInput, charts: RenderedCharts): string {
  const rendered = SECTIONS.flatMap((s) => {
    const body = s.render(input, charts);
    return body === null ? [] : [{ ...s, body }];
  });
  const series = seriesOf(input);
  const data = {
    generatedAt: input.generatedAt,
    sources: input.sources.map((s) => ({ label: s.label, kind: s.kind, rows: s.rows })),
  };
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="valkey-on-eks vbench report">
<title>${input.title}</title>
<style>${raw(CSS)}</style>
</head>
<body>
<main>
<header>
<h1>${input.title}</h1>
<p>${series.length > 0 ? `${series.length} series from ` : ""}${input.sources.length} source${input.sources.length === 1 ? "" : "s"}: ${input.sources
    .map((s) => s.label)
    .join(", ")} · rendered ${input.generatedAt}</p>
</header>
<nav>${rendered.map((s) => html`<a href="#${s.id}">${s.title}</a>`)}</nav>
${rendered.map(
  (s) => html`<section id="${s.id}">
<h2>${s.title}</h2>
<div class="table-wrap">${s.body}</div>
</section>
`,
)}
</main>
<script type="application/json" id="report-data">${raw(jsonForScript(data))}</script>
</body>
</html>
`;
  return page.value;
}
