/**
 * The BenchmarkResults dynamic provider: a thin shell over components/benchmark/results-from-job.ts
 * (see ts-module-provider.ts for why a shell). The kubeconfig arrives in the inputs of each call,
 * never through the serialized provider.
 */
import { fileURLToPath } from "node:url";
import type * as pulumi from "@pulumi/pulumi";
import type { ResultsTestDeps } from "../benchmark/results-from-job.js";
import { tsModuleProvider } from "./ts-module-provider.js";

/**
 * The provider object given to pulumi.dynamic.Resource. `testDeps` is for tests calling it
 * in-process (a fake JobLogApi, a fake clock); BenchmarkResults never passes it.
 */
export function benchmarkResultsProvider(testDeps?: ResultsTestDeps): pulumi.dynamic.ResourceProvider {
  return tsModuleProvider(fileURLToPath(new URL("../benchmark/results-from-job.ts", import.meta.url)), testDeps);
}
