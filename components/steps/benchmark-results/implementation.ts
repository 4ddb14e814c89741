/**
 * What the BenchmarkResults dynamic provider does, as a plain module (the dynamic-provider shell
 * ../kit/ts-module-provider.ts loads it with tsx at run time): wait for the benchmark Job to
 * finish (bounded; every one of its `clientPods`), read each pod's log, parse it with parseJobLogRounds,
 * combine the pods' rows round by round (combineClientRows), take each test's median with min–max
 * over the rounds (aggregateRuns) and render results.csv. The Kubernetes API sits
 * behind JobLogApi, so tests drive it with a fake; kubernetesJobLogApi is the
 * @kubernetes/client-node implementation.
 */
import { combineClientRows } from "../../../benchmarks/run/multi-client.js";
import { renderResultsCsv } from "../../../benchmarks/run/results-csv.js";
import { formatResultTimestamp, type ResultRow } from "../../../benchmarks/run/result-row.js";
import { parseJobLogRounds, parseMixJobLog } from "../../benchmark/job-log.js";
import { aggregateRuns } from "../../../benchmarks/run/run-spread.js";
import type { MixJobExtras } from "../../../benchmarks/run/mix-job-result.js";
import { downsampleSoak } from "../../../benchmarks/run/soak-downsample.js";
import { dynamicProtocol } from "../kit/protocol.js";
import { resultsStep, type BenchmarkResultsInputs, type BenchmarkResultsOutputs } from "./declaration.js";

export type { BenchmarkResultsInputs, BenchmarkResultsOutputs } from "./declaration.js";

export interface JobState {
  /** Pods that succeeded / failed (backoffLimit 0: at most one failed; up to `clientPods` succeeded). */
  succeeded: number;
  failed: number;
  /** `Complete` / `Failed` conditions with status "True", with their messages. */
  complete: boolean;
  failedReason: string | undefined;
  /** ISO time the Job started, if it has. */
  startTime?: string | undefined;
}

export interface JobPod {
  name: string;
  phase: string;
  /** ISO time; the newest pod is the one read. */
  created: string;
}

/** The three Kubernetes reads the results need. */
export interface JobLogApi {
  /** undefined when the Job does not exist (yet). */
  jobStatus(namespace: string, name: string): Promise<JobState | undefined>;
  podsOfJob(namespace: string, name: string): Promise<JobPod[]>;
  podLog(namespace: string, pod: string): Promise<string>;
}

export class BenchmarkJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BenchmarkJobError";
  }
}

export interface WaitDeps {
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

function tail(log: string, lines = 30): string {
  const t = log.trimEnd().split("\n").slice(-lines).join("\n");
  return t === "" ? "(empty log)" : t;
}

async function newestPod(api: JobLogApi, ns: string, job: string): Promise<JobPod | undefined> {
  const pods = await api.podsOfJob(ns, job);
  return [...pods].sort((a, b) => a.created.localeCompare(b.created)).at(-1);
}

async function logTailOf(api: JobLogApi, ns: string, job: string): Promise<string> {
  const pod = await newestPod(api, ns, job);
  if (pod === undefined) return "no pod of the Job exists";
  try {
    return `pod ${pod.name} (${pod.phase}), last log lines:\n${tail(await api.podLog(ns, pod.name))}`;
  } catch (err) {
    return `pod ${pod.name} (${pod.phase}); its log could not be read: ${(err as Error).message}`;
  }
}

/**
 * Waits for the Job (all its client pods), then parses each pod's log and combines the rows; fails with the log's tail
 * when the Job did.
 */
export async function collectJobResults(
  api: JobLogApi,
  i: BenchmarkResultsInputs,
  deps: WaitDeps = {},
): Promise<BenchmarkResultsOutputs> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = deps.now ?? Date.now;
  const job = `${i.namespace}/${i.jobName}`;
  const deadline = now() + i.timeoutSeconds * 1000;
  let started: string | undefined;
  for (;;) {
    const st = await api.jobStatus(i.namespace, i.jobName);
    if (st !== undefined && (st.failed > 0 || st.failedReason !== undefined)) {
      throw new BenchmarkJobError(
        `benchmark Job ${job} failed (${st.failedReason ?? `${st.failed} failed pod(s)`}); ${await logTailOf(api, i.namespace, i.jobName)}`,
      );
    }
    started = st?.startTime;
    // Done when Complete, or once every client pod (benchmark.clientPods) has succeeded.
    if (st !== undefined && (st.complete || st.succeeded >= i.clientPods)) break;
    if (now() >= deadline) {
      const what = st === undefined ? "does not exist" : "has not finished";
      throw new BenchmarkJobError(
        `benchmark Job ${job} ${what} after ${i.timeoutSeconds} s; ${await logTailOf(api, i.namespace, i.jobName)}`,
      );
    }
    await sleep((i.pollSeconds ?? 5) * 1000);
  }
  // One pod, or every pod of an Indexed Job with several client pods (benchmark.clientPods).
  const pods = (await api.podsOfJob(i.namespace, i.jobName))
    .filter((p) => p.phase === "Succeeded")
    .sort((x, y) => x.name.localeCompare(y.name));
  if (pods.length === 0)
    throw new BenchmarkJobError(
      `benchmark Job ${job} succeeded but has no pod left to read the log of (ttlSecondsAfterFinished too short?)`,
    );
  if (pods.length !== i.clientPods) {
    throw new BenchmarkJobError(
      `benchmark Job ${job} succeeded but ${pods.length} of its ${i.clientPods} client pods are left to read the logs of (ttlSecondsAfterFinished too short?)`,
    );
  }
  const timestamp = i.timestamp ?? formatResultTimestamp(started === undefined ? new Date(now()) : new Date(started));
  const meta = { mode: i.mode, workload: i.workload, serverVersion: i.serverVersion, timestamp };
  // Per pod, its rounds (`workload.repeat`), each one row per test.
  const perPod: ResultRow[][][] = [];
  let mix: MixJobExtras | null = null;
  for (const pod of pods) {
    const log = await api.podLog(i.namespace, pod.name);
    try {
      if (i.workload.mix === undefined) perPod.push(parseJobLogRounds(log, meta));
      else {
        const m = parseMixJobLog(log, meta);
        perPod.push([m.rows]);
        // A long soak's series is merged down for the outputs (the Pulumi state); its events come from the full series.
        mix = m.mix.soak === undefined ? m.mix : { ...m.mix, soak: downsampleSoak(m.mix.soak) };
      }
    } catch (err) {
      throw new BenchmarkJobError(
        `benchmark Job ${job}, pod ${pod.name}: ${(err as Error).message}; last log lines:\n${tail(log)}`,
      );
    }
  }
  // A mix runs in one pod (its rows are final: its runs aggregated in the pod); valkey-benchmark pods
  // are combined round by round, then each test's rounds become its median with min–max.
  const combined =
    mix === null ? (perPod[0] ?? []).map((_, k) => combineClientRows(perPod.map((pod) => pod[k] ?? []))) : [];
  const rows = mix === null ? aggregateRuns(combined) : (perPod[0]?.[0] ?? []);
  const runs = mix === null ? combined : (mix.runs ?? [rows]);
  return {
    rows,
    csv: renderResultsCsv(rows),
    runs,
    mix,
    podName: pods.map((p) => p.name).join(","),
    image: i.image,
    rowsTimestamp: timestamp,
  };
}

function isNotFound(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === 404;
}

/** JobLogApi over @kubernetes/client-node 2.x (object-style parameters). */
export async function kubernetesJobLogApi(kubeconfig: string, context?: string): Promise<JobLogApi> {
  const [k8s, { loadKubeConfig }] = await Promise.all([
    import("@kubernetes/client-node"),
    import("../../kubernetes/pod-api.js"),
  ]);
  const kc = loadKubeConfig(kubeconfig, context);
  const batch = kc.makeApiClient(k8s.BatchV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  return {
    async jobStatus(namespace, name) {
      try {
        const job = await batch.readNamespacedJob({ name, namespace });
        const conds = job.status?.conditions ?? [];
        const failed = conds.find((c) => c.type === "Failed" && c.status === "True");
        return {
          succeeded: job.status?.succeeded ?? 0,
          failed: job.status?.failed ?? 0,
          complete: conds.some((c) => c.type === "Complete" && c.status === "True"),
          failedReason:
            failed === undefined ? undefined : `${failed.reason ?? "Failed"}: ${failed.message ?? ""}`.trim(),
          startTime: job.status?.startTime?.toISOString(),
        };
      } catch (err) {
        if (isNotFound(err)) return undefined;
        const cause = (err as { cause?: { message?: string } }).cause?.message;
        throw new BenchmarkJobError(
          `cannot read Job ${namespace}/${name} from the cluster: ${(err as Error).message}${cause === undefined ? "" : ` (${cause})`}`,
        );
      }
    },
    async podsOfJob(namespace, name) {
      const list = await core.listNamespacedPod({ namespace, labelSelector: `job-name=${name}` });
      return list.items.map((p) => ({
        name: p.metadata?.name ?? "",
        phase: p.status?.phase ?? "Unknown",
        created: p.metadata?.creationTimestamp?.toISOString() ?? "",
      }));
    },
    async podLog(namespace, pod) {
      return core.readNamespacedPodLog({ name: pod, namespace, container: "benchmark" });
    },
  };
}

// --- the dynamic-provider protocol (called by ../kit/ts-module-provider.ts) ---

/** A test's fakes, given to the provider shell as its `testDeps`. */
export interface ResultsTestDeps {
  /** Every read goes through this JobLogApi instead of the kubeconfig's cluster. */
  api?: JobLogApi;
  /** The wait loop's clock and sleep. */
  waitDeps?: WaitDeps;
}

/**
 * Reads the results with the test's `api`, or else from the kubeconfig's cluster. Every change
 * of a `rerun` field (inputs.ts) replaces the resource (so `update` is never called); `delete` does
 * nothing: the results are read, not owned (the Job is BenchmarkJob's to delete).
 */
export const { check, create, diff, update } = dynamicProtocol(resultsStep, {
  run: async (i, deps?: ResultsTestDeps) =>
    collectJobResults(deps?.api ?? (await kubernetesJobLogApi(i.kubeconfig, i.context)), i, deps?.waitDeps),
  idOf: (i, outs) => `${i.namespace}/${i.jobName}/${outs.rowsTimestamp}`,
  replaceOnChange: true,
});
