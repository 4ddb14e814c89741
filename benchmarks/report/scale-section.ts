/**
 * "Cost as the cluster grows" in the report: the scale ladder's steps (scale-ladder.json, `npm run bench:scale --
 * --json`) against the number of primaries on log–log axes, one line per step, the fitted exponent k (time ∝ P^k)
 * in each line's legend entry; the table of every rung with its range over repeated runs, and the exponents between
 * neighbouring sizes with any above SUPER_LINEAR between the two largest sizes marked. Renders only for sources that
 * carry a ladder.
 */
import type { TopLevelSpec } from "vega-lite";
import { LADDER_STEP_MEANING, LADDER_STEPS, type LadderFile, type LadderStep } from "../scale/ladder-file.js";
import { fittedExponent, neighbourExponents, pairExponent, spreadOf } from "../scale/scale-fit.js";
import { fmtInt } from "./format.js";
import { CHART_FONT, html, type SafeHtml } from "./html.js";
import type { ReportInput, ReportSource } from "./model.js";

/** The issue's bar: a step whose exponent between the two largest sizes exceeds this grows faster than linear. */
export const SUPER_LINEAR = 1.2;

type LadderSource = ReportSource & { scaleLadder: LadderFile };

const ladderSources = (input: ReportInput): LadderSource[] =>
  input.sources.filter((s): s is LadderSource => s.scaleLadder !== undefined);

export const hasScaleLadder = (input: ReportInput): boolean => ladderSources(input).length > 0;

export interface ScaleDatum {
  /** The legend entry: the step (with its source when several), and its fitted k over two or more sizes. */
  series: string;
  step: LadderStep;
  primaries: number;
  /** The step's time (the median when repeated), in seconds. */
  seconds: number;
  /** The lowest and highest run (equal to seconds for one run). */
  min: number;
  max: number;
}

/** The fitted exponent of a step over the ladder's sizes; null with one size or a step that took no time. */
export function stepExponent(f: LadderFile, step: LadderStep): number | null {
  const points = f.rungs.map((r) => ({ primaries: r.primaries, ms: r.ms[step] }));
  if (points.length < 2 || points.some((p) => p.ms <= 0)) return null;
  return fittedExponent(points);
}

const kText = (k: number | null): string => (k === null ? "" : ` (k = ${k.toFixed(2)})`);

/** One point per (source, step, size) with a time above zero (a log axis has no 0). */
export function scaleData(input: ReportInput): ScaleDatum[] {
  const sources = ladderSources(input);
  const many = sources.length > 1;
  return sources.flatMap((s) =>
    LADDER_STEPS.flatMap((step) => {
      const series = `${many ? `${s.label} · ` : ""}${step}${kText(stepExponent(s.scaleLadder, step))}`;
      return s.scaleLadder.rungs.flatMap((r) => {
        if (r.ms[step] <= 0) return [];
        const range = r.samples === undefined ? undefined : spreadOf(r.samples[step]);
        return [
          {
            series,
            step,
            primaries: r.primaries,
            seconds: r.ms[step] / 1000,
            min: (range?.min ?? r.ms[step]) / 1000,
            max: (range?.max ?? r.ms[step]) / 1000,
          },
        ];
      });
    }),
  );
}

export function scaleChartSpec(input: ReportInput): TopLevelSpec {
  const data = scaleData(input);
  const sizes = [...new Set(data.map((d) => d.primaries))].sort((a, b) => a - b);
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description: "Each step's time against the number of primaries, log-log, one line per step",
    data: { values: data },
    width: 520,
    height: 300,
    encoding: {
      x: {
        field: "primaries",
        type: "quantitative",
        title: "primaries (log)",
        scale: { type: "log" },
        axis: { values: sizes, format: "d" },
      },
      // The legend in the ladder's step order, not alphabetical.
      color: {
        field: "series",
        type: "nominal",
        title: null,
        scale: { scheme: "tableau10", domain: [...new Set(data.map((d) => d.series))] },
      },
    },
    layer: [
      {
        mark: { type: "line", strokeWidth: 2, point: { filled: true, size: 50 } },
        encoding: { y: { field: "seconds", type: "quantitative", title: "seconds (log)", scale: { type: "log" } } },
      },
      {
        mark: { type: "rule", strokeWidth: 1.5 },
        encoding: { y: { field: "min", type: "quantitative" }, y2: { field: "max" } },
      },
    ],
    config: {
      font: CHART_FONT,
      view: { stroke: null },
      legend: { orient: "right", labelFontSize: 12, labelLimit: 320 },
      axis: { labelFontSize: 12, titleFontSize: 12 },
    },
  };
}

/** A step's cell: seconds (ms for verify), with the range over repeated runs. */
function stepCell(f: LadderFile["rungs"][number], step: LadderStep): string {
  const unit = step === "verify" ? (x: number) => `${x.toFixed(0)} ms` : (x: number) => `${(x / 1000).toFixed(2)} s`;
  const s = f.samples?.[step];
  if (s === undefined || s.length < 2) return unit(f.ms[step]);
  const { min, max } = spreadOf(s);
  return `${unit(f.ms[step])} (${unit(min)}–${unit(max)})`;
}

/** Per step: k between each pair of neighbouring sizes, the fitted k, and whether the last pair is super-linear. */
export function exponentRows(
  f: LadderFile,
): { step: LadderStep; pairs: string[]; fitted: number | null; superLinear: boolean }[] {
  return LADDER_STEPS.map((step) => {
    const points = f.rungs.map((r) => ({ primaries: r.primaries, ms: r.ms[step] }));
    const usable = points.every((p) => p.ms > 0);
    const pairs = usable ? neighbourExponents(points) : [];
    const last = usable && points.length >= 2 ? pairExponent(points.at(-2) as never, points.at(-1) as never) : null;
    return { step, pairs, fitted: stepExponent(f, step), superLinear: last !== null && last > SUPER_LINEAR };
  });
}

const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
/** MB/s of `bytes` over `ms` (— when no time). */
const rate = (bytes: number, ms: number): string =>
  ms > 0 ? `${(bytes / 2 ** 20 / (ms / 1000)).toFixed(1)} MB/s` : "—";

/** P → 2P → P per size: the data moved each way counted two ways, the moving's rate, and the writer's figures. */
function reshardTable(f: LadderFile): SafeHtml {
  return html`<table class="scale-reshard">
<thead><tr><th class="num">Primaries</th><th class="num" title="preloaded keys the new primaries held afterwards × (key + value bytes); in brackets their own INFO count of bytes received">P → 2P: data moved</th><th class="num" title="from the new nodes seeing cluster_state:ok to the last slot handed over">moving</th><th class="num">rate</th><th class="num" title="preloaded keys the kept primaries gained back; in brackets their own INFO count of bytes received">2P → P: keys back</th><th class="num">moving</th><th class="num" title="the longest gap between acknowledged (OK) writes of one writer across every slot, no WAIT">Writer: longest pause</th><th class="num">acknowledged</th><th class="num">lost</th><th class="num" title="past the writer's deadline or an error">failed</th><th class="num">Data missing</th></tr></thead>
<tbody>
${f.rungs.map((r) => {
  const x = r.reshard;
  if (x === undefined)
    return html`<tr><td class="num">${r.primaries}</td><td colspan="10">not run at this size (bench:scale --reshard-up-to)</td></tr>\n`;
  return html`<tr><td class="num">${r.primaries}</td><td class="num">${mb(x.bytesMoved)} MB (${mb(x.serverBytesIn)} MB)</td><td class="num">${(x.outMoveMs / 1000).toFixed(2)} s</td><td class="num">${rate(x.bytesMoved, x.outMoveMs)}</td><td class="num">${fmtInt(x.keysMovedBack)} (${mb(x.serverBytesBack)} MB)</td><td class="num">${(x.inMoveMs / 1000).toFixed(2)} s</td><td class="num">${fmtInt(x.writer.longestPauseMs)} ms</td><td class="num">${fmtInt(x.writer.acked)}</td><td class="num ${x.writer.lost > 0 ? "fail" : ""}">${fmtInt(x.writer.lost)}</td><td class="num ${x.writer.failed + x.writer.unexpected > 0 ? "warn" : ""}" title="${x.writer.failures.join(" | ")}">${fmtInt(x.writer.failed + x.writer.unexpected)}</td><td class="num ${x.dataMissing > 0 ? "fail" : ""}">${fmtInt(x.dataMissing)}</td></tr>\n`;
})}</tbody>
</table>`;
}

function ladderTable(s: LadderSource, many: boolean): SafeHtml {
  const f = s.scaleLadder;
  const runs = Math.max(...f.rungs.map((r) => r.samples?.start.length ?? 1));
  return html`<div class="scale-ladder" data-source="${s.label}">
${many ? html`<h3>${s.label}</h3>` : ""}
<p class="note">${f.rungs.map((r) => r.primaries).join(", ")} primaries × (1 + ${f.replicasPerPrimary}), cluster-node-timeout ${f.nodeTimeoutMs} ms${f.pingIntervalMs === undefined ? "" : `, cluster-ping-interval ${f.pingIntervalMs} ms in the failover step`}, valkey-server ${f.valkeyVersion}, every member and the tool on one machine (${f.machine.cpus} × ${f.machine.cpuModel}), ${runs === 1 ? "one run per size" : `${runs} runs per size: the median, the range in brackets`}; measured ${f.measuredAt}.</p>
<table class="scale-rungs">
<thead><tr><th class="num">Primaries</th><th class="num">Nodes</th>${LADDER_STEPS.map((st) => html`<th class="num" title="${LADDER_STEP_MEANING[st]}">${st}</th>`)}<th class="num">Failover: killed</th><th class="num">acknowledged</th><th class="num">lost</th><th class="num" title="from the restart until every member answered PING: the machine's cost of starting that many processes at once">Heal: all started</th><th class="num" title="from the restart until every member's own heal.sh said it was healed: the second measure, each member's view">Heal: every heal.sh done</th><th class="num">Heal: keys missing</th></tr></thead>
<tbody>
${f.rungs.map(
  (r) =>
    html`<tr><td class="num">${r.primaries}</td><td class="num">${r.nodes}</td>${LADDER_STEPS.map((st) => html`<td class="num">${stepCell(r, st)}</td>`)}<td class="num">${r.killed}</td><td class="num">${fmtInt(r.writes.acked)}</td><td class="num ${r.writes.lost > 0 ? "warn" : ""}">${fmtInt(r.writes.lost)}</td><td class="num">${(r.heal.restartMs / 1000).toFixed(2)} s</td><td class="num">${(r.heal.scriptsMs / 1000).toFixed(2)} s</td><td class="num ${r.heal.missing > 0 ? "fail" : ""}">${r.heal.missing} of ${r.heal.keys}</td></tr>\n`,
)}</tbody>
</table>
${reshardTable(f)}
${
  f.rungs.length < 2
    ? html`<p class="note">One size: no exponent.</p>`
    : html`<table class="scale-exponents">
<thead><tr><th>Step</th><th>k between neighbouring sizes</th><th class="num">fitted k</th><th>Between the two largest sizes</th></tr></thead>
<tbody>
${exponentRows(f).map(
  (e) =>
    html`<tr data-step="${e.step}"><td title="${LADDER_STEP_MEANING[e.step]}">${e.step}</td><td>${e.pairs.join(" · ")}</td><td class="num">${e.fitted === null ? "—" : e.fitted.toFixed(2)}</td><td class="${e.superLinear ? "warn" : ""}">${e.superLinear ? `super-linear (k > ${SUPER_LINEAR})` : ""}</td></tr>\n`,
)}</tbody>
</table>`
}
</div>`;
}

export function scaleSection(input: ReportInput, chartSvg: SafeHtml | null): SafeHtml | null {
  const sources = ladderSources(input);
  if (sources.length === 0) return null;
  const many = sources.length > 1;
  return html`<p>How long each step of this tool takes as the cluster grows, on real valkey-server processes (<code>npm run bench:scale</code>). k is the exponent of time ∝ P<sup>k</sup>: 1 is linear, 0 flat, above ${SUPER_LINEAR} between the largest sizes is flagged. Every member shares this machine's cores, so the figures are this machine's; the shape of each line is what carries over.</p>
${chartSvg}${sources.map((s) => ladderTable(s, many))}`;
}
