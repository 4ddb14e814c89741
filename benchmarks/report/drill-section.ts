/**
 * Failure drills in the report: the drill table (one row per mode × fault) and a timeline chart
 * of write latency around each fault (acknowledged writes by stream, failed writes apart), read
 * from a run's raw/drill-<mode>-<fault>.json (harness/drill/). Renders only when some source
 * carries drills (drill-files.ts loads them).
 */
import type { TopLevelSpec } from "vega-lite";
import { STOPPED_MS } from "../../core/drill/shard-outage.js";
import type { DrillView } from "./drill-files.js";
import { CHART_FONT, html, type SafeHtml } from "./html.js";
import type { ReportInput, ReportSource } from "./model.js";

const drillSources = (input: ReportInput): (ReportSource & { drills: DrillView[] })[] =>
  input.sources.filter((s): s is ReportSource & { drills: DrillView[] } => (s.drills?.length ?? 0) > 0);

/** The fault's moment, a dashed vertical rule at t = 0 in every drill chart. */
const FAULT_RULE = {
  data: { values: [{ t: 0 }] },
  mark: { type: "rule" as const, color: "#1d2330", strokeDash: [4, 3] },
  encoding: { x: { field: "t", type: "quantitative" as const } },
};

/** What every per-drill facet chart shares: its own x range per drill, and the report's look. */
const DRILL_FACETS_LOOK = {
  resolve: { scale: { x: "independent" as const } },
  config: {
    font: CHART_FONT,
    view: { stroke: "#d9dde5" },
    legend: { orient: "bottom" as const, labelFontSize: 12 },
    axis: { labelFontSize: 11, titleFontSize: 11 },
  },
};

/** A timeline to chart: local drills record one per write; a deployed stack's drills carry figures only. */
export const hasDrillTimeline = (input: ReportInput): boolean =>
  drillSources(input).some((s) => s.drills.some((d) => d.timeline.length > 0));

export interface TimelineDatum {
  drill: string;
  stream: string;
  /** Seconds from the fault (bucket start, 0.2 s buckets). */
  t: number;
  /** Acknowledged: the bucket's slowest write; failed: the bucket's failed-write count. */
  latencyMs: number;
  outcome: "acknowledged" | "failed";
}

/** Per drill and stream, 0.2 s buckets from 10 s before the fault: the slowest acknowledged write, and failures. */
export function timelineData(input: ReportInput): TimelineDatum[] {
  const out: TimelineDatum[] = [];
  for (const s of drillSources(input)) {
    for (const d of s.drills) {
      const drill = `${d.mode} · ${d.fault}`;
      const buckets = new Map<string, TimelineDatum>();
      for (const w of d.timeline) {
        if (w.t < -10_000) continue;
        const t = Math.floor(w.t / 200) / 5;
        const outcome = w.latencyMs === null ? "failed" : "acknowledged";
        const key = `${w.stream}|${t}|${outcome}`;
        const b = buckets.get(key) ?? { drill, stream: w.stream, t, latencyMs: 0, outcome };
        b.latencyMs = w.latencyMs === null ? b.latencyMs + 1 : Math.max(b.latencyMs, w.latencyMs);
        buckets.set(key, b);
      }
      out.push(...[...buckets.values()].filter((b) => b.outcome === "acknowledged"));
      // Failed writes drawn as ticks at the top of the panel (their count is in the table).
      out.push(...[...buckets.values()].filter((b) => b.outcome === "failed").map((b) => ({ ...b, latencyMs: 2000 })));
    }
  }
  return out;
}

export function drillTimelineSpec(input: ReportInput): TopLevelSpec {
  return drillFacets("Write latency around each fault, per drill", timelineData(input), {
    layer: [
      {
        transform: [{ filter: "datum.outcome === 'acknowledged'" }],
        mark: { type: "point", filled: true, size: 12 },
        encoding: { color: { field: "stream", type: "nominal", title: "acknowledged write (slowest per 0.2 s)" } },
      },
      {
        transform: [{ filter: "datum.outcome === 'failed'" }],
        mark: { type: "tick", color: "#cf222e", thickness: 2 },
        encoding: {},
      },
    ],
    encoding: {
      x: { field: "t", type: "quantitative", title: "seconds from the fault" },
      y: {
        field: "latencyMs",
        type: "quantitative",
        title: "write latency ms (log)",
        scale: { type: "log", domain: [0.1, 2000], clamp: true },
      },
    },
  });
}

/** One chart per drill (two columns), the fault's rule in each, the report's look. */
function drillFacets(
  description: string,
  values: object[],
  spec: { layer: object[]; encoding?: object },
): TopLevelSpec {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description,
    data: { values },
    facet: { field: "drill", type: "nominal", title: null },
    columns: 2,
    spec: { width: 420, height: 150, ...spec, layer: [...spec.layer, FAULT_RULE] },
    ...DRILL_FACETS_LOOK,
  } as TopLevelSpec;
}

/** Drills run with `--metrics` carry the servers' own commands per second. */
export const hasDrillLiveMetrics = (input: ReportInput): boolean =>
  drillSources(input).some((s) => s.drills.some((d) => (d.liveMetrics?.series.length ?? 0) > 0));

export interface LiveOpsDatum {
  drill: string;
  pod: string;
  /** Seconds from the fault. */
  t: number;
  ops: number;
}

export function liveOpsData(input: ReportInput): LiveOpsDatum[] {
  return drillSources(input).flatMap((s) =>
    s.drills.flatMap((d) =>
      (d.liveMetrics?.series ?? []).flatMap((x) =>
        x.points.map(([t, ops]) => ({ drill: `${d.mode} · ${d.fault}`, pod: x.pod, t, ops })),
      ),
    ),
  );
}

/** Per drill: each member's commands per second (its exporter, through Prometheus) around the fault. */
export function drillLiveMetricsSpec(input: ReportInput): TopLevelSpec {
  return drillFacets(
    "Commands per second on each member around each fault, from a real Prometheus",
    liveOpsData(input),
    {
      layer: [
        {
          mark: { type: "line", interpolate: "step-after", point: { size: 10 } },
          encoding: {
            x: { field: "t", type: "quantitative", title: "seconds from the fault" },
            y: { field: "ops", type: "quantitative", title: "commands/s (exporter)" },
            color: { field: "pod", type: "nominal", title: "member" },
          },
        },
      ],
    },
  );
}

const ms = (v: number | null): string => (v === null ? "—" : String(Math.round(v)));

/**
 * Cluster rows: each shard's outage (`*` the affected ones) and the keyspace share that stopped; replication rows and
 * older files: —.
 */
function shardCell(d: DrillView): string {
  if (d.shards === undefined || d.shards.length === 0) return "—";
  const stop = d.keyspaceStopped;
  const stopped =
    stop == null || stop.slots === 0
      ? `no shard stopped ≥ ${STOPPED_MS / 1000} s`
      : `${Math.round(stop.share * 100)}% of the slots stopped, up to ${(stop.forMs / 1000).toFixed(1)} s`;
  const aggregate = d.aggregateOutageMs === undefined ? "" : `; all shards merged: ${ms(d.aggregateOutageMs)} ms`;
  return `${d.shards.map((x) => `${x.affected ? "*" : ""}${x.shard}: ${ms(x.outageMs)} ms`).join(", ")} (${stopped}${aggregate})`;
}

const waitWriterCell = (d: DrillView): string =>
  d.waitWriter == null ? "—" : `${d.waitWriter.lostAckedWrites} / ${d.waitWriter.ackedWrites}`;

export function drillSection(input: ReportInput, chart: SafeHtml | null): SafeHtml | null {
  const sources = drillSources(input);
  if (sources.length === 0) return null;
  return html`<p class="note">Each drill: a write load (unique keys at a fixed rate; replication: ioredis' Sentinel-aware client and the HAProxy write endpoint at once; cluster: ioredis' Cluster client on every shard, each shard's keys hash-tagged into it), one fault, measured until every member is back and the verifier passes. Every client path (and shard) runs two writers side by side: a no-WAIT writer (plain SET, as applications write: its figures are the row's) and a WAIT writer (SET pipelined with WAIT 1). A write is acknowledged only when SET answers exactly OK; any other reply is an unexpected reply and fails the drill. outage: replication, the longest gap between acknowledged writes; cluster, the affected shard's (per shard: each shard's, * affected, with the share of the slots that stopped ≥ ${STOPPED_MS / 1000} s and the gap of all shards merged, which the other shards hide); recovery: fault → verifier passing; detect: fault → first node marking the failure; lost: acknowledged writes missing when read back (no-WAIT writer; the WAIT writer's lost / acknowledged apart, and WAIT-confirmed writes lost); bound: the acknowledged writes the fault may cost as promised (hover for why), with those lost outside it. In the chart, red ticks at the top are failed writes.</p>
${chart}${sources.map(
    (s) => html`<table class="drills" data-source="${s.label}">
<thead><tr><th>Mode</th><th>Fault</th><th>Healed</th><th class="num">Outage ms</th><th>Per shard</th><th class="num">Recovery ms</th><th class="num">Detect ms</th><th class="num">Failed</th><th class="num">Acked</th><th class="num">Lost acked (no WAIT)</th><th class="num">WAIT writer lost / acked</th><th class="num">WAIT-confirmed</th><th class="num">Lost confirmed</th><th class="num">Unexpected replies</th><th class="num">Bound</th><th class="num">p99 before</th><th class="num">p99 during</th><th>Fault injected</th></tr></thead>
<tbody>
${s.drills.map(
  (d) =>
    html`<tr><td>${d.mode}</td><td>${d.fault}</td><td class="${d.healed ? "pass" : "fail"}">${d.healed ? "yes" : "NO"}</td><td class="num" title="${d.writeOutageOpen === true ? "writes had not resumed when the load stopped: at least this long" : ""}">${d.writeOutageOpen === true ? "≥ " : ""}${ms(d.writeOutageMs)}</td><td class="notes">${shardCell(d)}</td><td class="num">${ms(d.recoveryMs)}</td><td class="num">${ms(
      d.detectionMs,
    )}</td><td class="num">${d.failedWrites}</td><td class="num">${d.ackedWrites}</td><td class="num ${d.lostAckedWrites > 0 ? "warn" : ""}">${d.lostAckedWrites}</td><td class="num">${waitWriterCell(d)}</td><td class="num">${d.waitedWrites}</td><td class="num ${
      d.lostWaitedWrites > 0 ? "fail" : ""
    }">${d.lostWaitedWrites}</td><td class="num ${(d.unexpectedReplies ?? 0) > 0 ? "fail" : ""}" title="${(d.failures ?? []).join("; ")}">${d.unexpectedReplies ?? "—"}</td><td class="num ${(d.lostAckedOutsideBound ?? 0) > 0 ? "fail" : ""}" title="${d.ackedLossBound?.reason ?? "no bound checked"}">${
      d.ackedLossBound == null
        ? "—"
        : `≤${d.ackedLossBound.writes}${(d.lostAckedOutsideBound ?? 0) > 0 ? ` (${d.lostAckedOutsideBound} outside)` : ""}`
    }</td><td class="num">${ms(d.p99MsBefore)}</td><td class="num">${ms(d.p99MsDuring)}</td><td class="notes">${d.faultDescription}</td></tr>\n`,
)}</tbody>
</table>`,
  )}`;
}
