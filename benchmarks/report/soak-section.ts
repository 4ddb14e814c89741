/**
 * Soaks in the report, read from a run's raw/soak-<mode>.json (benchmarks/run/soak-sampler.ts,
 * checked against the sampler's own schema): two charts over time with the events marked (the
 * load: rps and window p99 / p99.9; the servers: used_memory and mem_fragmentation_ratio per
 * member) and the events table, each event with its member, time and INFO evidence. Renders only
 * when some source carries a soak.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TopLevelSpec } from "vega-lite";
import { soakFileSchema, type SoakFile } from "../run/soak-sample.js";
import { CHART_FONT, html, type SafeHtml } from "./html.js";
import type { ReportInput, ReportSource } from "./model.js";

/** raw/soak-<mode>.json of a run directory, replication before cluster; a malformed file names itself. */
export function loadSoaks(dir: string): SoakFile[] | undefined {
  const raw = join(dir, "raw");
  if (!existsSync(raw)) return undefined;
  const files = ["replication", "cluster"].map((m) => `soak-${m}.json`).filter((f) => existsSync(join(raw, f)));
  if (files.length === 0) return undefined;
  return files.map((f) => {
    const parsed = soakFileSchema.safeParse(JSON.parse(readFileSync(join(raw, f), "utf8")));
    if (!parsed.success)
      throw new Error(
        `${join(raw, f)}: not a soak record (${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message})`,
      );
    return parsed.data;
  });
}

const soakSources = (input: ReportInput): (ReportSource & { soak: SoakFile[] })[] =>
  input.sources.filter((s): s is ReportSource & { soak: SoakFile[] } => (s.soak?.length ?? 0) > 0);

export const hasSoak = (input: ReportInput): boolean => soakSources(input).length > 0;

/** Every soak with its series name: the mode, or "<source> · <mode>" when there is more than one source. */
function soaks(input: ReportInput): { series: string; soak: SoakFile }[] {
  const many = input.sources.length > 1;
  return soakSources(input).flatMap((s) =>
    s.soak.map((soak) => ({ series: many ? `${s.label} · ${soak.mode}` : soak.mode, soak })),
  );
}

export interface SoakLoadDatum {
  series: string;
  t: number;
  rps: number;
  metric: "p99" | "p99.9";
  ms: number;
}

export interface SoakMemberDatum {
  /** The series and the member, e.g. `replication · 127.0.0.1:7001`. */
  member: string;
  t: number;
  usedMiB: number;
  fragmentation: number;
}

export interface SoakEventDatum {
  t: number;
  kind: string;
}

/** One datum per window with replies and latency metric (empty windows have no percentile). */
export function soakLoadData(input: ReportInput): SoakLoadDatum[] {
  return soaks(input).flatMap(({ series, soak }) =>
    soak.samples
      .filter((s) => s.requests > 0)
      .flatMap((s) => [
        { series, t: s.t_s, rps: s.rps, metric: "p99" as const, ms: s.p99_ms },
        { series, t: s.t_s, rps: s.rps, metric: "p99.9" as const, ms: s.p999_ms },
      ]),
  );
}

/** One datum per sample and member that answered. */
export function soakMemberData(input: ReportInput): SoakMemberDatum[] {
  const many = soaks(input).length > 1;
  return soaks(input).flatMap(({ series, soak }) =>
    soak.samples.flatMap((s) =>
      s.members
        .filter((m) => m.error === null && m.used_memory !== null && m.mem_fragmentation_ratio !== null)
        .map((m) => ({
          member: many ? `${series} · ${m.member}` : m.member,
          t: s.t_s,
          usedMiB: Number(((m.used_memory as number) / 2 ** 20).toFixed(2)),
          fragmentation: m.mem_fragmentation_ratio as number,
        })),
    ),
  );
}

export function soakEventData(input: ReportInput): SoakEventDatum[] {
  return soaks(input).flatMap(({ soak }) => soak.events.map((e) => ({ t: e.t_s, kind: e.kind })));
}

const EVENT_COLORS = {
  domain: ["aof-rewrite", "full-resync", "link-down", "role-change", "unreachable"],
  range: ["#9a6700", "#cf222e", "#8250df", "#0b5cad", "#57606a"],
};

/** Dashed rules at each event, stroked by kind (one legend: the panels share the scale; the table names each event). */
function eventLayer() {
  return {
    data: { name: "events" },
    mark: { type: "rule" as const, strokeDash: [4, 3], strokeWidth: 1.5 },
    encoding: {
      x: { field: "t", type: "quantitative" as const },
      stroke: { field: "kind", type: "nominal" as const, title: "event", scale: EVENT_COLORS },
    },
  };
}

const X = { field: "t", type: "quantitative" as const, title: "seconds from the soak's start" };
const CONFIG = {
  font: CHART_FONT,
  view: { stroke: "#d9dde5" },
  legend: { orient: "bottom" as const, labelFontSize: 12, labelLimit: 400 },
  axis: { labelFontSize: 11, titleFontSize: 11 },
};

/** Two panels over time: rps per window, and window p99 (solid) / p99.9 (dashed), log scale. */
export function soakLoadSpec(input: ReportInput): TopLevelSpec {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description: "A soak's load over time: rps and window latency percentiles, events marked",
    datasets: { load: soakLoadData(input), events: soakEventData(input) },
    vconcat: [
      {
        width: 900,
        height: 160,
        layer: [
          {
            data: { name: "load" },
            transform: [{ filter: "datum.metric === 'p99'" }],
            mark: { type: "line", point: { filled: true, size: 16 } },
            encoding: {
              x: X,
              y: { field: "rps", type: "quantitative", title: "requests per second", axis: { format: "~s" } },
              color: { field: "series", type: "nominal", title: null, scale: { scheme: "tableau10" } },
            },
          },
          eventLayer(),
        ],
      },
      {
        width: 900,
        height: 160,
        layer: [
          {
            data: { name: "load" },
            mark: { type: "line", point: { filled: true, size: 12 } },
            encoding: {
              x: X,
              y: { field: "ms", type: "quantitative", title: "window latency ms (log)", scale: { type: "log" } },
              strokeDash: { field: "metric", type: "nominal", title: "percentile", sort: ["p99", "p99.9"] },
              color: { field: "series", type: "nominal", title: null, scale: { scheme: "tableau10" } },
            },
          },
          eventLayer(),
        ],
      },
    ],
    config: CONFIG,
  };
}

/** Two panels over time per member: used_memory (MiB) and mem_fragmentation_ratio. */
export function soakMemorySpec(input: ReportInput): TopLevelSpec {
  const panel = (field: "usedMiB" | "fragmentation", title: string) => ({
    width: 900,
    height: 150,
    layer: [
      {
        data: { name: "members" },
        mark: { type: "line" as const, point: { filled: true, size: 12 } },
        encoding: {
          x: X,
          y: { field, type: "quantitative" as const, title, scale: { zero: false } },
          color: {
            field: "member",
            type: "nominal" as const,
            title: "member",
            scale: { scheme: "tableau20" as const },
            legend: { columns: 3 },
          },
        },
      },
      eventLayer(),
    ],
  });
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description: "A soak's servers over time: used_memory and fragmentation per member, events marked",
    datasets: { members: soakMemberData(input), events: soakEventData(input) },
    vconcat: [panel("usedMiB", "used_memory MiB"), panel("fragmentation", "mem_fragmentation_ratio")],
    config: CONFIG,
  };
}

export function soakSection(input: ReportInput, charts: SafeHtml | null): SafeHtml | null {
  const all = soaks(input);
  if (all.length === 0) return null;
  return html`<p class="note">A soak samples, every few seconds, the window's requests per second and latency percentiles (an HdrHistogram interval histogram per window, by the time each reply arrived; open loop: latency from each request's intended send time) and every member's INFO. Events come from the INFO series: an AOF rewrite (aof_rewrites up or a rewrite in progress), a full resync (sync_full up on a primary), a replica link down, a role change, a member not answering. A change that starts and ends between two samples without moving a counter is not seen. The raw series is raw/soak-&lt;mode&gt;.json, the interval histograms raw/latency-&lt;mode&gt;.hlog.</p>
${charts}${all.map(
    ({
      series,
      soak,
    }) => html`<h3>${series}: ${soak.samples.length} samples every ${soak.sampleSeconds} s from ${soak.startedAt}</h3>
${
  soak.events.length === 0
    ? html`<p class="note">No event.</p>`
    : html`<table class="soak-events" data-series="${series}">
<thead><tr><th class="num">t (s)</th><th>Event</th><th>Member</th><th class="num">Fork µs</th><th class="num">Window p99 ms</th><th>Evidence (INFO)</th></tr></thead>
<tbody>
${soak.events.map(
  (e) =>
    html`<tr><td class="num">${e.t_s}</td><td>${e.kind}</td><td>${e.member}</td><td class="num">${e.fork_usec ?? "—"}</td><td class="num ${e.latency_spike === null ? "" : "warn"}">${
      e.latency_spike === null ? "—" : `${e.latency_spike.p99_ms} (median ${e.latency_spike.median_p99_ms})`
    }</td><td class="notes">${e.evidence}</td></tr>\n`,
)}</tbody>
</table>`
}`,
  )}`;
}
