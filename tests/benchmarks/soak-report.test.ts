/**
 * A soak in the report: a run directory with raw/soak-replication.json (a hand-built series of
 * six samples, two members and two events) renders the soak section, its events table and two
 * charts, which headless Chromium draws with one point per sample and metric and one rule per
 * event and panel, with no console error and no request. A run without a soak has no soak
 * section; a malformed soak file names itself.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkReportInBrowser, findChromium } from "../../benchmarks/report/browser-check.js";
import { loadSources } from "../../benchmarks/report/load.js";
import { renderReport } from "../../benchmarks/report/render.js";
import { parseMemberInfo } from "../../benchmarks/run/soak-info.js";
import type { MemberInfo, SoakFile } from "../../benchmarks/run/soak-sample.js";
import { LOCAL_RUN_DIR } from "../support/report-fixtures.js";

const scratch = mkdtempSync(join(tmpdir(), "soak-report-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const member = (m: string, role: string, i: number): MemberInfo => ({
  ...parseMemberInfo(m, ""),
  role,
  used_memory: 2_000_000 + i * 100_000,
  mem_fragmentation_ratio: 1.2 + i / 100,
  aof_rewrites: i >= 3 ? 1 : 0,
  aof_rewrite_in_progress: 0,
  sync_full: 1,
});

const SOAK: SoakFile = {
  mode: "replication",
  sampleSeconds: 1,
  startedAt: "2026-11-25T12:00:00.000Z",
  baseline: [member("127.0.0.1:7000", "master", 0), member("127.0.0.1:7001", "slave", 0)],
  samples: Array.from({ length: 6 }, (_, i) => ({
    t_s: i + 1,
    at: `2026-11-25T12:00:0${i + 1}.000Z`,
    window_s: 1,
    requests: 50_000,
    errors: 0,
    rps: 50_000 - i * 100,
    p50_ms: 0.1,
    p99_ms: i === 3 ? 4 : 0.4,
    p999_ms: i === 3 ? 9 : 0.9,
    max_ms: 12,
    members: [member("127.0.0.1:7000", "master", i), member("127.0.0.1:7001", "slave", i)],
  })),
  events: [
    {
      kind: "aof-rewrite",
      member: "127.0.0.1:7000",
      t_s: 4,
      at: "2026-11-25T12:00:04.000Z",
      evidence: "aof_rewrites 0→1 <b>",
      fork_usec: 812,
      latency_spike: { p99_ms: 4, median_p99_ms: 0.4 },
    },
    {
      kind: "full-resync",
      member: "127.0.0.1:7000",
      t_s: 5,
      at: "2026-11-25T12:00:05.000Z",
      evidence: "sync_full 1→2",
      fork_usec: null,
      latency_spike: null,
    },
  ],
};

function runDirWith(soak: unknown): string {
  const dir = mkdtempSync(join(scratch, "run-"));
  cpSync(LOCAL_RUN_DIR, dir, { recursive: true });
  if (soak !== undefined) {
    mkdirSync(join(dir, "raw"), { recursive: true });
    writeFileSync(join(dir, "raw", "soak-replication.json"), JSON.stringify(soak));
  }
  return dir;
}

describe("a soak in the report", () => {
  it("renders the events table (escaped) and two charts over time, drawn in Chromium with every sample and event", async () => {
    const dir = runDirWith(SOAK);
    const sources = loadSources([dir]);
    expect(sources[0]?.soak?.map((s) => [s.mode, s.samples.length, s.events.length])).toEqual([["replication", 6, 2]]);
    const page = await renderReport(sources);
    expect(page).toContain('<section id="soak">');
    expect(page).toContain("replication: 6 samples every 1 s from 2026-11-25T12:00:00.000Z");
    expect(page).toContain(
      '<td>aof-rewrite</td><td>127.0.0.1:7000</td><td class="num">812</td><td class="num warn">4 (median 0.4)</td>',
    );
    expect(page).toContain("aof_rewrites 0→1 &lt;b&gt;");
    const path = join(dir, "report.html");
    writeFileSync(path, page);
    if (findChromium() === undefined)
      throw new Error("no Chromium on PATH (or CHROMIUM_PATH): run the tests through .ci/setup");
    const r = await checkReportInBrowser(path);
    // Load: 6 rps points + 6 × (p99, p99.9) latency points; memory: 2 members × 6 samples × 2 panels.
    expect(r.points["soak-load"]).toBe(6 + 12);
    expect(r.points["soak-memory"]).toBe(24);
    // One rule per event in each of the two panels of each chart.
    expect([r.rules["soak-load"], r.rules["soak-memory"]]).toEqual([4, 4]);
    expect(r.consoleErrors).toEqual([]);
    expect(r.requests).toEqual([]);
  }, 120_000);

  it("a run without a soak has no soak section; a malformed soak file names itself", async () => {
    expect(await renderReport(loadSources([runDirWith(undefined)]))).not.toContain('id="soak"');
    const bad = runDirWith({ ...SOAK, samples: [{ t_s: "one" }] });
    expect(() => loadSources([bad])).toThrow(/soak-replication\.json: not a soak record \(samples\.0\.t_s: /);
  });
});
