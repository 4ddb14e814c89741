/**
 * BenchmarkResults: a dynamic resource that waits (bounded) for a BenchmarkJob to finish, reads
 * its pod's log and publishes the rows and results.csv as outputs. It fails the update with the
 * pod's last log lines when the Job failed or did not finish in time. The provider is a thin
 * shell (components/dynamic/benchmark-results-provider.ts) over the plain implementation in
 * components/benchmark/results-from-job.ts. The kubeconfig is passed as a secret and is never
 * part of the outputs or of the serialized provider.
 */
import * as pulumi from "@pulumi/pulumi";
import type { ResultMode, ResultRow } from "../benchmarks/run/result-row.js";
import type { Workload } from "../benchmarks/workload.js";
import { benchmarkResultsProvider } from "./dynamic/benchmark-results-provider.js";
import { kubeAccessInputs, type KubeAccessArgs } from "./dynamic/target-inputs.js";

/** `kubeconfig` / `context`: those of the cluster the Job runs in (KubeAccessArgs; the kubeconfig is made secret here). */
export interface BenchmarkResultsArgs extends KubeAccessArgs {
  /** BenchmarkJob.namespace. */
  namespace: pulumi.Input<string>;
  /** BenchmarkJob.jobName. */
  jobName: pulumi.Input<string>;
  /** BenchmarkJob.jobUid: a replaced Job (a new run) means new results. @default undefined */
  jobUid?: pulumi.Input<string>;
  mode: ResultMode;
  /** The workload the Job ran (the same object given to BenchmarkJob). */
  workload: Workload;
  /** server_version column, e.g. "9.0.2". */
  serverVersion: pulumi.Input<string>;
  /** The image the Job ran (BenchmarkJob.image). */
  image: pulumi.Input<string>;
  /** timestamp column, `YYYYMMDD-HHMMSS`. @default the Job's start time (UTC) */
  timestamp?: pulumi.Input<string>;
  /** Fail when the Job has not finished after this long. @default 3600 */
  timeoutSeconds?: number;
  /** Poll interval while waiting. @default 5 */
  pollSeconds?: number;
}

export class BenchmarkResults extends pulumi.dynamic.Resource {
  /** One row per test of the workload, in its order (results.csv's rows). */
  declare readonly rows: pulumi.Output<ResultRow[]>;
  /** results.csv (renderResultsCsv). */
  declare readonly csv: pulumi.Output<string>;
  /** The pod whose log was read. */
  declare readonly podName: pulumi.Output<string>;
  /** The rows' timestamp. */
  declare readonly timestamp: pulumi.Output<string>;

  constructor(name: string, args: BenchmarkResultsArgs, opts: pulumi.CustomResourceOptions = {}) {
    super(
      benchmarkResultsProvider(),
      name,
      {
        namespace: args.namespace,
        jobName: args.jobName,
        jobUid: args.jobUid,
        ...kubeAccessInputs(args),
        mode: args.mode,
        workload: args.workload,
        serverVersion: args.serverVersion,
        image: args.image,
        timestamp: args.timestamp,
        timeoutSeconds: args.timeoutSeconds ?? 3600,
        pollSeconds: args.pollSeconds ?? 5,
        rows: undefined,
        csv: undefined,
        podName: undefined,
      },
      opts,
      "benchmark",
      "BenchmarkResults",
    );
  }
}
