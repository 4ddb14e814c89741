/**
 * Opens a report.html from disk in headless Chromium (the Debian `chromium` package, or the
 * executable named by $CHROMIUM_PATH; never a downloaded browser), driven by playwright-core,
 * and reports what a reader would get: the charts' SVG data marks, console errors, and every
 * network request other than the file itself (each is also aborted). Optionally saves a
 * full-page screenshot.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { which } from "../run/binaries.js";

/** Flags for a quiet, offline headless run (no sandbox: containers often cannot provide one). */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-dev-shm-usage",
] as const;

const CANDIDATES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

/** $CHROMIUM_PATH, else the first of chromium, chromium-browser, google-chrome on PATH. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const named = env.CHROMIUM_PATH;
  if (named !== undefined && named !== "") return named;
  for (const name of CANDIDATES) {
    const found = which(name, env.PATH ?? "");
    if (found) return found;
  }
  return undefined;
}

export interface BrowserCheckResult {
  /** The file:// URL opened. */
  url: string;
  /** Inline <svg> elements on the page. */
  svgCount: number;
  /** Per figure[data-chart]: the number of bar marks (Vega's aria-roledescription="bar"). */
  bars: Record<string, number>;
  /** Per figure[data-chart]: the number of point marks (aria-roledescription="point"). */
  points: Record<string, number>;
  /** Per figure[data-chart]: the number of rule marks (aria-roledescription="rule mark": a soak's events). */
  rules: Record<string, number>;
  /** console.error messages and uncaught page errors. */
  consoleErrors: string[];
  /** Every request the page made other than the report file itself (all were aborted). */
  requests: string[];
  /** Rendered page height in CSS pixels. */
  pageHeight: number;
  screenshot?: string;
}

export interface BrowserCheckOptions {
  /** Where to save a full-page PNG. */
  screenshot?: string;
  /** @default findChromium() */
  executablePath?: string;
  /** @default 60000 */
  timeoutMs?: number;
}

export class BrowserUnavailableError extends Error {
  constructor() {
    super(
      "no Chromium found: install the Debian package (apt-get install -y chromium, or run through .ci/setup) or set CHROMIUM_PATH",
    );
    this.name = "BrowserUnavailableError";
  }
}

export async function checkReportInBrowser(htmlPath: string, o: BrowserCheckOptions = {}): Promise<BrowserCheckResult> {
  const executablePath = o.executablePath ?? findChromium();
  if (executablePath === undefined) throw new BrowserUnavailableError();
  const { chromium } = await import("playwright-core");
  const url = pathToFileURL(resolve(htmlPath)).href;
  const userDataDir = mkdtempSync(join(tmpdir(), "vbench-chromium-"));
  const timeout = o.timeoutMs ?? 60_000;
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1280, height: 900 },
    offline: true,
    timeout,
  });
  try {
    const requests: string[] = [];
    const consoleErrors: string[] = [];
    context.on("request", (r) => {
      if (r.url() !== url) requests.push(r.url());
    });
    await context.route("**/*", (route) =>
      route.request().url() === url ? route.continue() : route.abort("blockedbyclient"),
    );
    const page = context.pages()[0] ?? (await context.newPage());
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text());
    });
    page.on("pageerror", (e) => consoleErrors.push(`page error: ${e.message}`));
    await page.goto(url, { waitUntil: "load", timeout });
    const svgCount = await page.locator("svg").count();
    const bars: Record<string, number> = {};
    const points: Record<string, number> = {};
    const rules: Record<string, number> = {};
    for (const fig of await page.locator("figure[data-chart]").all()) {
      const id = (await fig.getAttribute("data-chart")) ?? "?";
      bars[id] = await fig.locator('svg [aria-roledescription="bar"]').count();
      points[id] = await fig.locator('svg [aria-roledescription="point"]').count();
      rules[id] = await fig.locator('svg [aria-roledescription="rule mark"]').count();
    }
    const pageHeight = Number(await page.evaluate("document.documentElement.scrollHeight"));
    if (o.screenshot) await page.screenshot({ path: o.screenshot, fullPage: true, timeout });
    return {
      url,
      svgCount,
      bars,
      points,
      rules,
      consoleErrors,
      requests,
      pageHeight,
      ...(o.screenshot ? { screenshot: o.screenshot } : {}),
    };
  } finally {
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true });
  }
}
