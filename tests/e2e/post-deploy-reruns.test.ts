/**
 * The post-deploy steps re-run when they should, under the real Pulumi engine against a real
 * kube-apiserver with kwok nodes, with the benchmark run for real: the Valkey pods are real
 * valkey-server processes on the pod IPs (support/pod-valkeys.ts), and the benchmark Job's pod
 * runs the Job's own script with a real benchmark client against them (support/benchmark-pods.ts);
 * its output is the container log kwok's kubelet-like server serves, which BenchmarkResults reads
 * through the API server (`pods/log`). kwok completes the Job's pod only after that (the plane
 * holds Job pods). The Job targets the write Service, whose pods are HAProxy: the stand-in runs a
 * real haproxy with the release's haproxy.cfg, so the benchmark goes through the write endpoint
 * (HAProxy's role:master health check) to the primary the Sentinels chose.
 *
 * Four `up`s of one replication stack:
 *  1. the first: benchmark, then the check after it counts the keys the benchmark wrote;
 *  2. a changed workload (a larger keyspace): the Job runs again AND the check after it runs
 *     again, so the report's key count is the new run's (it went stale before: the check followed
 *     the results' URN, which a replacement does not change);
 *  3. a new `checks.runId`: both checks run again, the benchmark does not;
 *  4. a new `benchmark.runId`: the Job, the results and the check after them run again, the
 *     check before the benchmark does not.
 */
import { describe, expect, it } from "vitest";
import { openClient } from "../../core/topology/connector.js";
import { standInForBenchmarkJobs } from "./support/benchmark-pods.js";
import { byoPlatformConfig, SMALL_VALKEY_PODS } from "./support/byo-config.js";
import { addClientNodeOnceValkeyPlaced } from "./support/client-node.js";
import { namespaceDeleted, useE2eContext } from "./support/e2e-context.js";
import { standInForPods } from "./support/pod-valkeys.js";
import { createStack, tail, type E2eStack } from "./support/pulumi-harness.js";

const PASSWORD = `e2e-${Math.random().toString(36).slice(2)}-rerun`;
const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"];
const NAMESPACE = "valkey-reruns";
const BENCH_NODE = "kwok-bench";

const ctx = useE2eContext(undefined, { holdJobPods: true });

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

function benchmarkConfig(keyspaceLength: number, runId?: string): Record<string, unknown> {
  return {
    enabled: true,
    ...WORKLOAD,
    keyspaceLength,
    resources: { cpu: "100m", memory: "64Mi" },
    ...(runId === undefined ? {} : { runId }),
  };
}

function checksConfig(runId?: string): Record<string, unknown> {
  return { bootstrap: true, verify: true, connector: "direct", ...(runId === undefined ? {} : { runId }) };
}

function stackConfig(): Record<string, unknown> {
  return {
    ...byoPlatformConfig(ctx.plane.kubeconfigPath, ZONES),
    valkey: {
      namespace: NAMESPACE,
      mode: "replication",
      replication: { replicas: 3 },
      ...SMALL_VALKEY_PODS,
    },
    benchmark: benchmarkConfig(200),
    checks: checksConfig(),
  };
}

interface Run {
  /** Keys the check after the benchmark counted on the primary. */
  keysAfter: number | null;
  requests: number[];
  /** runStamp of the check before / after the benchmark; the pod whose log the results read. */
  before: string;
  after: string;
  resultsPod: string;
  jobUid: string;
}

/** One `up`, and what its steps recorded (outputs of the dynamic resources in the state). */
async function up(s: E2eStack): Promise<Run> {
  const res = await s.stack.up({ onOutput: (o) => s.log.push(o) });
  expect(res.summary.result, tail(s.log)).toBe("succeeded");
  const report = res.outputs.report?.value as {
    topology: { ok: boolean; primaries: { keys: number | null }[] } | null;
    benchmark: { rows: { requests: number }[] } | null;
  };
  expect(report.topology?.ok, tail(s.log)).toBe(true);
  const state = (await s.stack.exportStack()) as {
    deployment: { resources: { urn: string; outputs?: Record<string, unknown> }[] };
  };
  const outs = (name: string): Record<string, unknown> => {
    const r = state.deployment.resources.find((x) => x.urn.endsWith(`::${name}`));
    if (r?.outputs === undefined) throw new Error(`no ${name} in the state`);
    return r.outputs;
  };
  return {
    keysAfter: report.topology?.primaries[0]?.keys ?? null,
    requests: (report.benchmark?.rows ?? []).map((r) => r.requests),
    before: String(outs("valkey-check-run").runStamp),
    after: String(outs("valkey-check-after-benchmark-run").runStamp),
    resultsPod: String(outs("valkey-benchmark-results-run").podName),
    jobUid: String((outs("valkey-benchmark-job").metadata as { uid?: string } | undefined)?.uid),
  };
}

async function primaryDbsize(valkeys: ReturnType<typeof standInForPods>): Promise<number> {
  // Ordinal 0 is the primary after the first start under Sentinel (no failover in this test).
  const primary = valkeys.servers.get("valkey-0");
  if (primary === undefined) throw new Error("no server for valkey-0");
  const client = await openClient(primary.host, primary.port, "primary", { password: PASSWORD });
  try {
    return await client.dbsize();
  } finally {
    client.disconnect();
  }
}

describe("post-deploy steps re-run under the real engine, with a real benchmark run", () => {
  it("a changed workload re-runs the benchmark and the check after it; checks.runId and benchmark.runId re-run on demand", async () => {
    const s = await createStack(ctx.env, stackConfig(), { password: PASSWORD });
    const valkeys = standInForPods(ctx.core, NAMESPACE, PASSWORD);
    const bench = standInForBenchmarkJobs(ctx.core, ctx.plane, NAMESPACE);
    try {
      // 1. The first up: the benchmark ran for real, and the check after it saw its keys.
      const benchNode = addClientNodeOnceValkeyPlaced(ctx, NAMESPACE, 4, BENCH_NODE, ZONES[0] as string);
      void benchNode.catch(() => undefined); // awaited below; a failed up must not leave it unhandled
      const first = await up(s);
      await benchNode;
      expect(bench.errors).toEqual([]);
      expect(valkeys.errors).toEqual([]);
      expect(bench.logs.size).toBe(1);
      expect(first.requests).toEqual([2000, 2000]);
      expect(first.keysAfter).toBeGreaterThan(0);
      expect(first.keysAfter).toBeLessThanOrEqual(200);
      expect(first.keysAfter).toBe(await primaryDbsize(valkeys));

      // 2. A larger keyspace: a new Job run writes more keys, and the check after it re-runs.
      await s.stack.setConfig("valkey-on-eks:benchmark", { value: JSON.stringify(benchmarkConfig(20_000)) });
      const second = await up(s);
      expect(bench.errors).toEqual([]);
      expect(bench.logs.size).toBe(2);
      expect(second.jobUid).not.toBe(first.jobUid);
      expect(second.resultsPod).not.toBe(first.resultsPod);
      const keys = await primaryDbsize(valkeys);
      expect(keys).toBeGreaterThan(first.keysAfter ?? 0);
      // The report's key count is this run's, not the first run's.
      expect(second.keysAfter, tail(s.log)).toBe(keys);
      expect(second.after).not.toBe(first.after);
      expect(second.before).toBe(first.before);

      // 3. A new checks.runId: both checks run again; the benchmark does not.
      await s.stack.setConfig("valkey-on-eks:checks", { value: JSON.stringify(checksConfig("verify-1")) });
      const third = await up(s);
      expect(third.before).not.toBe(second.before);
      expect(third.after).not.toBe(second.after);
      expect(third.jobUid).toBe(second.jobUid);
      expect(third.resultsPod).toBe(second.resultsPod);
      expect(bench.logs.size).toBe(2);

      // 4. A new benchmark.runId: the Job, its results and the check after them run again; the
      // check before the benchmark does not (checks.runId unchanged).
      await s.stack.setConfig("valkey-on-eks:benchmark", { value: JSON.stringify(benchmarkConfig(20_000, "bench-1")) });
      const fourth = await up(s);
      expect(bench.errors).toEqual([]);
      expect(bench.logs.size).toBe(3);
      expect(fourth.jobUid).not.toBe(third.jobUid);
      expect(fourth.resultsPod).not.toBe(third.resultsPod);
      expect(fourth.after).not.toBe(third.after);
      expect(fourth.before).toBe(third.before);
    } finally {
      await bench.stop();
      await valkeys.stop();
      await s.dispose();
      await ctx.plane.api("DELETE", `/api/v1/nodes/${BENCH_NODE}`, undefined, { allow: [404] });
    }
    await namespaceDeleted(ctx, NAMESPACE, 90_000);
  }, 900_000);
});
