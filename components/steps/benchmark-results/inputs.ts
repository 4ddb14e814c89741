/**
 * BenchmarkResults' inputs, declared once: the resource's args, the provider's parser, the keys
 * whose change means other results (the resource is replaced, the log read again) and the
 * secret keys all come from these fields (see ../kit/inputs.ts).
 */
import { RESULT_MODES } from "../../../benchmarks/run/result-row.js";
import type { Workload } from "../../../vocabulary/workload.js";
import { anObject, nonEmptyString, oneOf, parserOf, rerun, setting, wholeNumber, withRole, type ArgsOf, type Parsed } from "../kit/inputs.js";
import { kubeAccessFields } from "../kit/kube-target.js";

export const resultsFields = {
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

/** `kubeconfig` / `context`: those of the cluster the Job runs in (the kubeconfig is made secret). */
export type BenchmarkResultsArgs = ArgsOf<typeof resultsFields>;
/** The inputs as the implementation reads them. */
export type BenchmarkResultsInputs = Parsed<typeof resultsFields>;

export const parseResultsInputs = parserOf(resultsFields);
