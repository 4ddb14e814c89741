/**
 * Throughput at a latency target in the report: each topology's figure with its median and range,
 * and ONE chart of both topologies' latency–throughput curves (p50, p99 and p99.9 against the
 * achieved rate, every sweep, the bound as a rule). Read from a run's raw/slo-sweep-<mode>.json
 * (benchmarks/run/slo-sweep.ts, checked against slo-sweep-schema.ts) or a stack report's
 * `benchmark.mix.sloSweep`. Renders only when some source carries a sweep.
 */
import type { TopLevelSpec } from "vega-lite";
import { percentileLabel, sloLabel } from "../../vocabulary/slo.js";
import { formatFigure, formatSummary, type SloSweepRecord } from "../run/slo-figure.js";
import { sloSweepSchema } from "../run/slo-sweep-schema.js";
import { fmtMs, fmtRps } from "./format.js";
import { CHART_FONT, html, type SafeHtml } from "./html.js";
import { readEach } from "./loop-section.js";
import type { ReportInput } from "./model.js";

/** raw/slo-sweep-<mode>.json of a run directory, replication before cluster. */
export const loadSloSweeps = (dir: string): SloSweepRecord[] | undefined => readEach(dir, "slo-sweep", sloSweepSchema);

const seriesName = (input: ReportInput, label: string, mode: string): string =>
  input.sources.length > 1 ? `${label} · ${mode}` : mode;

/** Every sweep of the report with its series name. */
function sweepsOf(input: ReportInput): { series: string; r: SloSweepRecord }[] {
  return input.sources.flatMap((s) =>
    (s.sloSweeps ?? []).map((r) => ({ series: seriesName(input, s.label, r.mode), r })),
  );
}

export const hasSloSweeps = (input: ReportInput): boolean => sweepsOf(input).length > 0;

export interface SloCurveDatum {
  series: string;
  run: number;
  percentile: string;
  offered: number;
  achieved: number;
  ms: number;
  meets: boolean;
}

/** One datum per step with latency figures × percentile (steps that failed without figures have no point). */
export function sloCurveData(input: ReportInput): SloCurveDatum[] {
  return sweepsOf(input).flatMap(({ series, r }) =>
    r.runs.flatMap((run, i) =>
      run.steps.flatMap((s) =>
        (["p50", "p99", "p999"] as const).flatMap((p) => {
          const v = p === "p50" ? s.p50_ms : p === "p99" ? s.p99_ms : s.p999_ms;
          if (v === null || !(s.achievedRps > 0)) return [];
          return [
            {
              series,
              run: i + 1,
              percentile: percentileLabel(p),
              offered: s.offeredRps,
              achieved: s.achievedRps,
              ms: Math.max(0.001, v),
              meets: s.meets,
            },
          ];
        }),
      ),
    ),
  );
}

/**
 * Latency (log) against achieved rate: a line per series × percentile × sweep, the bounds as dashed rules, each series'
 * median figure as a vertical rule.
 */
export function sloChartSpec(input: ReportInput): TopLevelSpec {
  const sweeps = sweepsOf(input);
  const series = [...new Set(sweeps.map((x) => x.series))];
  const color = {
    field: "series",
    type: "nominal" as const,
    title: null,
    scale: { domain: series, scheme: "tableau10" as const },
  };
  const bounds = [
    ...new Map(
      sweeps.map(({ r }) => [sloLabel(r.target), { bound: r.target.boundMs, label: sloLabel(r.target) }]),
    ).values(),
  ];
  const figures = sweeps
    .filter(({ r }) => r.summary.median.bound !== "below")
    .map(({ series: s, r }) => ({ series: s, rps: r.summary.median.rps }));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description:
      "Latency percentiles against the achieved rate of every open-loop sweep step, both topologies on one chart",
    width: 900,
    height: 320,
    layer: [
      {
        data: { values: sloCurveData(input) },
        mark: { type: "line", point: { filled: true, size: 22 }, strokeWidth: 1.2, opacity: 0.85 },
        encoding: {
          x: { field: "achieved", type: "quantitative", title: "achieved rate (requests/s)", axis: { format: "~s" } },
          y: { field: "ms", type: "quantitative", title: "latency ms (log)", scale: { type: "log" } },
          color,
          strokeDash: { field: "percentile", type: "nominal", title: null, sort: ["p50", "p99", "p99.9"] },
          shape: { field: "percentile", type: "nominal", title: null, sort: ["p50", "p99", "p99.9"] },
          detail: { field: "run", type: "nominal" },
          order: { field: "offered", type: "quantitative" },
        },
      },
      {
        data: { values: bounds },
        mark: { type: "rule", color: "#cf222e", strokeDash: [6, 4] },
        encoding: { y: { field: "bound", type: "quantitative" } },
      },
      ...(figures.length === 0
        ? []
        : [
            {
              data: { values: figures },
              mark: { type: "rule" as const, strokeWidth: 2, opacity: 0.6 },
              encoding: { x: { field: "rps", type: "quantitative" as const }, color },
            },
          ]),
    ],
    config: {
      font: CHART_FONT,
      view: { stroke: "#d9dde5" },
      legend: { orient: "bottom", labelFontSize: 12 },
      axis: { labelFontSize: 11, titleFontSize: 11 },
    },
  };
}

const num = (x: number | null): string => (x === null ? "—" : fmtMs(x));

function stepsTable(r: SloSweepRecord): SafeHtml {
  return html`<details><summary>every step (${r.runs.reduce((n, x) => n + x.steps.length, 0)})</summary><table class="slo-steps">
<thead><tr><th>Sweep</th><th class="num">Offered /s</th><th class="num">Achieved /s</th><th class="num">p50 ms</th><th class="num">p99 ms</th><th class="num">p99.9 ms</th><th class="num">Generator lag mean / max ms</th><th>Meets</th><th>Why not</th></tr></thead>
<tbody>
${r.runs.flatMap((run, i) =>
  [...run.steps]
    .sort((a, b) => a.offeredRps - b.offeredRps)
    .map(
      (s) =>
        html`<tr><td>${i + 1}${s.refined ? " (refine)" : ""}</td><td class="num">${fmtRps(s.offeredRps)}</td><td class="num">${fmtRps(s.achievedRps)}</td><td class="num">${num(s.p50_ms)}</td><td class="num">${num(s.p99_ms)}</td><td class="num">${num(s.p999_ms)}</td><td class="num">${num(s.generatorLagMeanMs ?? null)} / ${num(s.generatorLagMaxMs)}</td><td class="${s.meets ? "pass" : "fail"}">${s.meets ? "yes" : "no"}</td><td class="notes">${s.why}</td></tr>\n`,
    ),
)}</tbody></table></details>`;
}

/** The section: per series the figure with its spread, the sweeps' figures and ceilings, every step; then the chart. */
export function sloSection(input: ReportInput, chart: SafeHtml | null): SafeHtml | null {
  const sweeps = sweepsOf(input);
  if (sweeps.length === 0) return null;
  const first = (sweeps[0] as { r: SloSweepRecord }).r;
  return html`<p class="note">Per topology, the load generator's closed-loop ceiling for the mix, then open-loop steps at 1/${first.steps} … 100 % of it (${first.stepSeconds} s each) and ${first.rule.refineSteps} bisections between the last step that met the target and the first that did not. A step meets the target with no error, at least ${100 * first.rule.achievedShare} % of its offered rate achieved, and the percentile (measured from each request's intended send time) within the bound. The figure is the achieved rate of the highest step that met it with every step below it; its median and range are over the sweeps. "Below the lowest step" and "at least" mean the steps did not bracket it.</p>
<table class="slo" data-section="slo">
<thead><tr><th>Series</th><th>Target</th><th>Throughput at the target</th><th>Each sweep (closed-loop ceiling)</th><th>Mix</th><th>Swept through</th></tr></thead>
<tbody>
${sweeps.map(
  ({ series, r }) =>
    html`<tr data-series="${series}"><td>${series}</td><td>${sloLabel(r.target)}</td><td class="num"><strong>${formatSummary(r.summary)}</strong></td><td>${r.runs
      .map((x) => `${formatFigure(x.figure, "/s")} (ceiling ${fmtRps(x.ceiling.rps)}/s)`)
      .join("; ")}</td><td>${r.mix.map((e) => `${e.test}:${e.percent}`).join(",")}</td><td>${r.via}</td></tr>
<tr><td colspan="6">${stepsTable(r)}</td></tr>\n`,
)}</tbody>
</table>
${chart}`;
}
