/**
 * The drill matrix on real processes: `vbench drill --json` run `--runs` times for each mode and
 * fault, one after another, at the deployed clocks (the stack's defaults, read from the config
 * schema: Sentinel down-after and failover-timeout, cluster-node-timeout), reduced to one row per (mode, fault) with
 * median and max (core/drill/drill-matrix.ts), the replication outage against its target.
 * Every run's JSON goes to --out (default a new temp directory). Exit 1 when any run was not ok or
 * was skipped (a skip is not a pass), 2 on bad flags.
 *
 *   bash .ci/setup npx tsx apps/perf/drill-matrix.ts [--runs 5] [--modes replication,cluster]
 *       [--faults primary,crash-restart,...] [--down-after-ms MS] [--node-timeout-ms MS]
 *       [--failover-timeout-ms MS] [--out DIR]
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parseStackConfig } from "../../config/schema.js";
import { matrixRows, renderMatrix, type MatrixRun } from "../../core/drill/drill-matrix.js";
import { FAULTS, parseFaults, type DrillMode, type Fault } from "../../vocabulary/faults.js";
import { wholeFlag } from "./perf-args.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** Every fault but upgrade (it needs --upgrade-from, a second Valkey build). */
const DEFAULT_FAULTS: readonly Fault[] = FAULTS.filter((f) => f !== "upgrade");

function runDrill(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, ["--import", "tsx", join(ROOT, "apps/vbench/cli.ts"), "drill", ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    p.on("error", fail);
    p.on("exit", (code) => done({ code, stdout, stderr }));
  });
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      "runs": { type: "string" },
      "modes": { type: "string" },
      "faults": { type: "string" },
      "down-after-ms": { type: "string" },
      "node-timeout-ms": { type: "string" },
      "failover-timeout-ms": { type: "string" },
      "out": { type: "string" },
    },
  });
  const runs = wholeFlag("runs", values.runs, 5);
  const deployed = parseStackConfig({}).config.valkey;
  const downAfterMs = wholeFlag(
    "down-after-ms",
    values["down-after-ms"],
    deployed.replication.sentinel.downAfterMilliseconds,
  );
  const nodeTimeoutMs = wholeFlag("node-timeout-ms", values["node-timeout-ms"], deployed.cluster.nodeTimeoutMs);
  const failoverTimeoutMs = wholeFlag(
    "failover-timeout-ms",
    values["failover-timeout-ms"],
    deployed.replication.sentinel.failoverTimeoutMs,
  );
  const modes = (values.modes ?? "replication,cluster").split(",").map((m) => m.trim());
  for (const m of modes)
    if (m !== "replication" && m !== "cluster") throw new Error(`--modes: '${m}' is not replication or cluster`);
  const faults = values.faults === undefined ? DEFAULT_FAULTS : parseFaults(values.faults);
  const out = values.out ?? mkdtempSync(join(tmpdir(), "drill-matrix-"));
  mkdirSync(out, { recursive: true });
  const results: MatrixRun[] = [];
  const problems: string[] = [];
  for (const mode of modes as DrillMode[])
    for (const fault of faults)
      for (let run = 1; run <= runs; run++) {
        const clocks =
          mode === "replication"
            ? ["--detection-ms", String(downAfterMs), "--failover-timeout-ms", String(failoverTimeoutMs)]
            : ["--detection-ms", String(nodeTimeoutMs)];
        const t0 = Date.now();
        const r = await runDrill(["--mode", mode, "--fault", fault, ...clocks, "--json"]);
        const what = `${mode} ${fault} run ${run}`;
        let row: (MatrixRun & { skipped?: { reason: string } }) | undefined;
        try {
          row = JSON.parse(r.stdout) as MatrixRun & { skipped?: { reason: string } };
        } catch {
          problems.push(
            `${what}: exit ${r.code}, no JSON on stdout; stderr tail: ${r.stderr.trim().split("\n").slice(-3).join(" | ")}`,
          );
        }
        if (row !== undefined) {
          writeFileSync(join(out, `${mode}-${fault}-${run}.json`), `${JSON.stringify(row, null, 2)}\n`);
          if (row.skipped !== undefined) problems.push(`${what}: skipped (${row.skipped.reason})`);
          else results.push(row);
        }
        process.stderr.write(
          `[matrix] ${what}: ${row?.ok === true ? "ok" : "NOT ok"} in ${Math.round((Date.now() - t0) / 1000)} s\n`,
        );
      }
  const rows = matrixRows(results, downAfterMs);
  process.stdout.write(
    `drill matrix: ${runs} run(s) each, down-after ${downAfterMs} ms, failover-timeout ${failoverTimeoutMs} ms, cluster-node-timeout ${nodeTimeoutMs} ms; runs' JSON in ${out}\n\n${renderMatrix(rows)}\n`,
  );
  if (problems.length > 0) process.stdout.write(`\nNot measured:\n${problems.map((p) => `- ${p}`).join("\n")}\n`);
  return problems.length > 0 || rows.some((r) => r.okRuns < r.runs) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`drill-matrix: ${(err as Error).message}\n`);
    process.exit(2);
  },
);
