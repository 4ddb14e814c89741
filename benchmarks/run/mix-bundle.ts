/** The benchmark Job's mix runner as one module, `mix.mjs` (mix-job.ts: the BenchmarkJob's ConfigMap holds it). */
import { fileURLToPath } from "node:url";
import { bundleEntry } from "../../core/util/bundle.js";

export const MIX_ENTRY = fileURLToPath(new URL("./mix-job-main.ts", import.meta.url));

export function bundleMixScript(): Promise<string> {
  return bundleEntry(MIX_ENTRY, "the benchmark Job's mix runner");
}
