/**
 * BenchmarkResults, declared once (see ../kit/step.ts): which Job's results, what they are
 * (the results.csv columns), and the rows read. A change of a `rerun` field means other results
 * (the resource is replaced, the log read again). `kubeconfig` / `context`: those of the cluster
 * the Job runs in (the kubeconfig is made secret).
 */
import { RESULT_MODES, type ResultRow } from "../../../benchmarks/run/result-row.js";
import type { Workload } from "../../../vocabulary/workload.js";
import type { MixJobExtras } from "../../../benchmarks/run/mix-job-result.js";
import { anObject, nonEmptyString, oneOf, rerun, setting, wholeNumber, withRole } from "../kit/inputs.js";
import { kubeAccessFields } from "../kit/kube-target.js";
import { declareStep, output, type InputsOf, type OutputsOf } from "../kit/step.js";

const resultsFields = {
  /** BenchmarkJob.namespace. */
  namespace: rerun(nonEmptyString()),
  /** BenchmarkJob.jobName. */
  jobName: rerun(nonEmptyString()),
  /** BenchmarkJob.jobUid: a replaced Job (a new run) means new results. */
  jobUid: rerun(nonEmptyString().optional()),
  /** kubeconfig (secret) and context of the cluster the Job runs in; a new context re-reads nothing. */
  kubeconfig: kubeAccessFields.kubeconfig,
  context: withRole(kubeAccessFields.context, "setting"),
  /** results.csv's mode column. */
  mode: rerun(oneOf(RESULT_MODES)),
  /** The workload the Job ran (the same object given to BenchmarkJob). */
  workload: rerun(anObject<Workload>()),
  /** server_version column, e.g. "9.0.2". */
  serverVersion: rerun(nonEmptyString()),
  /** The image the Job ran (BenchmarkJob.image; recorded in the outputs). */
  image: rerun(nonEmptyString()),
  /** timestamp column, `YYYYMMDD-HHMMSS`; the Job's start time (UTC) when absent. */
  timestamp: rerun(nonEmptyString().optional()),
  /** Any new value reads the results again (config `benchmark.runId`; it also replaces the Job). */
  runId: rerun(nonEmptyString().optional()),
  /** BenchmarkJob's client pods (config `benchmark.clientPods`): every one must succeed; their rows are combined. */
  clientPods: rerun(wholeNumber(1).default(1)),
  /** Fail when the Job has not finished after this long. */
  timeoutSeconds: setting(wholeNumber(1).default(3600)),
  /** Poll interval while waiting. */
  pollSeconds: setting(wholeNumber(1).default(5)),
};

export const resultsStep = declareStep({
  type: "BenchmarkResults",
  fields: resultsFields,
  outputs: {
    /** One row per test of the workload, in its order (results.csv's rows). */
    rows: output<ResultRow[]>(),
    /** results.csv (renderResultsCsv). */
    csv: output<string>(),
    /**
     * Every round's own rows (`workload.repeat`, the pods combined per round), in the order they ran:
     * `rows` are their medians with min–max, these keep what each run measured.
     */
    runs: output<ResultRow[][]>(),
    /**
     * A mix (`workload.mix`): what the pod measured beside the rows (the served shares from every
     * member's INFO commandstats, p99.9 and the HdrHistogram text per row, the open loop's series);
     * null for valkey-benchmark tests.
     */
    mix: output<MixJobExtras | null>(),
    /** The pod whose log was read; with several client pods, their names joined by ",". */
    podName: output<string>(),
    /** The image the Job ran (as given). */
    image: output<string>(),
    /**
     * The rows' timestamp. Not `timestamp`: the outputs hold the inputs too, and the diff compares
     * the stored `timestamp` input with the new one; the computed value there made every `up`
     * replace the results (re-reading them and re-running the checks and drills after them).
     */
    rowsTimestamp: output<string>(),
  },
});

export type BenchmarkResultsInputs = InputsOf<typeof resultsStep>;
export type BenchmarkResultsOutputs = OutputsOf<typeof resultsStep>;
