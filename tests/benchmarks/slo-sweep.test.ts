/**
 * Throughput at a latency target (benchmarks/run/slo-sweep.ts) on a real valkey-server: the sweep
 * measures the generator's closed-loop ceiling, runs its open-loop steps and finds the highest rate
 * that meets `p50 ≤ 15 ms`. Slowing the server on purpose moves the figure: SIGSTOP bursts (150 ms
 * frozen in every 200 ms, so most requests wait tens of ms) while the offered rate is above 47 % of
 * the sweep's own ceiling (the condition: a server that falls over past a load) bracket the figure
 * between the steps, so the sweep refines between them and lands below 47 % of the ceiling; the
 * bursts at every rate leave no step meeting the target, and the figure says "below the lowest
 * step" instead of a rate. Two servers swept twice each interleave (A B A B) and each record
 * carries both runs. Through the CLI (`vbench bench --slo`): the JSON, raw/slo-sweep-<mode>.json,
 * the side-by-side row in the terminal and summary.md, the report's section and chart; bad flags
 * exit 2 naming the flag. The target is a p50 because this machine's 2 shared cores put tens of ms into
 * an unslowed p99 (measured: p99 48 ms at 40 % of the ceiling with the load average at 12), while
 * the median stays far below the frozen server's; the percentile a target names is the table
 * tests' (slo-figure.test.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { runMix, type MixResult, type RunMixOptions } from "../../benchmarks/run/mix-runner.js";
import { runSloSweep, runSloSweeps, type SloSweepSide } from "../../benchmarks/run/slo-sweep.js";
import { sloSweepSchema } from "../../benchmarks/run/slo-sweep-schema.js";
import { formatSummary, type SloSweepRun } from "../../benchmarks/run/slo-figure.js";
import { SLO_REFINE_STEPS } from "../../vocabulary/slo.js";
import { SEED_WORKLOAD, type Workload } from "../../vocabulary/workload.js";
import { runVbench } from "../support/verify-helpers.js";

const fleet = new LocalFleet();
let a: ValkeyProcess;
let b: ValkeyProcess;

beforeAll(async () => {
  [a, b] = await Promise.all([fleet.start({ name: "slo-a" }), fleet.start({ name: "slo-b" })]);
}, 30_000);
afterAll(async () => {
  await fleet.stopAll();
});

const STEPS = 5;
const workload: Workload = {
  ...SEED_WORKLOAD,
  name: "slo",
  clients: 4,
  pipeline: 8,
  keyspaceLength: 10_000,
  mix: [
    { test: "get", percent: 80 },
    { test: "set", percent: 20 },
  ],
  slo: { percentile: "p50", boundMs: 15 },
  sloSteps: STEPS,
  sloStepSeconds: 1,
};

const side = (s: ValkeyProcess): SloSweepSide => ({
  via: `the server ${s.address}`,
  options: {
    workload,
    target: { host: s.host, port: s.port, cluster: false },
    mode: "replication",
    serverVersion: "test",
    timestamp: "20260101-000000",
    members: [{ host: s.host, port: s.port }],
  },
});

/** runMix with the server frozen 150 ms in every 200 ms while `slow(o)` holds for the run. */
function slowedWhen(
  server: ValkeyProcess,
  slow: (o: RunMixOptions) => boolean,
): (o: RunMixOptions) => Promise<MixResult> {
  return async (o) => {
    if (!slow(o)) return runMix(o);
    const timer = setInterval(() => {
      process.kill(server.pid, "SIGSTOP");
      setTimeout(() => process.kill(server.pid, "SIGCONT"), 150);
    }, 200);
    try {
      return await runMix(o);
    } finally {
      clearInterval(timer);
      await new Promise((r) => setTimeout(r, 160));
      process.kill(server.pid, "SIGCONT");
    }
  };
}

const coarse = (r: SloSweepRun) => r.steps.filter((s) => !s.refined);
const show = (what: string, r: SloSweepRun): void =>
  console.log(
    `[slo] ${what}: ceiling ${Math.round(r.ceiling.rps)}/s; ${r.steps.map((s) => `${s.refined ? "r" : ""}${Math.round(s.offeredRps)}→${Math.round(s.achievedRps)} p50 ${s.p50_ms} p99 ${s.p99_ms}${s.meets ? "✓" : "✗"}`).join(", ")}; figure ${r.figure.bound} ${Math.round(r.figure.rps)}`,
  );

describe("latency-target sweep on a real valkey-server", () => {
  let normal: SloSweepRun;

  it("finds a rate: the ceiling first, then open-loop steps at 1/5 … 100 % of it; every step below the figure met the target", async () => {
    normal = await runSloSweep(side(a));
    show("normal", normal);
    expect(normal.ceiling.rps).toBeGreaterThan(1000);
    expect(coarse(normal).map((s) => s.fraction)).toEqual([0.2, 0.4, 0.6, 0.8, 1]);
    expect(coarse(normal).map((s) => s.offeredRps)).toEqual(
      [1, 2, 3, 4, 5].map((i) => Math.round((normal.ceiling.rps * i) / STEPS)),
    );
    expect(normal.figure.bound).not.toBe("below");
    expect(normal.figure.rps).toBeGreaterThan(0.95 * 0.2 * normal.ceiling.rps);
    for (const s of normal.steps.filter((x) => x.offeredRps <= normal.figure.rps)) {
      expect(s.meets, s.why).toBe(true);
      expect(s.p50_ms).toBeLessThanOrEqual(15);
      expect(s.achievedRps).toBeGreaterThanOrEqual(0.95 * s.offeredRps);
      expect(s.generatorLagMaxMs).not.toBeNull();
    }
  }, 120_000);

  it("a server that stalls above 47 % of the ceiling: the coarse steps bracket the target, two bisections refine it, the figure lands below 47 %", async () => {
    let ceiling = 0;
    const run = slowedWhen(a, (o) => o.workload.rate !== undefined && o.workload.rate > 0.47 * ceiling);
    const r = await runSloSweep(side(a), async (o) => {
      const out = await run(o);
      if (o.workload.rate === undefined) ceiling = out.rows.find((x) => x.test === "MIX")?.rps ?? 0;
      return out;
    });
    show("slow above 47 %", r);
    const refined = r.steps.filter((s) => s.refined);
    expect(refined).toHaveLength(SLO_REFINE_STEPS);
    // The slowdown's own effect: no step above 47 % meets the target.
    expect(r.steps.filter((s) => s.offeredRps > 0.47 * r.ceiling.rps).every((s) => !s.meets)).toBe(true);
    // The bisections lie between the last coarse step that met it and the next one, which did not: 40 % and 60 % on an
    // idle machine; under a CPU hog a step below 47 % may miss too (the ceiling, measured once, swings ±35 % there:
    // 40 % offered, 90 % achieved, in one such run), and the bracket is then lower. The rule, not the machine's speed.
    const lastMet = coarse(r)
      .filter((s) => s.meets)
      .at(-1);
    const above = coarse(r).find((s) => s.offeredRps > (lastMet?.offeredRps ?? Infinity));
    expect(lastMet?.fraction).toBeLessThanOrEqual(0.4);
    expect(above?.meets).toBe(false);
    expect(
      refined.every((s) => s.offeredRps > (lastMet?.offeredRps ?? 0) && s.offeredRps < (above?.offeredRps ?? 0)),
    ).toBe(true);
    expect(r.figure.bound).toBe("exact");
    expect(r.figure.rps).toBeGreaterThanOrEqual(lastMet?.achievedRps ?? Infinity);
    expect(r.figure.rps).toBeLessThanOrEqual(0.47 * r.ceiling.rps);
  }, 120_000);

  it("a server slowed at every rate moves the figure down to 'below the lowest step', never a silent 0", async () => {
    const r = await runSloSweep(
      side(a),
      slowedWhen(a, () => true),
    );
    show("slow always", r);
    expect(r.steps.every((s) => !s.meets)).toBe(true);
    expect(r.steps.some((s) => s.refined)).toBe(false);
    expect(r.figure).toEqual({ bound: "below", rps: coarse(r)[0]?.offeredRps });
    expect(r.figure.rps).toBeGreaterThan(0);
    expect(r.figure.rps).toBeLessThan(normal.figure.rps);
    expect(r.steps[0]?.why).toMatch(/p50 [\d.]+ ms > 15 ms/);
  }, 120_000);

  it("two servers, two sweeps each: interleaved A B A B, each record holds both runs with its median and range, and validates as raw/slo-sweep JSON", async () => {
    const order: string[] = [];
    const records = await runSloSweeps([side(a), side(b)], 2, async (o) => {
      if (o.workload.rate === undefined) order.push(String(o.target.port));
      return runMix(o);
    });
    expect(order).toEqual([a, b, a, b].map((s) => String(s.port)));
    expect(records.map((x) => x.via)).toEqual([`the server ${a.address}`, `the server ${b.address}`]);
    for (const rec of records) {
      expect(rec.runs).toHaveLength(2);
      expect(rec.summary.runs).toBe(2);
      expect(rec.summary.min.rps).toBeLessThanOrEqual(rec.summary.max.rps);
      expect(rec.summary.median).toEqual(rec.summary.min);
      expect(formatSummary(rec.summary)).toMatch(/ops\/s.* \(2 runs: .+ – .+\)$/);
      expect(sloSweepSchema.parse(JSON.parse(JSON.stringify(rec)))).toEqual(rec);
    }
  }, 240_000);

  it("vbench bench --slo: the JSON, raw/slo-sweep-replication.json, the side-by-side row, summary.md's steps, the report's section and chart", async () => {
    const out = mkdtempSync(join(tmpdir(), "slo-cli-"));
    try {
      const args = [
        "bench",
        "--target",
        a.address,
        "--mix",
        "get:80,set:20",
        "--duration-s",
        "1",
        "--clients",
        "4",
        "--pipeline",
        "8",
      ];
      const r = await runVbench([
        ...args,
        "--slo",
        "p50:15ms",
        "--slo-steps",
        "3",
        "--slo-step-s",
        "1",
        "--repeat",
        "2",
        "--json",
        "--output",
        out,
      ]);
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as {
        runDir: string;
        sloSweep: { mode: string; runs: unknown[]; summary: { runs: number }; target: unknown };
      };
      expect(j.sloSweep).toMatchObject({
        mode: "replication",
        target: { percentile: "p50", boundMs: 15 },
        steps: 3,
        stepSeconds: 1,
        summary: { runs: 2 },
      });
      const file = sloSweepSchema.parse(
        JSON.parse(readFileSync(join(j.runDir, "raw", "slo-sweep-replication.json"), "utf8")),
      );
      expect(file).toEqual(j.sloSweep);
      const summary = readFileSync(join(j.runDir, "summary.md"), "utf8");
      expect(summary).toMatch(/\| throughput at p50 ≤ 15 ms \| — \| .+ ops\/s.* \(2 runs: .+\) \| — \|/);
      expect(summary).toContain("## Throughput at a latency target (p50 ≤ 15 ms)");
      const page = readFileSync(join(j.runDir, "report.html"), "utf8");
      expect(page).toContain('<section id="slo">');
      expect(page).toContain('data-chart="slo"');
      expect(page.match(/<tr data-series="replication">/g)).toHaveLength(1);
      const text = await runVbench([
        ...args,
        "--slo",
        "p50:15ms",
        "--slo-steps",
        "2",
        "--slo-step-s",
        "1",
        "--repeat",
        "1",
        "--output",
        out,
      ]);
      expect(text.code, text.stderr).toBe(0);
      // The per-mode table: the figure in the rps column of its topology's line; the speedup table: none (one
      // topology).
      expect(text.stdout).toMatch(/^throughput at p50 ≤ 15 ms +replication +(≥ |< )?[\d,]+ \(1 run\)$/m);
      expect(text.stdout).toMatch(/^throughput at p50 ≤ 15 ms +—$/m);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);

  it.each([
    [["--slo", "p99:2"], "--slo: 'p99:2' has no unit"],
    [["--slo", "fast"], "--slo: 'fast' is not <percentile>:<bound><unit>"],
    [["--slo", "p95:2ms"], "--slo: 'p95' is not a percentile it measures"],
    [["--slo-steps", "3"], "--slo-steps applies to a latency-target sweep: give --slo too"],
    [["--slo-step-s", "3"], "--slo-step-s applies to a latency-target sweep: give --slo too"],
    [["--slo", "p99:2ms", "--slo-steps", "0"], "--slo-steps must be an integer from 1 to 50"],
    [["--slo", "p99:2ms", "--repeat", "x"], "--repeat must be a positive integer (got 'x')"],
  ])(
    "bench refuses %j with exit 2 naming the flag",
    async (flags, message) => {
      const r = await runVbench(["bench", "--target", a.address, "--mix", "get:100", ...flags]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(message);
    },
    120_000, // a hang guard for one CLI start, not a speed bound
  );

  it("local refuses a bad --slo and a bad --repeat before starting anything (exit 2 naming the flag)", async () => {
    const bad = await runVbench(["local", "--slo", "p99:2min"]);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining("--slo: 'min' is not a unit (us, ms or s)")]);
    const zero = await runVbench(["local", "--slo", "p99:2ms", "--repeat", "0"]);
    expect([zero.code, zero.stderr]).toEqual([
      2,
      expect.stringContaining("--repeat must be a positive integer (got '0')"),
    ]);
  }, 30_000);
});
