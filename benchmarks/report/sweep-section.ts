/**
 * The shard-scaling sweep in the report: a chart of rps against shard count per test (with the
 * linear-scaling line from the first step for reference), the per-step table with scale,
 * exponent and the client's CPU use, and one exponent per test at the largest step. Renders
 * only for sources that carry sweep rows.
 */
import type { TopLevelSpec } from "vega-lite";
import type { SweepRow } from "../sweep/sweep-csv.js";
import { CHART_FONT } from "./html.js";
import { fmtMs, fmtRps } from "./format.js";
import { html, type SafeHtml } from "./html.js";
import type { ReportInput, ReportSource } from "./model.js";

export interface SweepDatum {
  source: string;
  test: string;
  shards: number;
  rps: number;
  /** "measured", or "linear" for first-step rps × shards ÷ first shards. */
  kind: "measured" | "linear";
}

const sweepSources = (input: ReportInput): (ReportSource & { sweep: SweepRow[] })[] =>
  input.sources.filter((s): s is ReportSource & { sweep: SweepRow[] } => s.sweep !== undefined && s.sweep.length > 0);

export const hasSweep = (input: ReportInput): boolean => sweepSources(input).length > 0;

/** Measured points plus the linear reference, per source and test. */
export function sweepData(input: ReportInput): SweepDatum[] {
  const many = sweepSources(input).length > 1;
  const out: SweepDatum[] = [];
  for (const s of sweepSources(input)) {
    const source = many ? s.label : "";
    for (const test of [...new Set(s.sweep.map((r) => r.test))]) {
      const steps = s.sweep.filter((r) => r.test === test).sort((a, b) => a.shards - b.shards);
      const first = steps[0];
      for (const r of steps) {
        out.push({ source, test, shards: r.shards, rps: r.rps, kind: "measured" });
        if (first)
          out.push({ source, test, shards: r.shards, rps: (first.rps * r.shards) / first.shards, kind: "linear" });
      }
    }
  }
  return out;
}

export function sweepChartSpec(input: ReportInput): TopLevelSpec {
  const data = sweepData(input);
  const many = sweepSources(input).length > 1;
  const shards = [...new Set(data.map((d) => d.shards))].sort((a, b) => a - b);
  const color = many
    ? { field: "series", type: "nominal" as const, title: null }
    : { field: "test", type: "nominal" as const, title: null, scale: { scheme: "tableau10" as const } };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description: "Requests per second against shard count, measured and linear",
    data: { values: data },
    transform: [{ calculate: many ? "datum.source + ' · ' + datum.test" : "datum.test", as: "series" }],
    width: 520,
    height: 280,
    encoding: {
      x: {
        field: "shards",
        type: "quantitative",
        title: "shards (primaries)",
        scale: { domain: [0, Math.max(...shards) * 1.05] },
        axis: { values: shards, format: "d" },
      },
      y: { field: "rps", type: "quantitative", title: "requests per second", axis: { format: "~s" } },
      color,
      detail: { field: "series", type: "nominal" },
      strokeDash: {
        field: "kind",
        type: "nominal",
        title: null,
        scale: {
          domain: ["measured", "linear"],
          range: [
            [1, 0],
            [4, 4],
          ],
        },
        // The figure's caption says solid = measured, dashed = linear.
        legend: null,
      },
    },
    layer: [
      { mark: { type: "line", strokeWidth: 2 } },
      { transform: [{ filter: "datum.kind === 'measured'" }], mark: { type: "point", filled: true, size: 60 } },
    ],
    config: {
      font: CHART_FONT,
      view: { stroke: null },
      legend: { orient: "right", labelFontSize: 12 },
      axis: { labelFontSize: 12, titleFontSize: 12 },
    },
  };
}

function fmt(x: number | null, digits: number): string {
  return x === null ? "—" : x.toFixed(digits);
}

/** Per test, the exponent at the largest step. */
export function sweepExponents(
  rows: readonly SweepRow[],
): { test: string; from: number; to: number; exponent: number | null }[] {
  return [...new Set(rows.map((r) => r.test))].map((test) => {
    const steps = rows.filter((r) => r.test === test).sort((a, b) => a.shards - b.shards);
    const first = steps[0];
    const last = steps.at(-1);
    return { test, from: first?.shards ?? 0, to: last?.shards ?? 0, exponent: last?.exponent ?? null };
  });
}

export function sweepSection(input: ReportInput, chartSvg: SafeHtml | null): SafeHtml | null {
  const sources = sweepSources(input);
  if (sources.length === 0) return null;
  const many = sources.length > 1;
  return html`${chartSvg}${sources.map((s) => {
    const cpus = [...new Set(s.sweep.flatMap((r) => (r.client_cpus === null ? [] : [r.client_cpus])))].join("/");
    const pinned = s.sweep.some((r) => r.pinned);
    const clientNote =
      cpus === ""
        ? "Client CPU not measured: the benchmark ran as the stack's Job inside the cluster (see the notes of each step's rows for its client pods)"
        : `${pinned ? "Pinned (--pin): each primary on its own CPU" : "Not pinned: servers and client share every CPU"}; the client had ${cpus} CPU(s)`;
    return html`<div class="sweep" data-source="${s.label}">
${many ? html`<h3>${s.label}</h3>` : ""}
<p><strong>Scaling exponent</strong> p = ln(scale) ÷ ln(shards ÷ first shards), 1.0 is linear: ${sweepExponents(
      s.sweep,
    ).map(
      (e, i) =>
        html`${i > 0 ? " · " : ""}<span class="exponent" data-test="${e.test}">${e.test} ${e.from}→${e.to} shards: p = ${fmt(e.exponent, 2)}</span>`,
    )}</p>
<p class="note">${clientNote}.</p>
<table class="sweep-steps">
<thead><tr><th>Test</th><th class="num">Shards</th><th class="num">rps</th><th class="num">p50 ms</th><th class="num">p99 ms</th><th class="num">Scale</th><th class="num">Exponent</th><th class="num">Client CPU %</th><th>Limit</th></tr></thead>
<tbody>
${s.sweep.map(
  (r) =>
    html`<tr><td>${r.test}</td><td class="num">${r.shards}</td><td class="num">${fmtRps(r.rps)}</td><td class="num">${fmtMs(r.p50_ms)}</td><td class="num">${fmtMs(
      r.p99_ms,
    )}</td><td class="num">${fmt(r.scale, 2)}</td><td class="num">${fmt(r.exponent, 2)}</td><td class="num">${fmt(r.client_cpu_pct, 1)}</td><td class="${
      r.client_saturated ? "warn" : ""
    }">${r.client_saturated ? "client saturated: rps is the client's limit" : ""}</td></tr>\n`,
)}</tbody>
</table>
</div>`;
  })}`;
}
