/** The drill's in-cluster load as one module, `load.mjs` (what the FailureDrill step puts in its ConfigMap). */
import { fileURLToPath } from "node:url";
import { bundleEntry } from "../util/bundle.js";

export const LOAD_ENTRY = fileURLToPath(new URL("./load-main.ts", import.meta.url));

export function bundleLoadScript(): Promise<string> {
  return bundleEntry(LOAD_ENTRY, "the drill load");
}
