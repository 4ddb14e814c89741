/**
 * The latency-target sweep's records as text: the side-by-side table's row "throughput at p99 ≤ 2 ms"
 * per topology with its spread (comparison.ts SideRow), summary.md's section with every step of
 * every sweep, and the raw files (raw/slo-sweep-<mode>.json).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sloLabel } from "../../vocabulary/slo.js";
import type { SideRow } from "./comparison.js";
import {
  formatFigure,
  formatSummary,
  formatSummaryShort,
  rangesOverlap,
  type SloSummary,
  type SloSweepRecord,
} from "./slo-figure.js";

/**
 * "1.24× (cluster ÷ replication; the ranges do not overlap)", or why no ratio is a finding: overlapping ranges, a
 * single run, a bound.
 */
export function sloSpeedupText(cluster: SloSummary, replication: SloSummary): string {
  if (cluster.runs < 2 || replication.runs < 2) return "one run: spread not measured, no winner (run with --repeat 3)";
  if (rangesOverlap(cluster, replication)) return "ranges overlap: no difference beyond run-to-run noise";
  const exact = cluster.median.bound === "exact" && replication.median.bound === "exact";
  const ratio = replication.median.rps > 0 ? `${(cluster.median.rps / replication.median.rps).toFixed(2)}×` : "n/a";
  return `${exact ? "" : "about "}${ratio} (cluster ÷ replication; the ranges do not overlap)`;
}

/**
 * One row per target: each topology's figure with its spread (`short`: "12,345 (11,002 – 13,120)"
 * for the terminal's rps column), and the ratio when it says something.
 */
export function sloSideRows(records: readonly SloSweepRecord[], short = false): SideRow[] {
  const text = short ? formatSummaryShort : formatSummary;
  const targets = [...new Set(records.map((r) => sloLabel(r.target)))];
  return targets.map((label) => {
    const of = (mode: SloSweepRecord["mode"]) => records.find((r) => r.mode === mode && sloLabel(r.target) === label);
    const c = of("cluster");
    const r = of("replication");
    return {
      test: `throughput at ${label}`,
      cluster: c === undefined ? "—" : text(c.summary),
      replication: r === undefined ? "—" : text(r.summary),
      speedup: c === undefined || r === undefined ? "—" : sloSpeedupText(c.summary, r.summary),
    };
  });
}

const n = (x: number | null, digits = 3): string => (x === null ? "—" : x.toFixed(digits));
const rps = (x: number): string => new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 }).format(Math.round(x));

/** summary.md: what the sweep is, then per topology its figure and every step of every sweep. */
export function renderSloMarkdown(records: readonly SloSweepRecord[]): string[] {
  if (records.length === 0) return [];
  const first = records[0] as SloSweepRecord;
  const lines = [
    `## Throughput at a latency target (${sloLabel(first.target)})`,
    "",
    `Per topology: the generator's closed-loop ceiling for the mix ${first.mix.map((e) => `${e.test}:${e.percent}`).join(",")}, then open-loop steps at ` +
      `1/${first.steps} … 100 % of it (${first.stepSeconds} s each, ${first.clients} connections), then ${first.rule.refineSteps} bisections between the last ` +
      `step that met the target and the first that did not. A step meets it with no error, achieved ≥ ${100 * first.rule.achievedShare} % of offered, ` +
      `and the percentile (open loop, from each request's intended send time) within the bound. The figure is the achieved rate of the highest step ` +
      `that met it with every step below it; the median and range are over the sweeps (docs/report-and-sweep.md).`,
    "",
  ];
  for (const r of records) {
    lines.push(`### ${r.mode}: ${formatSummary(r.summary)}`, "", `Swept through ${r.via}.`, "");
    lines.push(
      ...r.runs.map(
        (run, i) =>
          `- Sweep ${i + 1}: closed-loop ceiling ${rps(run.ceiling.rps)}/s, throughput at the target ${formatFigure(run.figure, "/s")}`,
      ),
      "",
    );
    lines.push(
      "| Sweep | Step | Offered /s | Achieved /s | p50 ms | p99 ms | p99.9 ms | Generator lag mean / max ms | Meets | Why not |",
      "|---|---|---|---|---|---|---|---|---|---|",
    );
    r.runs.forEach((run, i) => {
      for (const s of [...run.steps].sort((a, b) => a.offeredRps - b.offeredRps)) {
        const label = s.refined ? "refine" : `${Math.round(100 * s.fraction)} %`;
        lines.push(
          `| ${i + 1} | ${label} | ${rps(s.offeredRps)} | ${rps(s.achievedRps)} | ${n(s.p50_ms)} | ${n(s.p99_ms)} | ${n(s.p999_ms)} | ${n(s.generatorLagMeanMs ?? null, 2)} / ${n(s.generatorLagMaxMs, 1)} | ${s.meets ? "yes" : "no"} | ${s.why.replace(/\|/g, "\\|")} |`,
        );
      }
    });
    lines.push("");
  }
  return lines;
}

/** raw/slo-sweep-<mode>.json per record; returns the paths written. */
export function writeSloFiles(rawDir: string, records: readonly SloSweepRecord[]): string[] {
  mkdirSync(rawDir, { recursive: true });
  return records.map((r) => {
    const path = join(rawDir, `slo-sweep-${r.mode}.json`);
    writeFileSync(path, `${JSON.stringify(r, null, 2)}\n`);
    return path;
  });
}
