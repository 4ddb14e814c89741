/**
 * The BenchmarkResults dynamic provider: a thin shell. Pulumi serializes this object with its
 * closure serializer and runs it in a separate plain-`node` process that cannot import this
 * project's .ts files, so the methods capture only two strings (the absolute paths of the
 * implementation module and of tsx's CommonJS API) and, when called, load the implementation
 * (components/benchmark/results-from-job.ts) with tsx's `require`, which compiles TypeScript. Nothing secret is captured:
 * the kubeconfig arrives in the inputs of each call.
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type * as pulumi from "@pulumi/pulumi";
import type * as ResultsFromJob from "../benchmark/results-from-job.js";
import type { BenchmarkResultsInputs, JobLogApi, WaitDeps } from "../benchmark/results-from-job.js";

/** Inputs that, when changed, mean other results: the resource is replaced (the log read again). */
export const RESULTS_REPLACE_KEYS = ["namespace", "jobName", "jobUid", "mode", "workload", "serverVersion", "image", "timestamp"] as const;

export interface BenchmarkResultsProviderOptions {
  /**
   * Test injection point: every call reads through this JobLogApi instead of the kubeconfig's
   * cluster. Never set it in a program (it would be serialized with the provider).
   */
  api?: JobLogApi;
  /** Test injection point for the wait loop's clock and sleep. */
  waitDeps?: WaitDeps;
}

type Impl = typeof ResultsFromJob;

/** Absolute path of tsx's CommonJS API (`tsx/cjs/api`), from this project's node_modules. */
function tsxApiPath(): string {
  return createRequire(import.meta.url).resolve("tsx/cjs/api");
}

function pick(inputs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(RESULTS_REPLACE_KEYS.filter((k) => inputs[k] !== undefined).map((k) => [k, inputs[k]]));
}

/** The provider object given to pulumi.dynamic.Resource. */
export function benchmarkResultsProvider(options: BenchmarkResultsProviderOptions = {}): pulumi.dynamic.ResourceProvider {
  const implPath = fileURLToPath(new URL("../benchmark/results-from-job.ts", import.meta.url));
  const tsxPath = tsxApiPath();
  const api = options.api;
  const waitDeps = options.waitDeps;
  const keys: readonly string[] = RESULTS_REPLACE_KEYS;
  const load = (): Impl => {
    // tsx's CommonJS API (`tsx/cjs/api`, its require compiles the .ts files): no import() in this
    // closure, which test runners rewrite into helpers the closure serializer cannot capture and
    // which needs a dynamic-import callback in vm-evaluated code.
    const { createRequire: requireFrom } = process.getBuiltinModule("node:module");
    const tsx = requireFrom(tsxPath)(tsxPath) as { require: (id: string, fromFile: string) => unknown };
    return tsx.require(implPath, implPath) as Impl;
  };
  return {
    async create(inputs: BenchmarkResultsInputs): Promise<pulumi.dynamic.CreateResult> {
      const impl = load();
      const { id, outs } = await impl.createBenchmarkResults(inputs, api, waitDeps);
      return { id, outs: { ...pick(inputs as unknown as Record<string, unknown>), ...outs } };
    },
    diff(_id: string, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<pulumi.dynamic.DiffResult> {
      const replaces = keys.filter((k) => JSON.stringify(olds[k]) !== JSON.stringify(news[k]));
      return Promise.resolve({ changes: replaces.length > 0, replaces, deleteBeforeReplace: false });
    },
    delete(): Promise<void> {
      // Results are read, not owned: the Job is BenchmarkJob's to delete.
      return Promise.resolve();
    },
  };
}
