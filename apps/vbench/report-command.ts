/**
 * `vbench report --from <dir|file> [--from <dir|file> ...] [--output DIR] [--screenshot]`:
 * renders one self-contained report.html from one or more sources side by side (a local run's
 * results directory, a `pulumi stack output report --json` file, a results.csv). Without
 * --output the report goes next to the first source (into it when it is a directory).
 * --screenshot opens the page in headless Chromium, checks it (charts drawn, no console error,
 * no network request) and saves report.png next to it. --prometheus FILE also writes the sources'
 * figures as Prometheus metrics (benchmarks/report/prometheus-export.ts), for node_exporter's
 * textfile collector: written to FILE.tmp and renamed, so a collector never reads half a file.
 * --pushgateway URL PUTs the same text to a Pushgateway as the group `job="vbench"` (replacing the
 * group's previous push).
 *
 * Exit 0 written, 1 the browser check failed, 2 a source is missing or malformed.
 */
import { renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { checkReportInBrowser, type BrowserCheckResult } from "../../benchmarks/report/browser-check.js";
import { loadSources, ReportLoadError } from "../../benchmarks/report/load.js";
import { prometheusExposition } from "../../benchmarks/report/prometheus-export.js";
import { writeReport } from "../../benchmarks/report/render.js";
import { CheckFailed, RunFailed, UsageError } from "./errors.js";

interface ReportFlags {
  from?: string[];
  output?: string;
  screenshot?: boolean;
  prometheus?: string;
  pushgateway?: string;
  json?: boolean;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Where the report goes by default: into the first source's directory, or next to its file. */
export function defaultOutputDir(firstSource: string): string {
  try {
    return statSync(firstSource).isDirectory() ? firstSource : dirname(firstSource);
  } catch {
    return dirname(firstSource);
  }
}

/** Problems a browser check found; empty when the page is fine. */
export function browserProblems(r: BrowserCheckResult): string[] {
  const problems: string[] = [];
  if (r.consoleErrors.length > 0) problems.push(`console errors: ${r.consoleErrors.join(" | ")}`);
  if (r.requests.length > 0) problems.push(`network requests: ${r.requests.join(", ")}`);
  const charts = Object.entries(r.bars);
  if (charts.length === 0) problems.push("no chart on the page");
  for (const [id, n] of charts)
    if (n + (r.points[id] ?? 0) === 0) problems.push(`chart ${id} has no data marks (bars or points)`);
  return problems;
}

/** Opens the report in headless Chromium, saves report.png next to it, throws on problems. */
export async function screenshotReport(htmlPath: string): Promise<BrowserCheckResult> {
  const result = await checkReportInBrowser(htmlPath, { screenshot: join(dirname(htmlPath), "report.png") });
  const problems = browserProblems(result);
  if (problems.length > 0) throw new CheckFailed(`${htmlPath}: browser check failed: ${problems.join("; ")}`);
  return result;
}

/** The sources' figures as Prometheus metrics (the exposition text). */
function exposition(from: readonly string[], flag: string): string {
  try {
    return prometheusExposition(loadSources(from));
  } catch (err) {
    throw new UsageError(`${flag}: ${(err as Error).message}`);
  }
}

/** The sources' figures as Prometheus metrics in `file` (via `file.tmp`, renamed). */
function writeExposition(text: string, file: string): void {
  try {
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
  } catch (err) {
    throw new UsageError(`--prometheus ${file}: cannot write it (${(err as Error).message})`);
  }
}

/** The Pushgateway group the figures replace: `<url>/metrics/job/vbench`. */
export function pushUrl(base: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new UsageError(`--pushgateway ${base}: not a URL (e.g. http://pushgateway:9091)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`--pushgateway ${base}: must be http:// or https://`);
  return `${base.replace(/\/+$/, "")}/metrics/job/vbench`;
}

/** PUTs the figures to the Pushgateway; a refusal names its status and reply. */
async function pushExposition(body: string, base: string): Promise<string> {
  const url = pushUrl(base);
  const res = await fetch(url, {
    method: "PUT",
    headers: { "content-type": "text/plain; version=0.0.4" },
    body,
  }).catch((err: Error) => {
    throw new UsageError(
      `--pushgateway ${base}: cannot reach it (${(err.cause as Error | undefined)?.message ?? err.message})`,
      "CONNECTION",
    );
  });
  if (!res.ok) throw new RunFailed(`--pushgateway ${url}: ${res.status} ${(await res.text()).trim().slice(0, 300)}`);
  return url;
}

export async function runReportCommand(f: ReportFlags): Promise<void> {
  const from = f.from ?? [];
  if (from.length === 0)
    throw new UsageError(
      "report: --from <results dir | stack report .json | results.csv> is required (repeat it to compare sources)",
    );
  if (f.pushgateway !== undefined) pushUrl(f.pushgateway);
  const outputDir = f.output ?? defaultOutputDir(from[0] as string);
  let path: string;
  try {
    path = await writeReport(from, outputDir);
  } catch (err) {
    if (err instanceof ReportLoadError) throw new UsageError(err.message);
    throw err;
  }
  // One exposition (the sources loaded once more) for the file and the push alike.
  const text =
    f.prometheus === undefined && f.pushgateway === undefined
      ? ""
      : exposition(from, f.prometheus !== undefined ? "--prometheus" : "--pushgateway");
  if (f.prometheus !== undefined) writeExposition(text, f.prometheus);
  const pushed = f.pushgateway === undefined ? undefined : await pushExposition(text, f.pushgateway);
  let check: BrowserCheckResult | undefined;
  if (f.screenshot) check = await screenshotReport(path);
  if (f.json) {
    process.stdout.write(
      `${JSON.stringify({ ok: true, report: path, prometheus: f.prometheus ?? null, pushed: pushed ?? null, screenshot: check?.screenshot ?? null, bars: check?.bars ?? null }, null, 2)}\n`,
    );
  } else {
    process.stdout.write(
      `report: ${path}${f.prometheus !== undefined ? `\nprometheus: ${f.prometheus}` : ""}${pushed !== undefined ? `\npushed: ${pushed}` : ""}${check?.screenshot ? `\nscreenshot: ${check.screenshot}` : ""}\n`,
    );
  }
}

export function registerReportCommand(program: Command): void {
  program
    .command("report")
    .description(
      "render report.html (tables, charts, topology, how to read it) from results dirs and/or stack report JSON files, side by side",
    )
    .option(
      "--from <path>",
      "a results/<timestamp>/ dir, a `pulumi stack output report --json` file, or a results.csv (repeatable)",
      collect,
    )
    .option("--output <dir>", "where to write report.html (default: the first --from dir, or the first file's dir)")
    .option("--screenshot", "open the report in headless Chromium, check it, and save report.png next to it")
    .option(
      "--prometheus <file>",
      "also write the sources' figures as Prometheus metrics (for node_exporter's textfile collector: name it *.prom)",
    )
    .option(
      "--pushgateway <url>",
      'also PUT the same metrics to a Prometheus Pushgateway as the group job="vbench" (e.g. http://pushgateway:9091)',
    )
    .option("--json", "print the written paths as JSON")
    .action(async (flags: ReportFlags) => runReportCommand(flags));
}
