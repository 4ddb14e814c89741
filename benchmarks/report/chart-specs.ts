/**
 * Vega-Lite specs for the report's charts, built from the report model. Pure: data in, spec
 * out; chart-render.ts turns a spec into SVG. Every mark carries its data in the spec's inline
 * values, so a spec can be checked without rendering it. A figure of several runs is drawn at
 * its median with an error bar from its lowest to its highest run (run-spread.ts).
 */
import type { TopLevelSpec } from "vega-lite";
import { rangeOf } from "../run/run-spread.js";
import { CHART_FONT } from "./html.js";
import { rowFor, seriesOf, testsOf, type ReportInput } from "./model.js";

export const LATENCY_PERCENTILES = ["p50", "p95", "p99"] as const;
export type Percentile = (typeof LATENCY_PERCENTILES)[number];

export interface RpsDatum {
  test: string;
  series: string;
  /** The median over the runs. */
  rps: number;
  /** The lowest and highest run (the error bar; equal to rps for one run). */
  min: number;
  max: number;
}

export interface LatencyDatum {
  test: string;
  series: string;
  percentile: Percentile;
  ms: number;
  min: number;
  max: number;
}

/** The error bar of a figure: a rule from its lowest to its highest run, over the bar of the same x and xOffset. */
const ERROR_BAR = {
  mark: { type: "rule" as const, stroke: "#1d2330", strokeWidth: 1.5 },
  encoding: { y: { field: "min", type: "quantitative" as const }, y2: { field: "max" } },
};

/** One datum per (series, test) that has a row. */
export function rpsData(input: ReportInput): RpsDatum[] {
  const out: RpsDatum[] = [];
  for (const test of testsOf(input)) {
    for (const s of seriesOf(input)) {
      const r = rowFor(s, test);
      const x = r === undefined ? undefined : rangeOf(r, "rps");
      if (x) out.push({ test, series: s.name, rps: x.median, min: x.min, max: x.max });
    }
  }
  return out;
}

/** One datum per (series, test, percentile) that has a row. */
export function latencyData(input: ReportInput): LatencyDatum[] {
  const out: LatencyDatum[] = [];
  for (const test of testsOf(input)) {
    for (const s of seriesOf(input)) {
      const r = rowFor(s, test);
      if (!r) continue;
      for (const percentile of LATENCY_PERCENTILES) {
        const x = rangeOf(r, percentile);
        out.push({ test, series: s.name, percentile, ms: x.median, min: x.min, max: x.max });
      }
    }
  }
  return out;
}

const CONFIG = {
  font: CHART_FONT,
  view: { stroke: null },
  axis: { labelFontSize: 12, titleFontSize: 12, gridColor: "#e6e6e6" },
  legend: { labelFontSize: 12, titleFontSize: 12, orient: "top" as const, labelLimit: 400 },
  header: { labelFontSize: 13, titleFontSize: 13 },
};

function colorScale(series: string[]) {
  return { domain: series, scheme: "tableau10" as const };
}

/** Grouped bars: requests per second per test, one bar per series. */
export function rpsChartSpec(input: ReportInput): TopLevelSpec {
  const tests = testsOf(input);
  const series = seriesOf(input).map((s) => s.name);
  const encoding = {
    x: { field: "test", type: "nominal" as const, sort: tests, title: null, axis: { labelAngle: 0 } },
    xOffset: { field: "series", type: "nominal" as const, sort: series },
    y: { field: "rps", type: "quantitative" as const, title: "requests per second", axis: { format: "~s" } },
  };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description: "Requests per second per test and mode",
    data: { values: rpsData(input) },
    width: { step: Math.max(28, Math.min(60, 240 / Math.max(1, series.length))) },
    height: 260,
    encoding,
    layer: [
      {
        mark: { type: "bar", tooltip: false },
        encoding: { color: { field: "series", type: "nominal", title: null, sort: series, scale: colorScale(series) } },
      },
      ERROR_BAR,
      {
        mark: { type: "text", dy: -5, fontSize: 11, fill: "#333" },
        encoding: {
          y: { field: "max", type: "quantitative" },
          text: { field: "rps", type: "quantitative", format: ".3~s" },
        },
      },
    ],
    config: CONFIG,
  };
}

/** Grouped bars: p50/p95/p99 latency per test (one panel per test, own scale), one bar per series. */
export function latencyChartSpec(input: ReportInput): TopLevelSpec {
  const tests = testsOf(input);
  const series = seriesOf(input).map((s) => s.name);
  const step = Math.max(10, Math.min(36, 120 / Math.max(1, series.length)));
  // Panels wrap to keep the figure within about 1100 px (one panel: 3 percentiles × series bars + axis).
  const panelWidth = LATENCY_PERCENTILES.length * series.length * step * 1.25 + 70;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description: "Latency percentiles per test and mode, in milliseconds",
    data: { values: latencyData(input) },
    facet: { field: "test", type: "nominal", sort: tests, title: null, header: { labelFontWeight: "bold" } },
    columns: Math.max(1, Math.floor(1100 / panelWidth)),
    spec: {
      width: { step },
      height: 220,
      encoding: {
        x: {
          field: "percentile",
          type: "nominal",
          sort: [...LATENCY_PERCENTILES],
          title: null,
          axis: { labelAngle: 0 },
        },
        xOffset: { field: "series", type: "nominal", sort: series },
        y: { field: "ms", type: "quantitative", title: "latency (ms)" },
      },
      layer: [
        {
          mark: { type: "bar", tooltip: false },
          encoding: {
            color: { field: "series", type: "nominal", title: null, sort: series, scale: colorScale(series) },
          },
        },
        ERROR_BAR,
        // Value labels while they fit (up to three bars per percentile), above the error bar.
        ...(series.length <= 3
          ? [
              {
                mark: { type: "text" as const, dy: -4, fontSize: 9, fill: "#333" },
                encoding: {
                  y: { field: "max", type: "quantitative" as const },
                  text: { field: "ms", type: "quantitative" as const, format: ".3~r" },
                },
              },
            ]
          : []),
      ],
    },
    resolve: { scale: { y: "independent" }, axis: { x: "independent" } },
    config: CONFIG,
  };
}
