/**
 * Many client pods in the benchmark Job: the Indexed Job manifest (completions, parallelism,
 * one pod per node, never on a Valkey node, spread over zones, the Job uid by downward API), and
 * the script's barrier run for real: two script processes (as two pods would run) against a real
 * valkey-server meet at the barrier, read the same start time, and their parsed logs combine
 * into rows whose rps is the sum of the two pods' rps.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { combineClientRows } from "../../benchmarks/run/multi-client.js";
import { SEED_WORKLOAD, type Workload } from "../../vocabulary/workload.js";
import { parseJobLogRounds } from "../../components/benchmark/job-log.js";
import { aggregateRuns } from "../../benchmarks/run/run-spread.js";
import { collectJobResults, type JobLogApi } from "../../components/steps/benchmark-results/implementation.js";
import { buildBenchmarkJob, type BenchmarkJobManifestArgs } from "../../components/benchmark/job-manifest.js";
import { buildBenchmarkScript, RUN_ID_ENV } from "../../components/benchmark/job-script.js";
import { runShellScript } from "../support/processes.js";

const tools = resolveBinaries();
const WORKLOAD: Workload = {
  ...SEED_WORKLOAD,
  name: "pods",
  requests: 20_000,
  threads: 1,
  keyspaceLength: 1000,
  tests: ["set", "get"],
  minDurationSeconds: 0,
  maxRequests: 20_000,
};

const ARGS: BenchmarkJobManifestArgs = {
  namespace: "valkey",
  name: "vbench-cluster",
  image: "valkey/valkey:9.0.2",
  mode: "cluster",
  target: { host: "valkey-cluster.valkey.svc.cluster.local", port: 6379 },
  workload: WORKLOAD,
  secretName: undefined,
  passwordKey: "password",
  placement: { zones: ["z-a", "z-b", "z-c"], nodeSelector: { pool: "valkey" }, tolerations: [], storageClass: "gp3" },
  resources: { cpu: "2", memory: "1Gi" },
};

describe("the Indexed Job manifest", () => {
  it("clientPods 3: Indexed, 3 completions in parallel, one client per node, spread over zones, the Job uid by downward API", () => {
    const { spec } = buildBenchmarkJob({ ...ARGS, clientPods: 3 });
    expect(spec).toMatchObject({ completionMode: "Indexed", completions: 3, parallelism: 3, backoffLimit: 0 });
    const pod = spec.template.spec;
    const terms = pod?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
    expect(terms.map((t) => [t.labelSelector?.matchLabels, t.topologyKey])).toEqual([
      [{ "valkey-on-eks/data-plane": "true" }, "kubernetes.io/hostname"],
      [
        { "app.kubernetes.io/component": "benchmark-cluster", "valkey-on-eks/client": "true" },
        "kubernetes.io/hostname",
      ],
    ]);
    expect(pod?.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: "topology.kubernetes.io/zone",
        whenUnsatisfiable: "DoNotSchedule",
        labelSelector: {
          matchLabels: { "app.kubernetes.io/component": "benchmark-cluster", "valkey-on-eks/client": "true" },
        },
      },
    ]);
    expect(pod?.containers[0]?.env).toContainEqual({
      name: RUN_ID_ENV,
      valueFrom: { fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/controller-uid']" } },
    });
    // One barrier per test and round (`benchmark.repeat`).
    expect(pod?.containers[0]?.command?.[2]).toContain('barrier "$test-$round"');
  });
  it("clientPods 1 (the default) keeps the single-pod Job: no Indexed mode, pods=1 in the script, no spread", () => {
    const { spec } = buildBenchmarkJob(ARGS);
    expect(spec.completionMode).toBeUndefined();
    expect(spec.template.spec?.topologySpreadConstraints).toBeUndefined();
    // The script skips its barrier with pods=1 (the single-pod runs of job-script.test.ts set no
    // VBENCH_RUN_ID, which the barrier refuses to run without, and pass).
    expect(spec.template.spec?.containers[0]?.command?.[2]).toMatch(/^pods=1$/m);
  });
});

/** The results step's inputs for Job valkey/vbench with two client pods (replication, WORKLOAD). */
function resultsInputs(over: { timestamp?: string } = {}) {
  return {
    namespace: "valkey",
    jobName: "vbench",
    kubeconfig: "",
    mode: "replication" as const,
    workload: WORKLOAD,
    serverVersion: "9",
    image: "i",
    ...over,
    timeoutSeconds: 60,
    pollSeconds: 5,
    clientPods: 2,
  };
}
/** The results step's clock: no waiting between polls. */
const NO_WAIT = { sleep: () => Promise.resolve(), now: () => 0 };

describe("the results step with several client pods", () => {
  it("refuses to combine fewer logs than clientPods (a pod already gone), naming the count", async () => {
    const api: JobLogApi = {
      jobStatus: () => Promise.resolve({ succeeded: 2, failed: 0, complete: true, failedReason: undefined }),
      podsOfJob: () => Promise.resolve([{ name: "vbench-0-abc", phase: "Succeeded", created: "2026-01-01T00:00:00Z" }]),
      podLog: () => Promise.reject(new Error("no log should be read")),
    };
    await expect(collectJobResults(api, resultsInputs(), NO_WAIT)).rejects.toThrow(
      "benchmark Job valkey/vbench succeeded but 1 of its 2 client pods are left to read the logs of",
    );
  });
});

/** One Indexed Job pod's script: its completion index and the run id in its environment. */
function runPod(script: string, index: number, runId: string) {
  return runShellScript(script, { JOB_COMPLETION_INDEX: String(index), [RUN_ID_ENV]: runId });
}

describe("two client pods' scripts against a real server", () => {
  const fleet = new LocalFleet();
  let server: ValkeyProcess;
  beforeAll(async () => {
    server = await fleet.start({ name: "pods", save: "", appendonly: false });
  });
  afterAll(() => fleet.stopAll());

  it("meet at the barrier before each test, share one start time, and their rows sum", async () => {
    const script = buildBenchmarkScript({
      workload: WORKLOAD,
      mode: "replication",
      target: { host: server.host, port: server.port },
      client: tools.benchmark.path,
      cli: tools.cli.path,
      clientPods: 2,
      startMarginSeconds: 1,
    });
    const runId = `it-${Date.now()}`;
    // The second pod arrives 1.5 s late: the first must wait for it at the barrier.
    const first = runPod(script, 0, runId);
    await new Promise((r) => setTimeout(r, 1500));
    const lateArrival = Math.floor(Date.now() / 1000);
    const [a, b] = await Promise.all([first, runPod(script, 1, runId)]);
    expect(a.code, a.stdout).toBe(0);
    expect(b.code, b.stdout).toBe(0);
    const barriers = (log: string) =>
      log
        .split("\n")
        .filter((l) => l.startsWith("### vbench-barrier"))
        .map((l) => l.replace(/ index=\d+/, ""));
    expect(barriers(a.stdout)).toHaveLength(2);
    expect(barriers(a.stdout)).toEqual(barriers(b.stdout));
    // The shared start of SET is fixed only once the late pod arrived, plus the 1 s margin.
    const start = Number(/start=(\d+)/.exec(barriers(a.stdout)[0] ?? "")?.[1]);
    expect(start).toBeGreaterThanOrEqual(lateArrival + 1);
    const meta = { mode: "replication" as const, workload: WORKLOAD, serverVersion: "9", timestamp: "20260101-000000" };
    const [rowsA = [], rowsB = []] = [parseJobLogRounds(a.stdout, meta)[0], parseJobLogRounds(b.stdout, meta)[0]];
    const combined = combineClientRows([rowsA, rowsB]);
    expect(combined.map((r) => r.test)).toEqual(["SET", "GET"]);
    combined.forEach((r, i) => {
      expect(r.rps).toBeCloseTo((rowsA[i]?.rps ?? 0) + (rowsB[i]?.rps ?? 0), 1);
      expect(r.p99_ms).toBe(Math.max(rowsA[i]?.p99_ms ?? 0, rowsB[i]?.p99_ms ?? 0));
      expect(r.requests).toBe(40_000);
      expect(r.notes).toMatch(/^2 client pods: rps summed/);
    });
    // The results step reads every pod of the Job: waits until both (clientPods: 2) succeeded, then combines their
    // logs.
    let polls = 0;
    const api: JobLogApi = {
      jobStatus: () =>
        Promise.resolve({ succeeded: polls++ === 0 ? 1 : 2, failed: 0, complete: false, failedReason: undefined }),
      podsOfJob: () =>
        Promise.resolve([
          { name: "vbench-0-abc", phase: "Succeeded", created: "2026-01-01T00:00:00Z" },
          { name: "vbench-1-def", phase: polls > 1 ? "Succeeded" : "Running", created: "2026-01-01T00:00:00Z" },
        ]),
      podLog: (_ns, pod) => Promise.resolve(pod.startsWith("vbench-0") ? a.stdout : b.stdout),
    };
    const collected = await collectJobResults(api, resultsInputs({ timestamp: "20260101-000000" }), NO_WAIT);
    expect(polls).toBe(2);
    expect(collected.podName).toBe("vbench-0-abc,vbench-1-def");
    // One round: the combined rows, as one run each (runs 1, the range its value).
    expect(collected.runs).toEqual([combined]);
    expect(collected.rows).toEqual(aggregateRuns([combined]));
    expect(collected.rows.map((r) => [r.runs, r.rps_min, r.rps_max])).toEqual(combined.map((r) => [1, r.rps, r.rps]));
  }, 120_000);
});
