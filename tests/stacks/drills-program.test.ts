/**
 * The failure drills in the program under Pulumi mocks: absent when `drills.enabled` is false
 * (report fields null), and when on, one FailureDrill after the check that follows the benchmark
 * results (by that check's runStamp), with the drill settings, the load target of each mode, the
 * release Secret by name, and neither the password nor the kubeconfig in plain inputs or in the
 * serialized provider; its rows and CSV in the report.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { awsMockInvokes, awsMockOutputs, installMocks, settle, valueOf } from "../support/pulumi-mocks.js";

const DRILL_ROW = {
  mode: "replication",
  fault: "primary",
  ok: true,
  healed: true,
  recoveryMs: 12000,
  writeOutageMs: 6000,
};
const CHECK_STAMP = "2026-11-23T15:00:00.000Z/after0001";
const BEFORE_STAMP = "2026-11-23T15:00:00.000Z/before001";
const recorder = installMocks({
  invokes: awsMockInvokes,
  outputs: (r) => {
    if (r.name === "valkey-benchmark-results-run") return { rows: [], csv: "workload\n", runStamp: "bench-stamp" };
    if (r.name === "valkey-check-after-benchmark-run")
      return { report: { ok: true, failures: [], shards: [], primariesPerZone: {} }, runStamp: CHECK_STAMP };
    if (r.name === "valkey-check-run")
      return { report: { ok: true, failures: [], shards: [], primariesPerZone: {} }, runStamp: BEFORE_STAMP };
    if (r.name === "valkey-drills-run")
      return { drills: [DRILL_ROW], csv: "mode,fault\nreplication,primary\n", note: "clocks" };
    return awsMockOutputs(r);
  },
});

const { parseStackConfig } = await import("../../config/schema.js");
const { runProgram } = await import("../../stacks/program.js");

const PASSWORD = "pw-drill-mock-Zq9!";
const KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n# drill-kubeconfig-marker\n";
const dir = mkdtempSync(join(tmpdir(), "vbench-drills-"));
const kubeconfigPath = join(dir, "kubeconfig");
writeFileSync(kubeconfigPath, KUBECONFIG);
const DRILL_RUN = "pulumi-nodejs:dynamic:Resource";

function byo(extra: Record<string, unknown>) {
  return parseStackConfig({ platform: "byo", byo: { kubeconfig: kubeconfigPath }, ...extra }).config;
}

beforeEach(() => recorder.reset());

describe("failure drills in the program (mocks)", () => {
  it("drills off (the default): no FailureDrill, and the report's drills fields are null", async () => {
    const out = runProgram({ stack: "byo", config: byo({}), password: PASSWORD });
    await settle();
    expect(recorder.ofType("valkey-on-eks:steps:FailureDrill")).toEqual([]);
    expect(recorder.resources.some((r) => r.name.startsWith("valkey-drills"))).toBe(false);
    const report = await valueOf(out.report);
    expect(report.drills).toBeNull();
    expect(report.drillsCsv).toBeNull();
    expect(report.drillsNote).toBeNull();
  });

  it("replication: after the check that follows the benchmark, with the settings (alertsFrom too), both load paths and the Secret by name; secrets stay secret", async () => {
    const config = byo({
      drills: {
        enabled: true,
        faults: ["primary", "zone"],
        rate: 20,
        preFaultS: 5,
        loadS: 60,
        runId: "drill-1",
        alertsFrom: "http://localhost:9090",
      },
    });
    const out = runProgram({ stack: "byo", config, password: PASSWORD });
    await settle();
    recorder.get("valkey-on-eks:steps:FailureDrill", "valkey-drills");
    const run = recorder.get(DRILL_RUN, "valkey-drills-run");
    expect(run.inputs).toMatchObject({
      mode: "replication",
      namespace: "valkey",
      faults: ["primary", "zone"],
      rate: 20,
      preFaultS: 5,
      loadS: 60,
      zoneDownS: 30,
      timeoutS: 600,
      image: config.drills.image,
      // freeze and partition: the fault agent runs the release's own Valkey image.
      agentImage: config.valkey.image,
      runId: "drill-1",
      alertsFrom: "http://localhost:9090",
      loadTarget: {
        host: "valkey-write.valkey.svc.cluster.local",
        port: 6379,
        sentinel: {
          host: expect.stringMatching(/sentinel.*\.valkey\.svc\.cluster\.local$/) as unknown,
          port: 26379,
          masterName: expect.any(String) as unknown,
        },
      },
      secretName: expect.any(String) as unknown,
      passwordKey: "password",
      failureDetectionMs: config.valkey.replication.sentinel.downAfterMilliseconds,
      sentinel: { port: 26379 },
      expect: { replicas: 3 },
      // Follows the after-benchmark check's runStamp: each benchmark run (and each check) re-runs the drills.
      triggers: [CHECK_STAMP],
    });
    // Waits for that check's run (the stamp is its output, and the component is in dependsOn).
    expect(run.dependencies).toContain("valkey-check-after-benchmark-run");
    expect(run.redacted.password).toBe("[secret]");
    expect(run.redacted.kubeconfig).toBe("[secret]");
    expect(JSON.stringify(run.redacted)).not.toContain(PASSWORD);
    expect(JSON.stringify(run.redacted)).not.toContain("drill-kubeconfig-marker");
    const provider = run.inputs.__provider as string;
    expect(provider).toContain("failure-drill/implementation.ts");
    expect(provider).not.toContain(PASSWORD);
    expect(provider).not.toContain("drill-kubeconfig-marker");
    const report = await valueOf(out.report);
    expect(report.drills).toEqual([DRILL_ROW]);
    expect(report.drillsCsv).toBe("mode,fault\nreplication,primary\n");
    expect(report.drillsNote).toBe("clocks");
  });

  it("cluster without a benchmark: after the first check, one write path (the client Service), cluster-node-timeout as failure detection", async () => {
    const config = byo({ valkey: { mode: "cluster" }, benchmark: { enabled: false }, drills: { enabled: true } });
    runProgram({ stack: "byo", config, password: PASSWORD });
    await settle();
    const run = recorder.get(DRILL_RUN, "valkey-drills-run");
    expect(run.inputs.mode).toBe("cluster");
    expect(run.inputs.faults).toEqual(["primary"]);
    expect(run.inputs.loadTarget).toEqual({
      host: expect.stringMatching(/\.valkey\.svc\.cluster\.local$/) as unknown,
      port: 6379,
    });
    expect(run.inputs).not.toHaveProperty("sentinel");
    expect(run.inputs.failureDetectionMs).toBe(config.valkey.cluster.nodeTimeoutMs);
    expect(run.inputs.triggers).toEqual([BEFORE_STAMP]);
    expect(run.dependencies).toContain("valkey-check-run");
  });
});
