/** What a drill needs from a local topology (replication-target.ts, cluster-target.ts). */
import type { TopologyReport } from "../verify/verify-types.js";
import type { Fault, DrillMode } from "./ledger.js";
import type { LoadClient } from "./load.js";

export interface DrillTimings {
  /** Sentinel down-after-milliseconds / cluster-node-timeout. */
  failureDetectionMs: number;
  /** Sentinel failover-timeout. */
  failoverTimeoutMs: number;
  /** How long a killed member stays down before its "pod" starts again. */
  restartDelayMs: number;
  /** How long a killed zone stays down (its pods Pending under the hard zone spread). */
  zoneDownMs: number;
  /** crash-restart: how long the SIGKILLed primary stays down before it restarts in place. @default crashRestartDelay() */
  crashRestartDelayMs?: number;
}

/** The crash-restart delay: as given, else half the failure detection time (a restart faster than detection). */
export function crashRestartDelay(t: DrillTimings): number {
  const ms = t.crashRestartDelayMs ?? Math.round(t.failureDetectionMs / 2);
  if (!Number.isInteger(ms) || ms < 0) throw new Error(`crashRestartDelayMs must be a whole number ≥ 0 (got ${ms})`);
  return ms;
}

export interface FaultHandle {
  /** What was done, for the report: e.g. "SIGKILL member-0 (127.0.0.20:40001, primary, zone-a)". */
  description: string;
  /** Resolves once every killed member (and Sentinel) runs again. */
  restored: Promise<void>;
  /** Time (Date.now()) the first surviving node marked a killed one failed; undefined: not (yet) seen or not observable. */
  detectedAt: () => number | undefined;
  /** Why detection is not observable for this fault (e.g. nobody survives to see it). */
  detectionNote?: string;
  stopWatching: () => void;
}

export interface DrillTarget {
  mode: DrillMode;
  /** One-line description of the topology. */
  describe: string;
  /** Fresh load clients, one per stream. */
  loadClients(commandTimeoutMs: number): { stream: string; client: LoadClient }[];
  inject(fault: Fault): Promise<FaultHandle>;
  verify(): Promise<TopologyReport>;
  /** GET of every key through a fresh client of the healed topology; undefined = missing. */
  readBack(keys: readonly string[]): Promise<Map<string, string | undefined>>;
  stop(): Promise<void>;
}

/** Reads keys in batches through `get` (a pipeline per batch). */
export async function readInBatches(
  keys: readonly string[],
  getMany: (batch: string[]) => Promise<(string | null)[]>,
): Promise<Map<string, string | undefined>> {
  const out = new Map<string, string | undefined>();
  for (let i = 0; i < keys.length; i += 500) {
    const batch = keys.slice(i, i + 500);
    const values = await getMany(batch);
    batch.forEach((k, j) => out.set(k, values[j] ?? undefined));
  }
  return out;
}

/** Runs `start` on a new target and returns it; when `start` throws, stops what it started and rethrows. */
export async function startedOrStopped<T extends { stop(): Promise<void> }>(target: T, start: (t: T) => Promise<void>): Promise<T> {
  try {
    await start(target);
  } catch (err) {
    await target.stop();
    throw err;
  }
  return target;
}
