/**
 * BenchmarkResults: waits (bounded) for a BenchmarkJob to finish (every client pod of it,
 * `clientPods`), reads each pod's log, combines them and publishes the rows and results.csv as
 * outputs. It fails the update with the pod's last log lines when the Job failed or did not finish
 * in time. Its implementation is ./implementation.ts, loaded by the kit's tsx shell. The kubeconfig
 * is passed as a secret and is never part of the outputs or of the serialized provider. Each read
 * (a new Job, a changed workload or `runId`) yields a new `runStamp`, which re-runs a TopologyCheck
 * `after` it.
 */
import { defineStep, type StepArgs } from "../kit/define-step.js";
import { resultsStep } from "./declaration.js";
import type { ResultsTestDeps } from "./implementation.js";

export type BenchmarkResultsArgs = StepArgs<typeof resultsStep>;

// Was one dynamic resource `pulumi-nodejs:dynamic/benchmark:BenchmarkResults` named `name`.
export class BenchmarkResults extends defineStep(resultsStep, {
  implementation: new URL("./implementation.ts", import.meta.url),
  was: { resource: "pulumi-nodejs:dynamic/benchmark:BenchmarkResults" },
}) {}

/**
 * The dynamic provider. `testDeps` is for tests calling it in-process (a fake JobLogApi, a fake
 * clock); BenchmarkResults never passes it.
 */
export const benchmarkResultsProvider = (testDeps?: ResultsTestDeps) => BenchmarkResults.provider(testDeps);
