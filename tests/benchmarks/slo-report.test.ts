/**
 * Throughput at a latency target in the report and the verdict: a run directory's
 * raw/slo-sweep-<mode>.json and a stack report's `benchmark.mix.sloSweep` load into the model
 * (garbage named by file and field); the verdict says "at p99 ≤ 2 ms: replication X ops/s,
 * cluster Y ops/s" with the ranges, "no difference beyond run-to-run noise" when they overlap,
 * "not measured (run with --slo …)" without a sweep; report.html has the section and ONE chart of
 * both topologies' curves, drawn in headless Chromium with no console error and no request. The
 * records come from tests/support/slo-fixtures.ts (the sweep's own rule over given curves).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadSource } from "../../benchmarks/report/load.js";
import { verdict, verdictInputs, type VerdictLine } from "../../benchmarks/report/verdict.js";
import { writeRunVerdict } from "../../benchmarks/report/verdict-run.js";
import { renderReport } from "../../benchmarks/report/render.js";
import { sloChartSpec, sloCurveData } from "../../benchmarks/report/slo-section.js";
import { checkReportInBrowser, findChromium } from "../../benchmarks/report/browser-check.js";
import { parseMixJobResult } from "../../benchmarks/run/mix-job-result.js";
import { renderSloMarkdown, writeSloFiles } from "../../benchmarks/run/slo-table.js";
import type { SloSweepRecord } from "../../benchmarks/run/slo-figure.js";
import { fixtureStackReport, LOCAL_RUN_DIR, writeJson } from "../support/report-fixtures.js";
import { fixtureSloSweep } from "../support/slo-fixtures.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A copy of the fixture local run with these sweeps in raw/. */
function runWith(records: readonly SloSweepRecord[]): string {
  const dir = mkdtempSync(join(tmpdir(), "slo-report-"));
  dirs.push(dir);
  cpSync(LOCAL_RUN_DIR, dir, { recursive: true });
  writeSloFiles(join(dir, "raw"), records);
  return dir;
}

const sloLine = (lines: VerdictLine[]): VerdictLine => lines.find((l) => l.topic === "slo") as VerdictLine;
const lineOf = (dir: string): VerdictLine => sloLine(verdict(verdictInputs([loadSource(dir)])[0]!.input));

// Replication meets p99 ≤ 2 ms up to 60 % of 10–12k/s, cluster up to 80 % of 30–32k/s.
const replication = fixtureSloSweep("replication", [10_000, 11_000, 12_000], (f) => (f <= 0.6 ? 1 : 5));
const cluster = fixtureSloSweep("cluster", [30_000, 31_000, 32_000], (f) => (f <= 0.8 ? 1 : 5));

describe("throughput at a latency target: report and verdict", () => {
  it("a run's raw/slo-sweep files load into the model; the verdict gives both figures with their ranges and the ratio when the ranges are apart", () => {
    const dir = runWith([replication, cluster]);
    const source = loadSource(dir);
    expect(source.sloSweeps).toEqual([replication, cluster]);
    const l = lineOf(dir);
    expect(l.measured).toBe(true);
    expect(l.text).toMatch(
      /^Throughput at p99 ≤ 2 ms: replication 6,534 ops\/s \(3 runs: 5,940 – 7,128\), cluster 24,552 ops\/s \(3 runs: 23,760 – 25,344\); 3\.76× \(cluster ÷ replication; the ranges do not overlap\)\. Local servers and the client share/,
    );
    expect(l.from).toEqual([
      `${source.label}: raw/slo-sweep-replication.json`,
      `${source.label}: raw/slo-sweep-cluster.json`,
    ]);
    // summary.md and the terminal carry the same line.
    const text = writeRunVerdict(dir);
    expect(text).toContain("Throughput at p99 ≤ 2 ms: replication 6,534 ops/s");
    expect(readFileSync(join(dir, "summary.md"), "utf8")).toContain(
      "- Throughput at p99 ≤ 2 ms: replication 6,534 ops/s",
    );
  });

  it("summary.md's section: each topology's figure, each sweep's ceiling and figure, every step with why it missed", () => {
    const md = renderSloMarkdown([replication, cluster]).join("\n");
    expect(md).toContain("## Throughput at a latency target (p99 ≤ 2 ms)");
    expect(md).toContain("### replication: 6,534 ops/s (3 runs: 5,940 – 7,128)");
    expect(md).toContain("- Sweep 1: closed-loop ceiling 10,000/s, throughput at the target 5,940/s");
    expect(md).toContain("| 1 | 80 % | 8,000 | 7,920 | 1.250 | 5.000 | 10.000 | — / 1.5 | no | p99 5 ms > 2 ms |");
    expect(md.match(/^\| \d \| /gm)).toHaveLength(2 * 3 * 5);
  });

  it("overlapping ranges: 'no difference beyond run-to-run noise', never a winner", () => {
    const close = fixtureSloSweep("cluster", [8_000, 11_000, 13_000], (f) => (f <= 0.6 ? 1 : 5));
    const l = lineOf(runWith([replication, close]));
    expect(l.text).toContain(
      "cluster 6,534 ops/s (3 runs: 4,752 – 7,722); ranges overlap: no difference beyond run-to-run noise.",
    );
    expect(l.text).not.toMatch(/×/);
  });

  it("the bound's edges reach the verdict as words: below the lowest step, at least; one side not swept says so", () => {
    const never = fixtureSloSweep("replication", [10_000], () => 9);
    const always = fixtureSloSweep("cluster", [30_000], () => 1);
    const l = lineOf(runWith([never, always]));
    expect(l.text).toContain("replication below 2,000 ops/s, the lowest step (one run: no spread measured)");
    expect(l.text).toContain("cluster at least 29,700 ops/s, every step met it (one run: no spread measured)");
    expect(l.text).toContain("one run: spread not measured, no winner (run with --repeat 3)");
    expect(lineOf(runWith([replication])).text).toMatch(
      /^Throughput at p99 ≤ 2 ms: replication 6,534 ops\/s \(3 runs: .+\), cluster not measured\./,
    );
  });

  it("without a sweep: 'not measured (run with --slo …)', and the choice lists it as not weighed", () => {
    const lines = verdict(verdictInputs([loadSource(LOCAL_RUN_DIR)])[0]!.input);
    expect(sloLine(lines)).toEqual({
      topic: "slo",
      text: "Throughput at a latency target: not measured (run with `--slo p99:2ms`: an open-loop rate sweep per topology; deployed: benchmark.slo with benchmark.mix).",
      from: [],
      measured: false,
    });
    expect(lines.find((l) => l.topic === "choice")?.text).toMatch(/Not measured, so not weighed: .*slo/);
  });

  it("a broken raw/slo-sweep file is refused naming the file and the field", () => {
    const dir = runWith([replication]);
    writeFileSync(
      join(dir, "raw", "slo-sweep-cluster.json"),
      JSON.stringify({ ...cluster, summary: { ...cluster.summary, runs: 0 } }),
    );
    expect(() => loadSource(dir)).toThrow(/slo-sweep-cluster\.json: not a slo-sweep file \(summary\.runs: /);
  });

  it("a deployed stack's benchmark.mix.sloSweep: the Job's result line validates it, the report loads it, two stacks compare", () => {
    const extras = { served: { total: 10, commands: [] }, latency: { p999_ms: {}, histograms: {} } };
    const stack = (mode: "cluster" | "replication", sweep: SloSweepRecord) => {
      const r = fixtureStackReport(mode);
      return { ...r, benchmark: { ...r.benchmark!, mix: { ...extras, sloSweep: sweep } } };
    };
    const rows = fixtureStackReport("cluster").benchmark!.rows;
    expect(parseMixJobResult(JSON.stringify({ rows, ...extras, sloSweep: cluster })).sloSweep).toEqual(cluster);
    expect(() => parseMixJobResult(JSON.stringify({ rows, ...extras, sloSweep: { ...cluster, runs: [] } }))).toThrow(
      /sloSweep\.runs: /,
    );
    const dir = mkdtempSync(join(tmpdir(), "slo-stacks-"));
    dirs.push(dir);
    const c = loadSource(writeJson(dir, "cluster.json", stack("cluster", cluster)));
    const r = loadSource(writeJson(dir, "replication.json", stack("replication", replication)));
    expect(c.sloSweeps).toEqual([cluster]);
    const l = sloLine(verdict(verdictInputs([c, r])[0]!.input));
    expect(l.text).toMatch(/^Throughput at p99 ≤ 2 ms: replication 6,534 ops\/s .*cluster 24,552 ops\/s .*3\.76×/);
    expect(l.text).not.toContain("share one machine");
    expect(l.from).toEqual([`${r.label}: benchmark.mix.sloSweep`, `${c.label}: benchmark.mix.sloSweep`]);
  });

  it("report.html: the section with both figures and ONE chart of both curves (a point per step × percentile × sweep, the bound and each median as rules), drawn in headless Chromium", async () => {
    const dir = runWith([replication, cluster]);
    const input = { title: "t", generatedAt: "2026-01-01T00:00:00Z", sources: [loadSource(dir)] };
    const data = sloCurveData(input);
    expect(data).toHaveLength(2 * 3 * 5 * 3);
    expect(new Set(data.map((d) => d.series))).toEqual(new Set(["replication", "cluster"]));
    const layers = (sloChartSpec(input) as { layer: { data: { values: unknown[] } }[] }).layer;
    expect(layers.map((x) => x.data.values.length)).toEqual([90, 1, 2]);
    const html = await renderReport(input.sources);
    expect(html).toContain('<section id="slo">');
    expect(html.match(/data-chart="slo"/g)).toHaveLength(1);
    expect(html).toMatch(
      /<tr data-series="replication"><td>replication<\/td><td>p99 ≤ 2 ms<\/td><td class="num"><strong>6,534 ops\/s \(3 runs: 5,940 – 7,128\)/,
    );
    const path = join(dir, "report.html");
    writeFileSync(path, html);
    if (findChromium() === undefined)
      throw new Error("no Chromium on PATH (or CHROMIUM_PATH): run the tests through .ci/setup");
    const b = await checkReportInBrowser(path, { screenshot: join(dir, "report.png") });
    expect(b.points.slo).toBe(90);
    expect(b.rules.slo).toBe(3);
    expect(b.consoleErrors).toEqual([]);
    expect(b.requests).toEqual([]);
  }, 120_000);
});
