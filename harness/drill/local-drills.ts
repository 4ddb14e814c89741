/**
 * The drills `vbench local --drills primary,zone` appends to the comparison: every fault in both
 * modes, each on a fresh local topology with the local drill defaults, and the files they write
 * beside results.csv (drills.csv, raw/drill-<mode>-<fault>.json).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderDrillsCsv, renderDrillTable } from "../../core/drill/drill-table.js";
import type { DrillMode, Fault } from "../../vocabulary/faults.js";
import { runDrill, type DrillOptions } from "./run-drill.js";
import type { DrillResult, DrillRun } from "../../core/drill/drill-result.js";

/** Local defaults: each drill finishes well under a minute. */
export const LOCAL_DRILL_DEFAULTS = {
  durationMs: 20_000,
  warmupMs: 5000,
  rate: 100,
  waitTimeoutMs: 500,
  failureDetectionMs: 2000,
  failoverTimeoutMs: 6000,
  restartDelayMs: 3000,
  zoneDownMs: 8000,
} as const;

export const DRILL_MODES: readonly DrillMode[] = ["replication", "cluster"];

export type LocalDrillShape = Pick<DrillOptions, "replicas" | "primaries" | "replicasPerPrimary" | "zones">;

export function localDrillOptions(mode: DrillMode, fault: Fault, shape: LocalDrillShape): DrillOptions {
  return { ...LOCAL_DRILL_DEFAULTS, ...shape, mode, fault };
}

/** One drill; a SkippedDrill when its fault cannot run on this machine (partition without root / iptables). */
export async function runOneLocalDrill(
  mode: DrillMode,
  fault: Fault,
  shape: LocalDrillShape,
  onStep?: (line: string) => void,
  metrics = false,
): Promise<DrillRun> {
  return runDrill({ ...localDrillOptions(mode, fault, shape), onStep, ...(metrics ? { metrics } : {}) });
}

/** drills.csv beside results.csv and one JSON file per drill under raw/. */
export function writeDrillFiles(runDir: string, results: readonly DrillResult[]): void {
  writeFileSync(join(runDir, "drills.csv"), renderDrillsCsv(results));
  mkdirSync(join(runDir, "raw"), { recursive: true });
  for (const r of results)
    writeFileSync(join(runDir, "raw", `drill-${r.mode}-${r.fault}.json`), `${JSON.stringify(r, null, 2)}\n`);
}

/**
 * The local comparison's drill table for the terminal, with its timeouts, then the drills skipped ("" when none ran).
 */
export function renderLocalDrillTable(drills: readonly DrillResult[], skipped: readonly string[]): string {
  const d = LOCAL_DRILL_DEFAULTS;
  const table =
    drills.length === 0
      ? ""
      : `failure drills (local timeouts: detection ${d.failureDetectionMs} ms, restart after ${d.restartDelayMs} ms, zone down ${d.zoneDownMs} ms)\n${renderDrillTable(drills)}`;
  return [table, ...skipped].filter((t) => t !== "").join("\n");
}
