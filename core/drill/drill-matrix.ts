/**
 * The drill matrix: many runs of each (mode, fault) at the deployed clocks, reduced to one row each
 * with median and max (apps/perf/drill-matrix.ts runs it). Pure: rows in,
 * table out. What each column is, and the replication targets the outage is held to (the
 * Sentinel client's and the write endpoint's paths each against the target):
 * - unplanned (primary, crash-restart, lost-volume): down-after + 1.5 s;
 * - freeze, partition: down-after + 2.5 s (the recommended client settings);
 * - planned (switchover, upgrade): 1 s.
 * Cluster rows have no target here: their outage is the affected shard's (shard-outage.ts).
 */
import type { Fault, DrillMode } from "../../vocabulary/faults.js";
import { parseStreamName } from "./writers.js";

/** What the matrix needs of one drill's JSON (`vbench drill --json`). */
export interface MatrixRun {
  mode: DrillMode;
  fault: Fault;
  ok: boolean;
  healed: boolean;
  failures: string[];
  recoveryMs: number | null;
  writeOutageMs: number;
  /** The outage ran to the load's end (a lower bound); absent in runs recorded before it was reported. */
  writeOutageOpen?: boolean;
  lostAckedWrites: number;
  lostWaitedWrites: number;
  unexpectedReplies: number;
  streams: Array<{ stream: string; writeOutageMs: number }>;
}

export interface MatrixRow {
  mode: DrillMode;
  fault: Fault;
  runs: number;
  okRuns: number;
  /** The no-WAIT writer's acknowledged writes lost: median, max. */
  lostNoWait: [number, number];
  /** WAIT-confirmed writes lost, max (the bound is 0). */
  lostWaitedMax: number;
  unexpectedReplies: number;
  /** The headline outage (replication: worst no-WAIT path; cluster: affected shard): median, max. */
  outageMs: [number, number];
  /** Runs whose outage ran to the load's end: their figure is a lower bound, so the median and max may be too. */
  openRuns: number;
  /** Replication: each client path's no-WAIT outage (sentinel-client, write-endpoint, valkey-py…): median, max. */
  paths: Record<string, [number, number]>;
  recoveryMs: [number, number] | null;
  /** Replication: the outage target (ms) and the worst path's max over it. */
  targetMs: number | null;
  /** Every distinct failure reason of a run that was not ok. */
  failures: string[];
}

const UNPLANNED: ReadonlySet<Fault> = new Set<Fault>(["primary", "crash-restart", "lost-volume"]);
const HELD: ReadonlySet<Fault> = new Set<Fault>(["freeze", "partition"]);
const PLANNED: ReadonlySet<Fault> = new Set<Fault>(["switchover", "upgrade"]);

/**
 * The replication outage target (docs/drills.md, the drill matrix) for a fault at `downAfterMs`; null: none promised.
 */
export function outageTargetMs(mode: DrillMode, fault: Fault, downAfterMs: number): number | null {
  if (mode !== "replication") return null;
  if (UNPLANNED.has(fault)) return downAfterMs + 1500;
  if (HELD.has(fault)) return downAfterMs + 2500;
  if (PLANNED.has(fault)) return 1000;
  return null;
}

/** [median, max] of whole numbers (the lower median of an even count); [0, 0] for none. */
export function medianMax(values: readonly number[]): [number, number] {
  if (values.length === 0) return [0, 0];
  const s = [...values].sort((a, b) => a - b);
  return [s[Math.floor((s.length - 1) / 2)]!, s[s.length - 1]!];
}

/** One row per (mode, fault), in the order first seen. */
export function matrixRows(runs: readonly MatrixRun[], downAfterMs: number): MatrixRow[] {
  const groups = new Map<string, MatrixRun[]>();
  for (const r of runs) {
    const k = `${r.mode}/${r.fault}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  return [...groups.values()].map((g) => {
    const { mode, fault } = g[0]!;
    const pathOutages = new Map<string, number[]>();
    for (const r of g) {
      const worst = new Map<string, number>();
      for (const s of r.streams) {
        const id = parseStreamName(s.stream);
        if (id.writer === "wait" || id.shard !== undefined) continue;
        worst.set(id.client, Math.max(worst.get(id.client) ?? 0, s.writeOutageMs));
      }
      for (const [client, ms] of worst) pathOutages.set(client, [...(pathOutages.get(client) ?? []), ms]);
    }
    const recoveries = g.flatMap((r) => (r.recoveryMs === null ? [] : [r.recoveryMs]));
    return {
      mode,
      fault,
      runs: g.length,
      okRuns: g.filter((r) => r.ok).length,
      lostNoWait: medianMax(g.map((r) => r.lostAckedWrites)),
      lostWaitedMax: Math.max(...g.map((r) => r.lostWaitedWrites)),
      unexpectedReplies: g.reduce((a, r) => a + r.unexpectedReplies, 0),
      outageMs: medianMax(g.map((r) => r.writeOutageMs)),
      openRuns: g.filter((r) => r.writeOutageOpen === true).length,
      paths: Object.fromEntries([...pathOutages].map(([client, ms]) => [client, medianMax(ms)])),
      recoveryMs: recoveries.length === g.length ? medianMax(recoveries) : null,
      targetMs: outageTargetMs(mode, fault, downAfterMs),
      failures: [...new Set(g.flatMap((r) => r.failures))],
    };
  });
}

const s1 = (ms: number): string => (ms / 1000).toFixed(2);
const pair = ([m, x]: [number, number], f: (n: number) => string = String): string => `${f(m)} / ${f(x)}`;

/** The matrix as a Markdown table, then each row's failures. */
export function renderMatrix(rows: readonly MatrixRow[]): string {
  const head = [
    "| mode | fault | ok / runs | lost no-WAIT (med / max) | lost WAIT max | unexpected | outage s (med / max) | per path s (med / max) | recovery s (med / max) | target s | worst path max / target |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const body = rows.map((r) => {
    const paths = Object.entries(r.paths)
      .map(([c, p]) => `${c} ${pair(p, s1)}`)
      .join("; ");
    const worst = Math.max(0, ...Object.values(r.paths).map((p) => p[1]));
    const ratio = r.targetMs === null || Object.keys(r.paths).length === 0 ? "" : `${(worst / r.targetMs).toFixed(2)}×`;
    return `| ${r.mode} | ${r.fault} | ${r.okRuns} / ${r.runs} | ${pair(r.lostNoWait)} | ${r.lostWaitedMax} | ${r.unexpectedReplies} | ${pair(r.outageMs, s1)}${r.openRuns === 0 ? "" : ` (≥: ${r.openRuns} ran to the load's end)`} | ${paths} | ${r.recoveryMs === null ? "not healed" : pair(r.recoveryMs, s1)} | ${r.targetMs === null ? "" : s1(r.targetMs)} | ${ratio} |`;
  });
  const notes = rows.flatMap((r) => r.failures.map((f) => `- ${r.mode} ${r.fault}: ${f}`));
  return [...head, ...body, ...(notes.length === 0 ? [] : ["", "Runs not ok:", ...notes])].join("\n");
}
