/** What a drill needs from a local topology (replication-target.ts, cluster-target.ts). */
import type { TopologyReport } from "../verify/verify-types.js";
import { DURABILITY_KEYS, durabilityFromConfig, type DurabilityConfig } from "./bounds.js";
import type { Fault, DrillMode } from "../../vocabulary/faults.js";
import type { LoadClient } from "./load.js";
import type { ClientSettings } from "./client-settings.js";
import type { ValkeyPySpec } from "./valkey-py-stream.js";
import type { LoadShard } from "./writers.js";
import type { RollStepTiming } from "../roll/rolling-restart.js";
import type { SentinelEventAt } from "./sentinel-events.js";
import type { Component } from "../metrics/targets.js";
import type { AofAtKill } from "./aof-at-kill.js";
import { withNodeClient } from "./node-client.js";

export interface DrillTimings {
  /** Sentinel down-after-milliseconds / cluster-node-timeout. */
  failureDetectionMs: number;
  /** Sentinel failover-timeout. */
  failoverTimeoutMs: number;
  /** How long a killed member stays down before its "pod" starts again. */
  restartDelayMs: number;
  /** How long a killed zone stays down (its pods Pending under the hard zone spread). */
  zoneDownMs: number;
  /**
   * freeze: how long the primary stays stopped (SIGSTOP → SIGCONT). @default failureDetectionMs + restartDelayMs
   * (freezeHoldMs)
   */
  freezeMs?: number;
  /**
   * crash-restart: how long the SIGKILLed primary stays down before it restarts in place. @default crashRestartDelay()
   */
  crashRestartDelayMs?: number;
  /**
   * partition: how long the primary stays cut off from its peers. @default failureDetectionMs + restartDelayMs
   * (partitionHoldMs)
   */
  partitionMs?: number;
}

/** The crash-restart delay: as given, else half the failure detection time (a restart faster than detection). */
export function crashRestartDelay(t: DrillTimings): number {
  const ms = t.crashRestartDelayMs ?? Math.round(t.failureDetectionMs / 2);
  if (!Number.isInteger(ms) || ms < 0) throw new Error(`crashRestartDelayMs must be a whole number ≥ 0 (got ${ms})`);
  return ms;
}

/** freeze: past failure detection by as long as a killed member stays down. */
export const freezeHoldMs = (t: DrillTimings): number => t.freezeMs ?? t.failureDetectionMs + t.restartDelayMs;

/** partition: past failure detection (and the failover) by as long as a killed member stays down, as freeze. */
export const partitionHoldMs = (t: DrillTimings): number => t.partitionMs ?? t.failureDetectionMs + t.restartDelayMs;

/** What the partition fault measures besides the load's figures (null: not seen). */
export interface PartitionFigures {
  /**
   * ms from the fault until the cut-off primary refused writes (NOREPLICAS fencing or cluster_state:fail), polled every
   * 100 ms.
   */
  oldPrimaryFencedMs: number | null;
  /**
   * ms from the fault until the last of those polls that it answered as still taking writes was SENT: the fence
   * came after this and by oldPrimaryFencedMs at the latest. A poll answered late (a loaded observer) moves
   * oldPrimaryFencedMs later, never this; a fence later than a bound shows as this past the bound.
   */
  oldPrimaryOpenAskedMs: number | null;
  /** ms from the fault until the old primary answered ROLE as a replica after the heal (polled every 250 ms). */
  oldPrimaryDemotedMs: number | null;
  /**
   * Replication: new write-endpoint connections (HAProxy) that landed on the old primary from the
   * Sentinels' +switch-master until it was back as a replica (split-counter.ts); null: no failover seen.
   */
  connectionsToOldPrimaryAfterFailover?: number | null;
}

export interface FaultHandle {
  /** What was done, for the report: e.g. "SIGKILL member-0 (127.0.0.20:40001, primary, zone-a)". */
  description: string;
  /** Resolves once every killed member (and Sentinel) runs again. */
  restored: Promise<void>;
  /**
   * Time (Date.now()) the first surviving node marked a killed one failed; undefined: not (yet) seen or not observable.
   */
  detectedAt: () => number | undefined;
  /** Cluster: the node ids the fault hit (their shards are the affected ones: shard-outage.ts). */
  affectedNodeIds?: readonly string[];
  /** Why detection is not observable for this fault (e.g. nobody survives to see it). */
  detectionNote?: string;
  stopWatching: () => void;
  /** partition: when the cut-off primary was first seen refusing writes (Date.now()); read once the fault is over. */
  fencedAt?: () => number | undefined;
  /** partition: when the last poll the cut-off primary answered as still taking writes was sent (Date.now()). */
  openAskedAt?: () => number | undefined;
  /** partition: when the old primary was first seen as a replica after the heal (Date.now()). */
  demotedAt?: () => number | undefined;
  /** upgrade: the roll's steps and their times (rolling-restart.ts); read once the fault is over. */
  rollSteps?: () => RollStepTiming[];
  /**
   * replication: every event the Sentinels published from the fault on (sentinel-events.ts); read once the fault is
   * over.
   */
  sentinelEvents?: () => readonly SentinelEventAt[];
  /** partition, replication: PartitionFigures.connectionsToOldPrimaryAfterFailover; read once the fault is over. */
  connectionsToOldPrimaryAfterFailover?: () => number | null;
  /** crash-restart: the killed primary's INFO persistence right before the SIGKILL (aof-at-kill.ts); undefined: not
   * read. */
  aofAtKill?: Omit<AofAtKill, "heldWritesEstimate">;
}

/**
 * What a local drill's Prometheus scrapes for one pod: a Valkey member or Sentinel (an exporter is
 * started beside host:port, as the pods run one) or HAProxy's own endpoint (`path` on host:port).
 */
export interface MetricsEndpoint {
  component: Component;
  /** The pod's name (the `pod` label the alerts carry). */
  pod: string;
  host: string;
  port: number;
  /** haproxy: its metrics path. */
  path?: string;
}

export interface DrillTarget {
  mode: DrillMode;
  /** One-line description of the topology. */
  describe: string;
  /**
   * The load's client paths, each a factory: every writer (writers.ts) gets its own fresh client; `settings`: how they
   * follow a failover (client-settings.ts).
   */
  loadClients(commandTimeoutMs: number, settings?: ClientSettings): { client: string; make: () => LoadClient }[];
  /** Cluster: the shards as the load starts, each with a hash tag in it (every shard gets its own writers). */
  loadShards?(): Promise<LoadShard[]>;
  /** Where the valkey-py writer (the second client library, valkey-py-stream.ts) connects, and with which password. */
  valkeyPyTarget?(): ValkeyPySpec;
  inject(fault: Fault): Promise<FaultHandle>;
  /** The primary's durability settings (CONFIG GET), which the fault's loss bound is computed from (bounds.ts). */
  durability(): Promise<DurabilityConfig>;
  verify(): Promise<TopologyReport>;
  /**
   * GET of every key through a fresh client; undefined = missing; a key left out = could not be read (unknown). Never
   * throws for an unreachable node.
   */
  readBack(keys: readonly string[]): Promise<Map<string, string | undefined>>;
  /**
   * Every pod a Prometheus scrapes, as it runs now (`vbench drill --metrics`); the exporters reach the servers with
   * `password`. Absent: the target has no metrics.
   */
  metricsEndpoints?(): { endpoints: MetricsEndpoint[]; password: string };
  stop(): Promise<void>;
}

/**
 * Reads keys in batches through `getMany` (a pipeline per batch): a value, null (missing), or
 * undefined (that key could not be read: left out of the map, unknown). With `tolerant`, a batch
 * that throws is left out whole (unknown) instead of failing the read-back.
 */
export async function readInBatches(
  keys: readonly string[],
  getMany: (batch: string[]) => Promise<(string | null | undefined)[]>,
  tolerant = false,
): Promise<Map<string, string | undefined>> {
  const out = new Map<string, string | undefined>();
  for (let i = 0; i < keys.length; i += 500) {
    const batch = keys.slice(i, i + 500);
    let values: (string | null | undefined)[];
    try {
      values = await getMany(batch);
    } catch (err) {
      if (!tolerant) throw err;
      continue;
    }
    batch.forEach((k, j) => {
      const v = values[j];
      if (v !== undefined) out.set(k, v ?? undefined);
    });
  }
  return out;
}

/** CONFIG GET of the bound's settings on one node (a short-lived connection). */
export function readDurability(host: string, port: number, password: string): Promise<DurabilityConfig> {
  return withNodeClient(host, port, password, async (c) =>
    durabilityFromConfig(((await c.call("CONFIG", "GET", ...DURABILITY_KEYS)) as string[]).map(String)),
  );
}

/** Runs `start` on a new target and returns it; when `start` throws, stops what it started and rethrows. */
export async function startedOrStopped<T extends { stop(): Promise<void> }>(
  target: T,
  start: (t: T) => Promise<void>,
): Promise<T> {
  try {
    await start(target);
  } catch (err) {
    await target.stop();
    throw err;
  }
  return target;
}
