/**
 * `benchmark.slo` in the whole program under Pulumi mocks: the target and its sweep settings reach
 * the Job's mix runner (its one settings env var, parsed by the pod's own parser), the Job's
 * deadline and the results' wait grow by the sweeps' bound (sloSweepSeconds), and the results'
 * `mix.sloSweep` reaches the stack report's `benchmark` and loads in the report.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { awsMockInvokes, awsMockOutputs, installMocks, settle, valueOf } from "../support/pulumi-mocks.js";
import { resultRow } from "../support/result-rows.js";
import { fixtureSloSweep } from "../support/slo-fixtures.js";
import { mixJobSettingsFromEnv } from "../../benchmarks/run/mix-job.js";
import { sloSweepSeconds } from "../../vocabulary/slo.js";

const SWEEP = fixtureSloSweep("replication", [10_000, 11_000, 12_000], (f) => (f <= 0.6 ? 1 : 5));
const MIX = { served: { total: 10, commands: [] }, latency: { p999_ms: {}, histograms: {} }, sloSweep: SWEEP };
const recorder = installMocks({
  invokes: awsMockInvokes,
  outputs: (r) =>
    r.name === "valkey-benchmark-results-run"
      ? { rows: [resultRow({ mode: "replication" })], csv: "x\n", mix: MIX, runStamp: "s" }
      : awsMockOutputs(r),
});
const { parseStackConfig } = await import("../../config/schema.js");
const { runProgram } = await import("../../stacks/program.js");
const { stackReportSchema } = await import("../../benchmarks/report/stack-report-schema.js");

const dir = mkdtempSync(join(tmpdir(), "vbench-slo-program-"));
const kubeconfigPath = join(dir, "kubeconfig");
writeFileSync(kubeconfigPath, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");

beforeEach(() => recorder.reset());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function deploy(benchmark: Record<string, unknown>) {
  const { config } = parseStackConfig({
    platform: "byo",
    byo: { kubeconfig: kubeconfigPath },
    benchmark: { mix: "get:80,set:20", loadgenImage: "registry.example/vload:1", ...benchmark },
  });
  const out = runProgram({ stack: "byo", config, password: "pw-slo-mock" });
  // The Job's manifest waits for the esbuild bundle: outside the mocks' request count.
  const report = await valueOf(out.report);
  await settle();
  const job = recorder.ofType("kubernetes:batch/v1:Job")[0];
  const spec = job?.inputs.spec as {
    activeDeadlineSeconds: number;
    template: { spec: { containers: { env: { name: string; value?: string }[] }[] } };
  };
  const env = Object.fromEntries(
    spec.template.spec.containers[0]!.env.flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])),
  );
  const results = recorder.resources.find((r) => r.name === "valkey-benchmark-results-run");
  return {
    report,
    deadline: spec.activeDeadlineSeconds,
    settings: mixJobSettingsFromEnv(env),
    wait: results?.inputs.timeoutSeconds,
  };
}

describe("benchmark.slo under mocks", () => {
  it("the Job's mix runner gets the target and the sweep settings; the deadline and the wait grow by the sweeps' bound", async () => {
    const d = await deploy({ slo: "p99:2ms", sloSteps: 50, sloStepSeconds: 600, durationSeconds: 60 });
    expect(d.settings.workload).toMatchObject({
      slo: { percentile: "p99", boundMs: 2 },
      sloSteps: 50,
      sloStepSeconds: 600,
      mix: [{ test: "get" }, { test: "set" }],
    });
    // benchmark.repeat's default: three runs of the mix, then three sweeps.
    const bound = sloSweepSeconds({ slo: { percentile: "p99", boundMs: 2 }, sloSteps: 50, sloStepSeconds: 600 }, 3);
    expect(bound).toBeGreaterThan(7200);
    expect(d.deadline).toBe(3 * 60 + bound + 1800);
    expect(d.wait).toBe(3 * 60 + bound + 1800);
  });

  it("without a target: no sweep settings in the pod, the mix's deadline as before (its three runs)", async () => {
    const d = await deploy({ durationSeconds: 7200 });
    expect(d.settings.workload).not.toHaveProperty("slo");
    expect(d.deadline).toBe(3 * 7200 + 1800);
  });

  it("the results' sloSweep reaches the stack report's benchmark.mix and fits the report loader's schema", async () => {
    const d = await deploy({ slo: "p99:2ms" });
    expect(d.report.benchmark?.mix?.sloSweep).toEqual(SWEEP);
    expect(stackReportSchema.parse(JSON.parse(JSON.stringify(d.report))).benchmark?.mix?.sloSweep).toEqual(SWEEP);
  });
});
