/**
 * What one drill reports: its figures, or why it could not run here. Declared once: the local
 * drills (harness/drill/run-drill.ts) produce it, the drill table (drill-table.ts), the CLI and the
 * local comparison read it.
 */
import type { AofAtKill } from "./aof-at-kill.js";
import type { DrillMode, Fault } from "../../vocabulary/faults.js";
import type { RollStepTiming } from "../roll/rolling-restart.js";
import type { TopologyReport } from "../verify/verify-types.js";
import type { DurabilityConfig } from "./bounds.js";
import type { ClientSettings } from "./client-settings.js";
import type { DrillOutcome } from "./ledger.js";
import type { AlertSeen } from "./alerts-seen.js";
import type { LiveMetrics } from "./live-metrics.js";
import type { FailoverSteps, SentinelEventRow } from "./sentinel-events.js";
import type { DrillTimings, PartitionFigures } from "./target.js";

/**
 * The drill's figures: its load's (ledger.ts) plus what the drill itself measured (partition: PartitionFigures too).
 */
export interface DrillResult extends DrillOutcome, Partial<PartitionFigures> {
  /** upgrade: each step of the roll and how long until the verifier passed again (rolling-restart.ts). */
  rollSteps?: RollStepTiming[];
  /** replication: every event the Sentinels published, ms from the fault (sentinel-events.ts). */
  sentinelEvents?: SentinelEventRow[];
  /** replication: when the Sentinels reported each failover step first (from sentinelEvents). */
  failoverSteps?: FailoverSteps;
  /** With live metrics (`vbench drill --metrics`): the alerts a real Prometheus fired, ms from the fault. */
  alerts?: AlertSeen[];
  /** With live metrics: commands per second on each member, from its exporter through Prometheus. */
  liveMetrics?: LiveMetrics;
  /** crash-restart: the killed primary's AOF right before the SIGKILL, the server's own reading of the loss
   * (aof-at-kill.ts). */
  aofAtKill?: AofAtKill;
  timings: DrillTimings;
  /** How the load's clients (ioredis and valkey-py) followed the failover (client-settings.ts). */
  clientSettings: ClientSettings;
  /** The primary's settings the loss bound was computed from (CONFIG GET before the fault). */
  durability: DurabilityConfig;
  /** The verifier's report once healed (or its last failing one). */
  after: TopologyReport | { error: string };
  /** Every write: ms from the fault, latency ms (null if failed), stream: for the timeline chart. */
  timeline: { stream: string; t: number; latencyMs: number | null }[];
}

/** A drill that could not run on this machine: never ok; `skipped.reason` says why (the CLI exits 3). */
export interface SkippedDrill {
  mode: DrillMode;
  fault: Fault;
  ok: false;
  skipped: { reason: string };
}

export type DrillRun = DrillResult | SkippedDrill;

export const isSkipped = (r: DrillRun): r is SkippedDrill => "skipped" in r;
