/**
 * `vbench sweep` on real valkey-server processes: 1 and 2 shards, rows with scale and exponent
 * computed from the measured rps, sweep.csv and a report whose sweep chart draws in headless
 * Chromium; and `--pin` refused on a machine with too few CPUs, before anything starts.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkReportInBrowser } from "../../benchmarks/report/browser-check.js";
import { parseBenchmarkCsv } from "../../benchmarks/run/benchmark-csv.js";
import { parseSweepCsv, type SweepRow } from "../../benchmarks/sweep/sweep-csv.js";
import { processesWithMarker } from "../support/processes.js";
import { runVbench } from "../support/verify-helpers.js";

const scratch = mkdtempSync(join(tmpdir(), "vbench-sweep-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("vbench sweep on real processes", () => {
  it("runs 1 and 2 shards, computes scale and exponent from the measured rps, writes sweep.csv and the report", async () => {
    const out = join(scratch, "results");
    const marker = `VBENCH_SWEEP_MARKER=${Math.random().toString(36).slice(2)}`;
    const args = [
      "sweep",
      "--shards",
      "1,2",
      "--requests",
      "5000",
      "--min-duration",
      "0.3",
      "--tests",
      "set,get",
      "--output",
      out,
      "--json",
    ];
    const run = await runVbench(args, { VBENCH_SWEEP_MARKER: marker.split("=")[1] });
    expect(run.code, run.stderr).toBe(0);
    expect(processesWithMarker(marker)).toEqual([]);
    const result = JSON.parse(run.stdout) as { runDir: string; report: string; rows: SweepRow[] };
    expect(result.rows.map((r) => `${r.shards}/${r.test}`)).toEqual(["1/SET", "1/GET", "2/SET", "2/GET"]);
    for (const r of result.rows) {
      expect(r.rps).toBeGreaterThan(0);
      expect(r.client_cpus).toBe(availableParallelism());
      expect(r.client_cpu_pct).toBeGreaterThan(0);
      expect(r.pinned).toBe(false);
      const first = result.rows.find((x) => x.test === r.test && x.shards === 1) as SweepRow;
      expect(r.scale).toBeCloseTo(r.rps / first.rps, 5);
      if (r.shards === 1) expect(r.exponent).toBeNull();
      else expect(r.exponent).toBeCloseTo(Math.log(r.rps / first.rps) / Math.log(2), 5);
    }
    expect(readdirSync(out)).toHaveLength(1);
    const csv = parseSweepCsv(readFileSync(join(result.runDir, "sweep.csv"), "utf8"));
    expect(csv.map((r) => r.rps)).toEqual(result.rows.map((r) => r.rps));
    expect(existsSync(join(result.runDir, "raw", "verify-2-shards.json"))).toBe(true);

    const page = await checkReportInBrowser(result.report, { screenshot: join(result.runDir, "report.png") });
    expect(page.points).toEqual({ sweep: result.rows.length });
    expect(page.consoleErrors).toEqual([]);
    expect(page.requests).toEqual([]);
    const html = readFileSync(result.report, "utf8");
    expect(html).toContain('<section id="sweep">');
    expect(html).not.toContain('<section id="side-by-side">');
    const get2 = result.rows.find((r) => r.test === "GET" && r.shards === 2) as SweepRow;
    expect(html).toContain(`GET 1→2 shards: p = ${(get2.exponent as number).toFixed(2)}`);
  }, 180_000);

  it("--client-processes 2: two benchmark processes per test and step, rps their sum, worst p99, CPU share over both", async () => {
    const out = join(scratch, "two-clients");
    const marker = `VBENCH_SWEEP_MARKER=${Math.random().toString(36).slice(2)}`;
    const args = [
      "sweep",
      "--shards",
      "1,2",
      "--client-processes",
      "2",
      "--requests",
      "4000",
      "--min-duration",
      "0",
      "--tests",
      "set",
      "--output",
      out,
      "--json",
    ];
    const run = await runVbench(args, { VBENCH_SWEEP_MARKER: marker.split("=")[1] });
    expect(run.code, run.stderr).toBe(0);
    expect(processesWithMarker(marker)).toEqual([]);
    const result = JSON.parse(run.stdout) as { runDir: string; rows: SweepRow[] };
    expect(result.rows.map((r) => `${r.shards}/${r.test}`)).toEqual(["1/SET", "2/SET"]);
    for (const r of result.rows) {
      // Each process's own report, from the raw files the runner writes per client process.
      const perProcess = [1, 2].map((i) => {
        const raw = readFileSync(
          join(result.runDir, "raw", `${r.shards}-shards`, `cluster-set-1-client${i}.txt`),
          "utf8",
        );
        const [line] = parseBenchmarkCsv(
          raw.slice(raw.indexOf("# --- stdout ---") + 16, raw.indexOf("# --- stderr ---")),
        );
        if (line === undefined) throw new Error(`${r.shards} shards, client ${i}: no result line`);
        return line;
      });
      expect(r.rps).toBeCloseTo(
        perProcess.reduce((n, l) => n + l.rps, 0),
        1,
      );
      expect(r.p99_ms).toBe(Math.max(...perProcess.map((l) => l.p99Ms)));
      expect(r.notes).toMatch(/2 client processes: rps summed/);
      expect(r.client_cpu_pct).toBeGreaterThan(0);
      expect(existsSync(join(result.runDir, "raw", `${r.shards}-shards`, "cluster-set-1-client3.txt"))).toBe(false);
    }
    const first = result.rows[0] as SweepRow;
    const second = result.rows[1] as SweepRow;
    expect(second.scale).toBeCloseTo(second.rps / first.rps, 5);
  }, 180_000);

  it("refuses --pin when the machine has too few CPUs for the largest step, naming the counts", async () => {
    const cpus = availableParallelism();
    const out = join(scratch, "pinned");
    const run = await runVbench(["sweep", "--shards", `1,${cpus}`, "--pin", "--output", out]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `vbench: --pin needs ${cpus + 1} CPUs for ${cpus} shard(s) (one per primary plus at least one for the benchmark client); this machine has ${cpus}. Use fewer shards or drop --pin.\n`,
    );
    expect(existsSync(out)).toBe(false);
  });
});
