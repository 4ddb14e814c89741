/**
 * report.html in a real browser: Debian's headless Chromium (installed by .ci/setup for test
 * runs) opens the file, and the check counts the charts' SVG bar marks, console errors and
 * every network request. A page that does load something and logs an error shows the check
 * catches both. The last test is a real tiny `vbench local` run that must leave report.html and
 * report.png in its run directory.
 */
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkReportInBrowser, findChromium } from "../../benchmarks/report/browser-check.js";
import { renderReport } from "../../benchmarks/report/render.js";
import { loadSources } from "../../benchmarks/report/load.js";
import { fixtureRows, fixtureStackReport, LOCAL_RUN_DIR, writeJson } from "../support/report-fixtures.js";

const scratch = mkdtempSync(join(tmpdir(), "vbench-report-browser-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function isPng(path: string): boolean {
  return readFileSync(path).subarray(0, 8).equals(PNG_SIGNATURE);
}

beforeAll(() => {
  if (findChromium() === undefined) {
    throw new Error(
      "no Chromium on PATH (or CHROMIUM_PATH): run the tests through .ci/setup, which installs Debian's chromium",
    );
  }
});

describe("report.html in headless Chromium", () => {
  it("draws one bar per mode × test and three latency bars per mode × test, with no console error and no request", async () => {
    const path = join(scratch, "local", "report.html");
    await writeReportFile(path, [LOCAL_RUN_DIR]);
    const shot = join(scratch, "local", "report.png");
    const r = await checkReportInBrowser(path, { screenshot: shot });
    const rows = fixtureRows();
    expect(r.bars).toEqual({ rps: rows.length, latency: rows.length * 3 });
    expect(r.svgCount).toBe(2);
    expect(r.consoleErrors).toEqual([]);
    expect(r.requests).toEqual([]);
    expect(isPng(shot)).toBe(true);
    expect(statSync(shot).size).toBeGreaterThan(50_000);
    expect(r.pageHeight).toBeGreaterThan(1500);
  });

  it("draws a local run and a deployed stack side by side", async () => {
    const stack = writeJson(scratch, "stack.json", fixtureStackReport("cluster"));
    const path = join(scratch, "both", "report.html");
    await writeReportFile(path, [LOCAL_RUN_DIR, stack]);
    const r = await checkReportInBrowser(path, { screenshot: join(scratch, "both", "report.png") });
    const bars = fixtureRows().length + fixtureRows("cluster").length;
    expect(r.bars).toEqual({ rps: bars, latency: bars * 3 });
    expect(r.consoleErrors).toEqual([]);
    expect(r.requests).toEqual([]);
  });

  it("catches a page that fetches something and logs an error (the check can fail)", async () => {
    const path = join(scratch, "bad.html");
    writeFileSync(
      path,
      '<!doctype html><html><head><link rel="stylesheet" href="https://fonts.example.invalid/x.css"></head>' +
        '<body><img src="http://example.invalid/chart.png"><script>console.error("boom")</script>' +
        '<figure data-chart="rps"><svg></svg></figure></body></html>',
    );
    const r = await checkReportInBrowser(path);
    expect(r.requests).toEqual(
      expect.arrayContaining(["https://fonts.example.invalid/x.css", "http://example.invalid/chart.png"]),
    );
    expect(r.consoleErrors).toContain("boom");
    expect(r.bars).toEqual({ rps: 0 });
  });

  it("`vbench local` writes report.html and report.png into its run directory", async () => {
    const out = join(scratch, "results");
    const args = [
      "local",
      "--requests",
      "5000",
      "--min-duration",
      "0.2",
      "--tests",
      "set,get",
      "--output",
      out,
      "--quiet",
    ];
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ["--import", "tsx", "apps/vbench/cli.ts", ...args], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("exit", (code) => resolve({ code, stdout, stderr }));
    });
    expect(run.code, run.stderr).toBe(0);
    const [ts] = readdirSync(out);
    const runDir = join(out, ts ?? "?");
    expect(run.stdout).toContain(
      `results: ${runDir}/{results.csv, summary.md, report.html, report.png, dashboards/, raw/}`,
    );
    expect(existsSync(join(runDir, "run.json"))).toBe(true);
    expect(isPng(join(runDir, "report.png"))).toBe(true);
    const r = await checkReportInBrowser(join(runDir, "report.html"));
    expect(r.bars).toEqual({ rps: 4, latency: 12 });
    expect(r.consoleErrors).toEqual([]);
    expect(r.requests).toEqual([]);
  }, 180_000);
});

async function writeReportFile(path: string, from: string[]): Promise<void> {
  const html = await renderReport(loadSources(from));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, html);
}
