/**
 * Renders the report: the charts (Vega-Lite → SVG, in Node) and the page, and writes
 * `report.html`. The chart list is data-driven like the sections: a chart is rendered only when
 * its data is present (later charts, e.g. the sweep or a drill timeline, are more entries).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TopLevelSpec } from "vega-lite";
import { renderChartSvg } from "./chart-render.js";
import { latencyChartSpec, rpsChartSpec } from "./chart-specs.js";
import { loadSources } from "./load.js";
import { seriesOf, type ReportInput, type ReportSource } from "./model.js";
import { buildReportHtml, type RenderedCharts } from "./page.js";
import { hasSweep, sweepChartSpec } from "./sweep-section.js";
import { hasScaleLadder, scaleChartSpec } from "./scale-section.js";
import { drillLiveMetricsSpec, drillTimelineSpec, hasDrillLiveMetrics, hasDrillTimeline } from "./drill-section.js";
import { hasSoak, soakLoadSpec, soakMemorySpec } from "./soak-section.js";
import { hasOpenLoopSeries, openLoopSpec } from "./loop-section.js";
import { hasSloSweeps, sloChartSpec } from "./slo-section.js";

export const REPORT_FILE = "report.html";

export interface ChartDef {
  id: string;
  title: string;
  caption: string;
  when: (input: ReportInput) => boolean;
  spec: (input: ReportInput) => TopLevelSpec;
}

const hasRows = (i: ReportInput) => seriesOf(i).length > 0;

export const CHARTS: readonly ChartDef[] = [
  {
    id: "rps",
    title: "Requests per second",
    caption: "per test, one bar per mode (higher is better).",
    when: hasRows,
    spec: rpsChartSpec,
  },
  {
    id: "latency",
    title: "Latency percentiles",
    caption: "p50, p95 and p99 in ms per test, one bar per mode (lower is better; each test has its own scale).",
    when: hasRows,
    spec: latencyChartSpec,
  },
  {
    id: "sweep",
    title: "Throughput against shard count",
    caption: "measured rps per test (solid) and linear scaling from the first step (dashed).",
    when: hasSweep,
    spec: sweepChartSpec,
  },
  {
    id: "scale-ladder",
    title: "Cost as the cluster grows",
    caption:
      "each step's time against the number of primaries, both axes log; the legend gives each step's fitted exponent k (time ∝ P^k; 1 is linear); vertical bars: the range over repeated runs.",
    when: hasScaleLadder,
    spec: scaleChartSpec,
  },
  {
    id: "drill-timeline",
    title: "Write latency around each fault",
    caption:
      "per drill, the slowest acknowledged write per 0.2 s by load stream (log scale); red ticks at the top: failed writes; dashed line: the fault.",
    when: hasDrillTimeline,
    spec: drillTimelineSpec,
  },
  {
    id: "drill-live-metrics",
    title: "Live metrics during the drill",
    caption:
      "drills run with --metrics: commands per second on each member from its redis_exporter, through a real Prometheus (rate over 3 s at 1 s steps): the servers' own count of the load, beside the writers' above; dashed line: the fault.",
    when: hasDrillLiveMetrics,
    spec: drillLiveMetricsSpec,
  },
  {
    id: "slo",
    title: "Latency against throughput, both topologies",
    caption:
      "p50, p99 and p99.9 (line style) against the achieved rate of every open-loop sweep step (log scale), one line per topology and sweep; dashed red: the target's bound; solid vertical: each topology's median throughput at the target.",
    when: hasSloSweeps,
    spec: sloChartSpec,
  },
  {
    id: "open-loop",
    title: "Open-loop latency over time",
    caption:
      "p50, p99 and max per second of intended send time (log scale): a stall shows as the seconds whose requests waited for it.",
    when: hasOpenLoopSeries,
    spec: openLoopSpec,
  },
  {
    id: "soak-load",
    title: "Soak: load over time",
    caption:
      "requests per second and window latency p99 (solid) / p99.9 (dashed, log scale) per sample; dashed vertical rules: events.",
    when: hasSoak,
    spec: soakLoadSpec,
  },
  {
    id: "soak-memory",
    title: "Soak: memory over time",
    caption: "used_memory and mem_fragmentation_ratio per member (INFO) per sample; dashed vertical rules: events.",
    when: hasSoak,
    spec: soakMemorySpec,
  },
];

export async function renderCharts(input: ReportInput): Promise<RenderedCharts> {
  const out = new Map<string, { title: string; caption: string; svg: string }>();
  for (const c of CHARTS) {
    if (!c.when(input)) continue;
    out.set(c.id, { title: c.title, caption: c.caption, svg: await renderChartSvg(c.id, c.spec(input)) });
  }
  return out;
}

export function reportTitle(sources: readonly ReportSource[]): string {
  const modes = new Set(sources.flatMap((s) => s.rows.map((r) => r.mode)));
  const extras = [
    ...(sources.some((s) => s.sweep) ? ["shard-scaling sweep"] : []),
    ...(sources.some((s) => s.scaleLadder) ? ["cost as the cluster grows"] : []),
  ];
  if (modes.size === 0) return `Valkey benchmark: ${extras.join(" and ") || "no rows"}`;
  const what = modes.size === 2 ? "replication vs cluster mode" : [...modes].join(", ") + " mode";
  return `Valkey benchmark: ${[what, ...extras].join(" and ")}`;
}

export async function renderReport(sources: ReportSource[], now: Date = new Date()): Promise<string> {
  const input: ReportInput = {
    title: reportTitle(sources),
    generatedAt: now.toISOString().replace(/\.\d{3}Z$/, "Z"),
    sources,
  };
  return buildReportHtml(input, await renderCharts(input));
}

/** Loads `from` paths, renders, and writes `<outputDir>/report.html`; returns its path. */
export async function writeReport(from: readonly string[], outputDir: string): Promise<string> {
  const html = await renderReport(loadSources(from));
  mkdirSync(outputDir, { recursive: true });
  const path = join(outputDir, REPORT_FILE);
  writeFileSync(path, html);
  return path;
}
