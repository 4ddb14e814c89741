/**
 * The cost section: per test, each series' USD per hour and USD per million ops/s side by side
 * (the appended results.csv columns of a deployed stack), then each stack's estimate: instance
 * types assumed, what is counted, where the prices came from. Renders only when some row
 * carries a cost.
 */
import type { ResultRow } from "../run/result-row.js";
import { fmtRps } from "./format.js";
import { html, type SafeHtml } from "./html.js";
import { rowFor, seriesOf, testsOf, type ReportInput, type ReportSource } from "./model.js";

const usd = (n: number | null | undefined, digits: number): string =>
  n === null || n === undefined ? "—" : `$${n.toFixed(digits)}`;

function costCells(r: ResultRow | undefined) {
  if (r === undefined || r.usd_per_hour === undefined)
    return html`<td class="num missing">—</td><td class="num missing">—</td><td class="num missing">—</td>`;
  return html`<td class="num">${fmtRps(r.rps)}</td><td class="num">${usd(r.usd_per_hour, 4)}</td><td class="num">${usd(r.usd_per_million_ops_per_s, 2)}</td>`;
}

function estimateCard(source: ReportSource): SafeHtml | null {
  const c = source.cost;
  if (!c) return null;
  const where =
    c.priceSource === "table"
      ? `EC2 prices from the price table (benchmarks/cost/prices.json)${c.pricingApiError ? `; the AWS Pricing API failed: ${c.pricingApiError}` : ""}`
      : `EC2 prices from the AWS Pricing API (${c.priceSource}); EBS, NAT and control plane from the price table`;
  return html`<div class="card" data-cost-source="${source.label}">
<h3>${source.label} <span class="sub">${c.region}</span></h3>
<p>${usd(c.usdPerHour, 4)} per hour · Valkey nodes: ${c.valkeyInstanceType ?? "none fits"}${c.clientInstanceType ? ` · client nodes: ${c.clientInstanceType}` : ""}</p>
<table><thead><tr><th>Counted</th><th class="num">Quantity</th><th class="num">USD/h</th><th>Source</th></tr></thead><tbody>
${c.lines.map(
  (l) =>
    html`<tr><td>${l.item}</td><td class="num">${l.quantity} ${l.unit}</td><td class="num">${usd(l.usdPerHour, 4)}</td><td>${l.missing ? html`<span class="warn">missing: ${l.missing}</span>` : (l.source ?? "")}</td></tr>\n`,
)}</tbody></table>
<p class="note">${where}.</p>
</div>`;
}

export function costSection(input: ReportInput): SafeHtml | null {
  const series = seriesOf(input).filter((s) => s.rows.some((r) => r.usd_per_hour !== undefined));
  if (series.length === 0) return null;
  const cards = input.sources.flatMap((s) => {
    const card = estimateCard(s);
    return card ? [card] : [];
  });
  return html`<table class="cost" data-section="cost">
<thead>
<tr><th rowspan="2">Test</th>${series.map((s) => html`<th colspan="3" class="group" data-series="${s.name}">${s.name}</th>`)}</tr>
<tr>${series.map(() => html`<th class="num">rps</th><th class="num">USD/h</th><th class="num">USD per 1M ops/s</th>`)}</tr>
</thead>
<tbody>
${testsOf(input).map((t) => html`<tr data-test="${t}"><th scope="row">${t}</th>${series.map((s) => costCells(rowFor(s, t)))}</tr>\n`)}</tbody>
</table>
<p class="note">USD per 1M ops/s = the stack's estimated on-demand USD per hour ÷ (rps ÷ 1,000,000): what an hour of a million ops/s of this test would cost at this stack's shape. An estimate: instance types by the smallest permitted type that fits each pod, one pod per node. A row's USD/h includes its own data transfer between zones where it was measured (see "Data transfer"); a row without a transfer figure is the stack's hour alone. "—" where a price is missing.</p>
<div class="cards">${cards}</div>`;
}
