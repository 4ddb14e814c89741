/**
 * BenchmarkResults: the implementation with a fake JobLogApi (no Kubernetes API server can run
 * in this suite, so kubernetesJobLogApi itself is not exercised here), the provider shell's
 * create called in-process (it really loads the implementation through tsx's ESM API, the one
 * shell all dynamic providers share), and the dynamic resource under Pulumi mocks (installed
 * before the component is imported), including what the serialized provider contains.
 */
import { describe, expect, it } from "vitest";
import { installMocks, settle, valueOf } from "../support/pulumi-mocks.js";
import * as pulumi from "@pulumi/pulumi";
import { parseResultsCsv } from "../../benchmarks/run/results-csv.js";
import type { Workload } from "../../vocabulary/workload.js";
import type {
  BenchmarkResultsInputs,
  JobLogApi,
  JobState,
} from "../../components/steps/benchmark-results/implementation.js";

const mocks = installMocks();
const { BenchmarkResults } = await import("../../components/steps/benchmark-results/component.js");
const { collectJobResults, BenchmarkJobError } =
  await import("../../components/steps/benchmark-results/implementation.js");
const { benchmarkResultsProvider } = await import("../../components/steps/benchmark-results/component.js");

const PASSWORD = "Zq-distinctive-PASSWORD-8841";
const KUBECONFIG = `apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: KUBE-TOKEN-distinctive-5521\n`;
/** minDurationSeconds 0: no re-runs, so the synthetic log below follows the re-run rule. */
const W: Workload = {
  name: "w",
  requests: 1000,
  clients: 50,
  pipeline: 16,
  dataSize: 256,
  threads: 4,
  keyspaceLength: 1000,
  tests: ["set", "get"],
  minDurationSeconds: 0,
  maxRequests: 10_000,
};
const HEADER =
  '"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"';

function syntheticLog(tests = W.tests): string {
  const blocks = tests.flatMap((t) => [
    `### vbench-begin test=${t} run=1 requests=1000`,
    HEADER,
    `"${t.toUpperCase()}","250000.00","0.500","0.100","0.450","0.900","1.200","3.000"`,
    `### vbench-end test=${t} run=1 exit=0 wall_ms=12`,
  ]);
  return [
    "### vbench-version client=valkey-benchmark 9.0.2",
    "### vbench-auth method=argv",
    ...blocks,
    "### vbench-done status=0",
    "",
  ].join("\n");
}

const inputs: BenchmarkResultsInputs = {
  namespace: "valkey",
  jobName: "vbench-cluster",
  kubeconfig: KUBECONFIG,
  mode: "cluster",
  clientPods: 1,
  workload: W,
  serverVersion: "9.0.2",
  image: "valkey/valkey:9.0.2",
  timeoutSeconds: 60,
  pollSeconds: 5,
};

function fakeApi(states: (JobState | undefined)[], log = syntheticLog()): JobLogApi & { polls: number } {
  const api = {
    polls: 0,
    jobStatus: () => Promise.resolve(states[Math.min(api.polls++, states.length - 1)]),
    podsOfJob: () =>
      Promise.resolve([{ name: "vbench-cluster-abcde", phase: "Succeeded", created: "2026-05-23T10:15:00Z" }]),
    podLog: () => Promise.resolve(log),
  };
  return api;
}
const running: JobState = {
  succeeded: 0,
  failed: 0,
  complete: false,
  failedReason: undefined,
  startTime: "2026-05-23T10:15:00Z",
};
const done: JobState = { ...running, succeeded: 1, complete: true };
/** A fake clock: every sleep advances it. */
function clock(): { now: () => number; sleep: (ms: number) => Promise<void> } {
  let t = 0;
  return { now: () => t, sleep: (ms) => ((t += ms), Promise.resolve()) };
}

describe("collectJobResults with a fake JobLogApi", () => {
  it("waits until the Job completes, then returns the rows and results.csv", async () => {
    const api = fakeApi([undefined, running, running, done]);
    const out = await collectJobResults(api, inputs, clock());
    expect(api.polls).toBe(4);
    expect(out.rows.map((r) => [r.test, r.rps, r.p50_ms, r.client_version, r.timestamp])).toEqual([
      ["SET", 250000, 0.45, "valkey-benchmark 9.0.2", "20260523-101500"],
      ["GET", 250000, 0.45, "valkey-benchmark 9.0.2", "20260523-101500"],
    ]);
    expect(parseResultsCsv(out.csv)).toEqual(out.rows);
    expect(out.podName).toBe("vbench-cluster-abcde");
  });
  it("a failed Job fails with its reason and the pod's last log lines", async () => {
    const log =
      "### vbench-version client=valkey-benchmark 9.0.2\n### vbench-error authentication to h:6379 failed\n### vbench-done status=3\n";
    const failed: JobState = {
      ...running,
      failed: 1,
      failedReason: "BackoffLimitExceeded: Job has reached the specified backoff limit",
    };
    const err = await collectJobResults(fakeApi([running, failed], log), inputs, clock()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BenchmarkJobError);
    expect((err as Error).message).toMatch(
      /Job valkey\/vbench-cluster failed \(BackoffLimitExceeded.*pod vbench-cluster-abcde .*authentication to h:6379 failed/s,
    );
  });
  it("a Job still running at the timeout fails with the log so far", async () => {
    const err = await collectJobResults(
      fakeApi([running], "### vbench-begin test=set run=1 requests=1000\n"),
      inputs,
      clock(),
    ).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/has not finished after 60 s; pod .*vbench-begin test=set/s);
    const missing = await collectJobResults(fakeApi([undefined]), inputs, clock()).catch((e: unknown) => e);
    expect((missing as Error).message).toMatch(/does not exist after 60 s/);
  });
  it("a succeeded Job with an unusable log names the pod and what is missing", async () => {
    const err = await collectJobResults(fakeApi([done], syntheticLog(["set"])), inputs, clock()).catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).toMatch(/pod vbench-cluster-abcde: benchmark Job log has no run of GET/);
  });
});

describe("the provider shell, in-process", () => {
  it("create loads the implementation with tsx and returns rows, csv and the non-secret inputs", async () => {
    const provider = benchmarkResultsProvider({ api: fakeApi([done]), waitDeps: clock() });
    const res = await provider.create(inputs);
    expect(res.id).toBe("valkey/vbench-cluster/20260523-101500");
    const outs = res.outs as Record<string, unknown>;
    expect((outs.rows as unknown[]).length).toBe(2);
    expect(outs.csv).toMatch(/^workload,mode,test,rps,p50_ms/);
    expect(outs.jobName).toBe("vbench-cluster");
    expect(JSON.stringify(outs)).not.toContain("KUBE-TOKEN");
  });
  it("a second up with the same inputs changes nothing: diff against create's own outputs", async () => {
    const provider = benchmarkResultsProvider({ api: fakeApi([done]), waitDeps: clock() });
    const outs = (await provider.create(inputs)).outs as Record<string, unknown>;
    expect(await provider.diff?.("id", outs, { ...inputs })).toMatchObject({ changes: false, replaces: [] });
    expect(outs.rowsTimestamp).toBe("20260523-101500");
    expect(await provider.diff?.("id", outs, { ...inputs, timestamp: "20260101-000000" })).toMatchObject({
      changes: true,
      replaces: ["timestamp"],
    });
  });
  it("create refuses unusable inputs, naming the key and never the kubeconfig", async () => {
    const provider = benchmarkResultsProvider({ api: fakeApi([done]), waitDeps: clock() });
    const err = await provider.create({ ...inputs, timeoutSeconds: 0 }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/input 'timeoutSeconds' must be a whole number ≥ 1/);
    expect((err as Error).message).not.toContain("KUBE-TOKEN");
    await expect(provider.create({ ...inputs, kubeconfig: undefined })).rejects.toThrow(
      /input 'kubeconfig' must be a non-empty string/,
    );
    await expect(provider.create({ ...inputs, mode: "sharded" })).rejects.toThrow(
      /input 'mode' must be one of cluster, replication/,
    );
  });
  it("diff replaces on a new Job or workload, not on a new kubeconfig", async () => {
    const provider = benchmarkResultsProvider();
    const diff = provider.diff?.bind(provider);
    if (diff === undefined) throw new Error("no diff");
    const olds = { ...inputs, kubeconfig: undefined } as unknown as Record<string, unknown>;
    expect(await diff("id", olds, { ...inputs, kubeconfig: "other" })).toMatchObject({ changes: false, replaces: [] });
    expect(await diff("id", olds, { ...inputs, jobUid: "u2", workload: { ...W, requests: 5 } })).toMatchObject({
      changes: true,
      replaces: ["jobUid", "workload"],
    });
  });
  it("diff: a changed benchmark runId re-reads the results (replace), an unchanged one does not", async () => {
    const provider = benchmarkResultsProvider();
    const diff = provider.diff?.bind(provider);
    if (diff === undefined) throw new Error("no diff");
    const olds = { ...inputs, runId: "r1", kubeconfig: undefined } as unknown as Record<string, unknown>;
    expect(await diff("id", olds, { ...inputs, runId: "r1" })).toMatchObject({ changes: false, replaces: [] });
    expect(await diff("id", olds, { ...inputs, runId: "r2" })).toMatchObject({ changes: true, replaces: ["runId"] });
    expect(await diff("id", { ...olds, runId: undefined }, { ...inputs, runId: "first" })).toMatchObject({
      changes: true,
      replaces: ["runId"],
    });
  });
});

describe("BenchmarkResults (mocked engine)", () => {
  it("registers a dynamic resource; kubeconfig secret; neither password nor kubeconfig in the serialized provider", async () => {
    mocks.reset();
    const res = new BenchmarkResults("bench-results", {
      namespace: "valkey",
      jobName: pulumi.secret(PASSWORD).apply(() => "vbench-cluster"),
      kubeconfig: KUBECONFIG,
      mode: "cluster",
      workload: W,
      serverVersion: "9.0.2",
      image: "valkey/valkey:9.0.2",
    });
    await valueOf(res.urn);
    await settle();
    const r = mocks.get("pulumi-nodejs:dynamic:Resource", "bench-results-run");
    expect(r.redacted.kubeconfig).toBe("[secret]");
    expect(r.inputs.kubeconfig).toBe(KUBECONFIG);
    expect(r.inputs.timeoutSeconds).toBe(3600);
    expect(r.inputs.workload).toEqual(W);
    const provider = r.inputs.__provider;
    expect(typeof provider).toBe("string");
    expect((provider as string).length).toBeGreaterThan(100);
    expect(provider).toContain("benchmark-results/implementation.ts");
    expect(provider).not.toContain(PASSWORD);
    expect(provider).not.toContain("KUBE-TOKEN");
    for (const x of mocks.resources) expect(JSON.stringify(x.redacted)).not.toContain(PASSWORD);
  });
});
