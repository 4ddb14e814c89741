/**
 * Report test inputs. `LOCAL_RUN_DIR` is a results directory written by a real
 * `npm run local -- --requests 20000 --min-duration 1 --tests set,get,incr --workload-name fixture`
 * on this project's 2-core CI machine (the raw benchmark outputs, which the report does not
 * read, were dropped). Stack reports are built by the stack's own `stackReport()` from the stack
 * files in stacks/ and that run's rows and verifier report, so they have exactly the shape
 * `pulumi stack output report --json` prints.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseResultsCsv, renderResultsCsv } from "../../benchmarks/run/results-csv.js";
import type { ResultMode } from "../../benchmarks/run/result-row.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import { toCheckReport } from "../../core/verify/to-check-report.js";
import { loadStackFile } from "../../config/schema.js";
import { stackReport, type StackReport } from "../../stacks/outputs.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export const LOCAL_RUN_DIR = join(ROOT, "tests", "fixtures", "report", "local-run");

export function fixtureRows(mode?: ResultMode) {
  const rows = parseResultsCsv(readFileSync(join(LOCAL_RUN_DIR, "results.csv"), "utf8"));
  return mode === undefined ? rows : rows.filter((r) => r.mode === mode);
}

/** The stack report a deployed `cluster` or `replication` stack would output, from the fixture run's measurements. */
export function fixtureStackReport(mode: ResultMode): StackReport {
  const config = loadStackFile(join(ROOT, "stacks", `Pulumi.${mode}.yaml`)).config;
  const verify = JSON.parse(readFileSync(join(LOCAL_RUN_DIR, "raw", `verify-${mode}.json`), "utf8")) as {
    after: TopologyReport;
  };
  const rows = fixtureRows(mode);
  const endpoints = {
    namespace: "valkey",
    write: `valkey-${mode}.valkey.svc.cluster.local`,
    read: mode === "cluster" ? null : "valkey-replicas.valkey.svc.cluster.local",
    port: 6379,
  };
  return stackReport(mode, config, endpoints, toCheckReport(verify.after), { rows, csv: renderResultsCsv(rows) });
}

/** Writes `value` as JSON to `<dir>/<name>` and returns the path. */
export function writeJson(dir: string, name: string, value: unknown): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
  return path;
}
