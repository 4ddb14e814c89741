/**
 * The read scale-out section: per source, the read tests measured on the replicas against the
 * same tests read from the primary (primaries) by the same client on the matching path
 * (benchmarks/run/read-scale-out.ts pairs them from the rows' notes). Renders only when some
 * source has such a pair (a run with `--reads replicas`).
 */
import { READ_SCALE_OUT_CAVEAT, readScaleOutPairs, type ReadScaleOutPair } from "../run/read-scale-out.js";
import { ratioText } from "../run/figure-text.js";
import type { Range } from "../run/run-spread.js";
import { figureCell } from "./sections.js";
import { fmtMs, fmtRps } from "./format.js";
import { html, type SafeHtml } from "./html.js";
import type { ReportInput } from "./model.js";

const ratio = (r: Range) => (Number.isFinite(r.median) ? ratioText(r) : "n/a");

function row(source: string, many: boolean, p: ReadScaleOutPair): SafeHtml {
  const figures = (r: ReadScaleOutPair["primary"]) =>
    html`${figureCell(r, "rps", fmtRps)}${figureCell(r, "p50", fmtMs)}${figureCell(r, "p99", fmtMs)}`;
  return html`<tr data-mode="${p.mode}" data-test="${p.test}">${many ? html`<td>${source}</td>` : html``}<td>${p.mode}</td><th scope="row">${p.test}</th><td>${p.path.label}</td>${figures(p.primary)}${figures(p.replica)}<td class="num">${p.replicas} vs ${p.primaries}</td><td class="num">${ratio(p.rpsRange)}</td><td class="num">${ratio(p.perServerRange)}</td></tr>
`;
}

export function readScaleOutSection(input: ReportInput): SafeHtml | null {
  const many = input.sources.length > 1;
  const pairs = input.sources.flatMap((s) => readScaleOutPairs(s.rows).map((p) => ({ source: s.label, p })));
  if (pairs.length === 0) return null;
  return html`<table class="read-scale-out" data-section="read-scale-out">
<thead>
<tr>${many ? html`<th rowspan="2">Source</th>` : html``}<th rowspan="2">Mode</th><th rowspan="2">Test</th><th rowspan="2">Replica path</th><th colspan="3" class="group">From the primary (primaries)</th><th colspan="3" class="group">From the replicas</th><th rowspan="2">Servers<br><span class="sub">replicas vs primaries</span></th><th rowspan="2">Replicas ÷ primary rps</th><th rowspan="2">Per replica ÷ per primary</th></tr>
<tr><th class="num">rps</th><th class="num">p50 ms</th><th class="num">p99 ms</th><th class="num">rps</th><th class="num">p50 ms</th><th class="num">p99 ms</th></tr>
</thead>
<tbody>
${pairs.map((x) => row(x.source, many, x.p))}</tbody>
</table>
<p class="note">Each replica row is paired with the same test read from the primary by the same client on the matching path (direct with direct, the read endpoint with the write endpoint, READONLY with the primaries). Who served every read is counted from INFO commandstats (the rows' notes; the run fails when the replicas served under 90% of the reads). ${READ_SCALE_OUT_CAVEAT}</p>`;
}
