/**
 * BenchmarkResults: a dynamic resource that waits (bounded) for a BenchmarkJob to finish (every
 * client pod of it, `clientPods`), reads each pod's log, combines them and publishes the rows and results.csv as outputs. It fails the update with the
 * pod's last log lines when the Job failed or did not finish in time. The provider is the kit's
 * tsx shell over ./implementation.ts. The kubeconfig is passed as a secret and is never part of
 * the outputs or of the serialized provider. Each read (a new Job, a changed workload or
 * `runId`) yields a new `runStamp`, which re-runs a TopologyCheck `after` it.
 */
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import type { ResultRow } from "../../../benchmarks/run/result-row.js";
import { resourceInputs } from "../kit/resource-inputs.js";
import { tsModuleProvider } from "../kit/ts-module-provider.js";
import type { ResultsTestDeps } from "./implementation.js";
import { resultsFields, type BenchmarkResultsArgs } from "./inputs.js";

export type { BenchmarkResultsArgs } from "./inputs.js";

/**
 * The provider object given to pulumi.dynamic.Resource. `testDeps` is for tests calling it
 * in-process (a fake JobLogApi, a fake clock); BenchmarkResults never passes it.
 */
export function benchmarkResultsProvider(testDeps?: ResultsTestDeps): pulumi.dynamic.ResourceProvider {
  return tsModuleProvider(fileURLToPath(new URL("./implementation.ts", import.meta.url)), testDeps);
}

export class BenchmarkResults extends pulumi.dynamic.Resource {
  /** One row per test of the workload, in its order (results.csv's rows). */
  declare readonly rows: pulumi.Output<ResultRow[]>;
  /** results.csv (renderResultsCsv). */
  declare readonly csv: pulumi.Output<string>;
  /** The pod whose log was read; with several client pods, their names joined by ",". */
  declare readonly podName: pulumi.Output<string>;
  /** The rows' timestamp. */
  declare readonly rowsTimestamp: pulumi.Output<string>;
  /** New each time the results are read (each benchmark run). */
  declare readonly runStamp: pulumi.Output<string>;

  constructor(name: string, args: BenchmarkResultsArgs, opts: pulumi.CustomResourceOptions = {}) {
    const outputs = { rows: undefined, csv: undefined, podName: undefined, runStamp: undefined };
    super(benchmarkResultsProvider(), name, { ...resourceInputs(resultsFields, args), ...outputs }, opts, "benchmark", "BenchmarkResults");
  }
}
