/**
 * The deployed shard-scaling sweep (apps/vbench/stack-sweep.ts) under the real Pulumi engine against a
 * real kube-apiserver with kwok nodes: real valkey-server processes on the pod IPs
 * (support/pod-valkeys.ts), the ClusterBootstrap and topology checks for real (`direct`
 * connector), and the benchmark Job's script run for real with a real benchmark client in
 * cluster mode (support/benchmark-pods.ts), its log read back through the API server.
 *
 * Two steps, the smallest the config allows (3 → 4 primaries × 1 replica; fewer than 3 is
 * refused by config/rules.ts), a short workload: one `up` per step through the sweep's config
 * edits (primaries, a new benchmark.runId), the cluster shape checked in each step's report, one
 * row per step and test with scale and exponent computed from the measured rps, sweep.csv,
 * run.json, report.html, then the destroy and the config put back.
 *
 * The benchmark pod may not share a node with a Valkey pod, and the soft per-node anti-affinity
 * sends new Valkey pods to any empty node first: so a fresh Valkey-pool node is added only when a
 * benchmark pod is unschedulable (by then every Valkey pod of the step is placed and verified).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkReportInBrowser, findChromium } from "../../benchmarks/report/browser-check.js";
import { parseSweepCsv, type SweepRow } from "../../benchmarks/sweep/sweep-csv.js";
import { runStackSweep } from "../../apps/vbench/stack-sweep.js";
import { pollInBackground } from "../support/background-poll.js";
import { eventually } from "../support/processes.js";
import { standInForBenchmarkJobs } from "./support/benchmark-pods.js";
import { addValkeyPoolNode, byoPlatformConfig, SMALL_VALKEY_PODS } from "./support/byo-config.js";
import { useE2eContext } from "./support/e2e-context.js";
import { standInForPods } from "./support/pod-valkeys.js";
import { createStack, tail } from "./support/pulumi-harness.js";

const PASSWORD = `e2e-${Math.random().toString(36).slice(2)}-sweep`;
const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"];
const NAMESPACE = "valkey-sweep";
const WORKLOAD = {
  requests: 2000,
  clients: 4,
  pipeline: 1,
  dataSize: 16,
  threads: 1,
  tests: ["set", "get"],
  minDurationSeconds: 0,
  maxRequests: 2000,
};

/**
 * A pod CIDR outside the per-worker defaults (127.64-95.0.0/16, control-plane.ts), so this file's
 * stand-in servers never share an address with another e2e file's running at the same time.
 */
const POD_CIDR = "127.120.0.0/16";

const ctx = useE2eContext(undefined, { holdJobPods: true, podCidr: POD_CIDR });
const scratch = mkdtempSync(join(tmpdir(), "vbench-e2e-sweep-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function stackConfig(): Record<string, unknown> {
  return {
    ...byoPlatformConfig(ctx.plane.kubeconfigPath, ZONES),
    valkey: {
      namespace: NAMESPACE,
      mode: "cluster",
      cluster: { primaries: 3, replicasPerPrimary: 1 },
      ...SMALL_VALKEY_PODS,
    },
    benchmark: { enabled: true, ...WORKLOAD, keyspaceLength: 200, resources: { cpu: "100m", memory: "64Mi" } },
    checks: { bootstrap: true, verify: true, connector: "direct" },
  };
}

/** Adds a Valkey-pool node whenever a benchmark pod is unschedulable; returns the nodes added. */
function benchNodesOnDemand(): { added: string[]; stop: () => Promise<void> } {
  const added: string[] = [];
  const handled = new Set<string>();
  const poll = pollInBackground(
    async () => {
      for (const p of (await ctx.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: "job-name" })).items) {
        const uid = p.metadata?.uid ?? "";
        const unschedulable = p.status?.conditions?.some(
          (c) => c.type === "PodScheduled" && c.reason === "Unschedulable",
        );
        if (handled.has(uid) || p.spec?.nodeName !== undefined || !unschedulable) continue;
        handled.add(uid);
        const name = `kwok-sweep-bench-${added.length + 1}`;
        await addValkeyPoolNode(ctx.plane, name, ZONES[0] as string);
        added.push(name);
      }
    },
    500,
    () => undefined, // the namespace may not exist yet
  );
  return { added, stop: () => poll.stop() };
}

describe("the shard-scaling sweep of a deployed stack, under the real engine", () => {
  it("3 -> 4 primaries: one up per step, shape verified, one row per step and test with scale and exponent from the measured rps, destroyed at the end", async () => {
    const s = await createStack(ctx.env, stackConfig(), { password: PASSWORD });
    const valkeys = standInForPods(ctx.core, NAMESPACE, PASSWORD);
    const bench = standInForBenchmarkJobs(ctx.core, ctx.plane, NAMESPACE);
    const nodes = benchNodesOnDemand();
    const progress: string[] = [];
    const started = Date.now();
    try {
      const result = await runStackSweep({
        stack: s.stack,
        shards: [3, 4],
        keep: false,
        outputDir: join(scratch, "results"),
        onProgress: (line) => progress.push(line),
        onEngineOutput: (text) => s.log.push(text),
      }).catch((err: unknown) => {
        // The cause (the message's first line: the engine's errors) again last, where a log cut to its tail keeps it.
        const message = (err as Error).message;
        throw new Error(
          `${message}\n--- engine log ---\n${tail(s.log, 60)}\n--- progress ---\n${progress.join("\n")}\n--- cause ---\n${message.split("\n")[0]}`,
        );
      });
      console.log(`stack sweep 3 -> 4 shards: ${Math.round((Date.now() - started) / 1000)} s (two ups and a destroy)`);
      expect(bench.errors).toEqual([]);
      expect(valkeys.errors).toEqual([]);
      // The benchmark Job ran once per step (a new runId each time), for real.
      expect(bench.logs.size).toBe(2);

      // One row per step and test, in step order.
      expect(result.rows.map((r) => `${r.shards}/${r.test}`)).toEqual(["3/SET", "3/GET", "4/SET", "4/GET"]);
      // Each step's report: the shape asked for, and rows that are the sweep's rows.
      const reports = result.stepReports.map(
        (p) =>
          JSON.parse(readFileSync(p, "utf8")) as {
            pods: number;
            topology: { ok: boolean; primaries: { replicas: unknown[] }[] };
            benchmark: { rows: { test: string; rps: number }[] };
          },
      );
      expect(
        reports.map((r) => [
          r.pods,
          r.topology.ok,
          r.topology.primaries.length,
          r.topology.primaries.map((p) => p.replicas.length),
        ]),
      ).toEqual([
        [6, true, 3, [1, 1, 1]],
        [8, true, 4, [1, 1, 1, 1]],
      ]);
      expect(result.rows.map((r) => r.rps)).toEqual(reports.flatMap((r) => r.benchmark.rows.map((x) => x.rps)));
      for (const r of result.rows) {
        expect(r.rps).toBeGreaterThan(0);
        expect(r.client_cpus).toBeNull();
        const first = result.rows.find((x) => x.test === r.test && x.shards === 3) as SweepRow;
        expect(r.scale).toBeCloseTo(r.rps / first.rps, 5);
        if (r.shards === 3) expect(r.exponent).toBeNull();
        else expect(r.exponent).toBeCloseTo(Math.log(r.rps / first.rps) / Math.log(4 / 3), 5);
      }

      // Files: sweep.csv (what the rows say), run.json naming the stack, the report with the sweep.
      // (sweep.csv keeps 6 decimals of scale and exponent.)
      const csv = parseSweepCsv(readFileSync(join(result.runDir, "sweep.csv"), "utf8"));
      expect(csv.map(({ scale: _s, exponent: _e, ...rest }) => rest)).toEqual(
        result.rows.map(({ scale: _s, exponent: _e, ...rest }) => rest),
      );
      csv.forEach((r, i) => {
        expect(r.scale).toBeCloseTo(result.rows[i]?.scale ?? Number.NaN, 5);
        if (r.exponent !== null) expect(r.exponent).toBeCloseTo(result.rows[i]?.exponent ?? Number.NaN, 5);
      });
      const meta = JSON.parse(readFileSync(join(result.runDir, "run.json"), "utf8")) as {
        stack: { name: string; platform: string };
        machine?: unknown;
      };
      expect(meta.stack).toMatchObject({ name: s.name, platform: "byo" });
      expect(meta.machine).toBeUndefined();
      const html = readFileSync(result.reportPath, "utf8");
      expect(html).toContain('<section id="sweep">');
      expect(html).toContain(`byo stack &quot;${s.name}&quot;`);
      if (findChromium() !== undefined) {
        const page = await checkReportInBrowser(result.reportPath, { screenshot: join(result.runDir, "report.png") });
        expect(page.points.sweep).toBe(result.rows.length);
        expect(page.consoleErrors).toEqual([]);
        expect(page.requests).toEqual([]);
      }

      // Destroyed, and the two config keys put back as they were.
      expect(result.destroyed).toBe(true);
      expect(await s.stack.outputs()).toEqual({});
      const config = await s.stack.getAllConfig();
      expect(JSON.parse(config["valkey-on-eks:valkey"]?.value ?? "{}")).toMatchObject({
        cluster: { primaries: 3, replicasPerPrimary: 1 },
      });
      expect(JSON.parse(config["valkey-on-eks:benchmark"]?.value ?? "{}")).not.toHaveProperty("runId");
      expect(progress.some((l) => l.startsWith("4 shards: verified 4 × (1 + 1)"))).toBe(true);
      expect(existsSync(join(result.runDir, "raw", "stack-report-4-shards.json"))).toBe(true);
    } finally {
      await nodes.stop();
      await bench.stop();
      await valkeys.stop();
      await s.dispose();
      for (const n of nodes.added) await ctx.plane.api("DELETE", `/api/v1/nodes/${n}`, undefined, { allow: [404] });
    }
    await eventually(`namespace ${NAMESPACE} to be deleted`, 90_000, async () => {
      try {
        await ctx.core.readNamespace({ name: NAMESPACE });
        return undefined;
      } catch {
        return true;
      }
    });
  }, 1_200_000);
});
