/**
 * Closed loop and open loop at the same throughput, and the open loop's latency over time, in the
 * report. Read from a run's raw/loop-comparison-<mode>.json and raw/latency-series-<mode>.json
 * (benchmarks/run/loop-comparison.ts, mix-runner.ts writeMixFiles; checked against the schemas the
 * Job's result line uses), or a stack report's `benchmark.mix.loops` / `.openLoop`. Renders only
 * when some source carries them.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TopLevelSpec } from "vega-lite";
import type { z } from "zod";
import { loopComparisonSchema, openLoopSchema } from "../run/mix-job-result.js";
import type { LoopComparison } from "../run/loop-figures.js";
import type { ResultMode } from "../run/result-row.js";
import { fmtMs, fmtRps } from "./format.js";
import { CHART_FONT, html, type SafeHtml } from "./html.js";
import type { ModeLoops, ModeOpenLoop, ReportInput } from "./model.js";

export function readEach<T>(
  dir: string,
  prefix: string,
  schema: z.ZodType<T>,
): (T & { mode: ResultMode })[] | undefined {
  const raw = join(dir, "raw");
  const out = (["replication", "cluster"] as const).flatMap((mode) => {
    const file = join(raw, `${prefix}-${mode}.json`);
    if (!existsSync(file)) return [];
    const parsed = schema.safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (!parsed.success)
      throw new Error(
        `${file}: not a ${prefix} file (${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message})`,
      );
    return [{ ...parsed.data, mode }];
  });
  return out.length === 0 ? undefined : out;
}

/** raw/loop-comparison-<mode>.json of a run directory, replication before cluster. */
export const loadLoops = (dir: string): ModeLoops[] | undefined =>
  readEach(dir, "loop-comparison", loopComparisonSchema);
/** raw/latency-series-<mode>.json of a run directory, replication before cluster. */
export const loadOpenLoops = (dir: string): ModeOpenLoop[] | undefined =>
  readEach(dir, "latency-series", openLoopSchema);

const seriesName = (input: ReportInput, label: string, mode: string): string =>
  input.sources.length > 1 ? `${label} · ${mode}` : mode;

export interface OpenLoopDatum {
  series: string;
  second: number;
  metric: "p50" | "p99" | "max";
  ms: number;
}

/** One datum per second with requests and metric. */
export function openLoopData(input: ReportInput): OpenLoopDatum[] {
  return input.sources.flatMap((s) =>
    (s.openLoop ?? []).flatMap((o) =>
      o.series
        .filter((x) => x.requests > 0)
        .flatMap((x) =>
          (["p50", "p99", "max"] as const).map((metric) => ({
            series: seriesName(input, s.label, o.mode),
            second: x.second,
            metric,
            ms: Math.max(0.001, metric === "p50" ? x.p50_ms : metric === "p99" ? x.p99_ms : x.max_ms),
          })),
        ),
    ),
  );
}

export const hasOpenLoopSeries = (input: ReportInput): boolean => openLoopData(input).length > 0;

/** Latency per second of intended send time (log scale), a line per series and metric. */
export function openLoopSpec(input: ReportInput): TopLevelSpec {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description: "Open-loop latency over time: p50, p99 and max per second of intended send time",
    data: { values: openLoopData(input) },
    width: 900,
    height: 220,
    mark: { type: "line", point: { filled: true, size: 14 } },
    encoding: {
      x: { field: "second", type: "quantitative", title: "second of the run (intended send time)" },
      y: { field: "ms", type: "quantitative", title: "latency ms (log)", scale: { type: "log" } },
      color: { field: "series", type: "nominal", title: null },
      strokeDash: { field: "metric", type: "nominal", title: null, sort: ["p50", "p99", "max"] },
    },
    config: {
      font: CHART_FONT,
      view: { stroke: "#d9dde5" },
      legend: { orient: "bottom", labelFontSize: 12 },
      axis: { labelFontSize: 11, titleFontSize: 11 },
    },
  };
}

/** The section: per source and mode, closed and open loop at the same rate side by side; then the chart. */
export function loopSection(input: ReportInput, chart: SafeHtml | null): SafeHtml | null {
  const rows = input.sources.flatMap((s) =>
    (s.loops ?? []).map((l) => ({ series: seriesName(input, s.label, l.mode), l })),
  );
  if (rows.length === 0 && chart === null) return null;
  const cells = (name: string, f: LoopComparison["open"], warn: boolean) =>
    html`<td>${name}</td><td class="num">${fmtRps(f.rps)}</td><td class="num">${fmtMs(f.p50_ms)}</td><td class="num ${warn ? "warn" : ""}">${fmtMs(f.p99_ms)}</td><td class="num">${fmtMs(f.p999_ms)}</td><td class="num">${fmtMs(f.max_ms)}</td>`;
  return html`<p class="note">The same mix at the same rate, twice: the closed loop paced to the rate (a request leaves when its lane's previous one answered and its time has come; latency from its own send) and the open loop (every request leaves at its intended time whatever the server does; latency from that intended time). Where the server never stalls the two agree. Where it stalls, the closed loop sends nothing meanwhile and its percentiles hide the wait; the open loop's requests queue and each counts it (coordinated omission). A p99 far apart between the two rows is the stall the closed loop did not count.</p>
${
  rows.length === 0
    ? ""
    : html`<table class="loops" data-section="loops">
<thead><tr><th>Series</th><th class="num">Rate /s</th><th>Loop</th><th class="num">rps</th><th class="num">p50 ms</th><th class="num">p99 ms</th><th class="num">p99.9 ms</th><th class="num">max ms</th></tr></thead>
<tbody>
${rows.map(
  ({
    series,
    l,
  }) => html`<tr data-series="${series}"><td rowspan="2">${series}</td><td rowspan="2" class="num">${fmtRps(l.rate)}</td>${cells("closed (paced)", l.closed, false)}</tr>
<tr>${cells("open", l.open, l.open.p99_ms > 2 * l.closed.p99_ms)}</tr>\n`,
)}</tbody>
</table>`
}${chart}`;
}
