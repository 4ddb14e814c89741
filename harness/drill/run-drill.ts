/**
 * One drill on a local topology: start it, run the write load, inject the fault, wait until every
 * killed member runs again and the verifier passes (zones included), keep the load running a
 * little longer, read every acknowledged key back (also when not healed: unknown where no node
 * answers), and compute the figures (ledger.ts) against the fault's promised bound (bounds.ts).
 * A fault this machine cannot inject (partition without root or a working iptables) is skipped
 * before anything starts: a SkippedDrill naming why, never ok.
 */
import { randomBytes } from "node:crypto";
import { resolvePreviousServer } from "../../benchmarks/run/binaries.js";
import { sleep } from "../../core/util/poll-until.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import { ClusterTarget } from "./cluster-target.js";
import { ackedLossBound, type DurabilityConfig } from "../../core/drill/bounds.js";
import {
  drillFailures,
  drillOk,
  loadFigures,
  roundLatency,
  type LoadFigures,
  type WriteRecord,
} from "../../core/drill/ledger.js";
import { type DrillMode, type Fault } from "../../vocabulary/faults.js";
import { loadStreams, type WriteStream } from "../../core/drill/load.js";
import { DEFAULT_CLIENT_SETTINGS, type ClientSettings } from "../../core/drill/client-settings.js";
import { ValkeyPyStream, valkeyPyPython, valkeyPyStreams } from "../../core/drill/valkey-py-stream.js";
import { partitionCapability, type CapabilityProbe } from "./partition.js";
import { ReplicationTarget } from "./replication-target.js";
import type { DrillResult, DrillRun } from "../../core/drill/drill-result.js";
import {
  failoverSteps,
  renderFailoverSteps,
  sentinelEventRows,
  type FailoverSteps,
  type SentinelEventRow,
} from "../../core/drill/sentinel-events.js";
import {
  crashRestartDelay,
  freezeHoldMs,
  partitionHoldMs,
  type DrillTarget,
  type DrillTimings,
  type FaultHandle,
  type PartitionFigures,
} from "../../core/drill/target.js";
import type { LoadShard } from "../../core/drill/writers.js";
import { alertsSeen, renderAlertsSeen, type AlertSeen } from "../../core/drill/alerts-seen.js";
import type { LiveMetrics } from "../../core/drill/live-metrics.js";
import { aofAtKill, renderAofAtKill, type AofAtKill } from "../../core/drill/aof-at-kill.js";
import { startAlertWatch, type AlertWatch } from "./alert-watch.js";

export interface DrillOptions extends DrillTimings {
  mode: DrillMode;
  fault: Fault;
  /** Writes per second per stream. @default 100 */
  rate: number;
  /** Minimum load duration in ms (fault included); the load always runs until recovery + tailMs. */
  durationMs: number;
  /** Load before the fault; the "before" latency window is the last 10 s of it (or all of it). */
  warmupMs: number;
  /** Load kept after the verifier passes. @default 2000 */
  tailMs?: number;
  /** Give up waiting for the verifier after this long from the fault. @default 120000 */
  recoveryTimeoutMs?: number;
  /** WAIT 1 <ms>; 0 disables WAIT on purpose (no write is then confirmed). @default 500 */
  waitTimeoutMs: number;
  /** Bound on every command; a write is acknowledged or failed within it. @default 1000 */
  commandTimeoutMs?: number;
  replicas: number;
  primaries: number;
  replicasPerPrimary: number;
  zones: readonly string[];
  /** Test hook: runs on the healthy topology right before the fault (with the load running). */
  beforeFault?: (target: DrillTarget) => Promise<void>;
  /** Test hook: runs right after the fault was injected. */
  afterFault?: (target: DrillTarget) => Promise<void>;
  onStep?: (line: string) => void;
  /** Test hook: what the partition fault's capability check sees (uid, environment). */
  capabilityProbe?: CapabilityProbe;
  /** upgrade: the older valkey-server the topology starts on before the roll. @default $VALKEY_SERVER_PREVIOUS */
  upgradeFrom?: string;
  /** How the load's clients follow a failover (client-settings.ts). @default "recommended" */
  clientSettings?: ClientSettings;
  /**
   * Run the valkey-py writer (the second client library, valkey-py-stream.ts) beside the ioredis streams. @default true
   */
  valkeyPy?: boolean;
  /**
   * Live metrics: exporters and a real Prometheus with the mode's alert rules watch the drill; the row records the
   * alerts that fired (alert-watch.ts). @default false
   */
  metrics?: boolean;
  /** With metrics: how long after the load stops to wait for the alerts to resolve. @default 60000 */
  alertSettleMs?: number;
}

/** Why `o.fault` cannot run here, or undefined. */
export function skipReason(o: Pick<DrillOptions, "fault" | "capabilityProbe" | "upgradeFrom">): string | undefined {
  if (o.fault === "upgrade") {
    try {
      resolvePreviousServer(o.upgradeFrom);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  }
  if (o.fault !== "partition") return undefined;
  const cap = partitionCapability(o.capabilityProbe);
  return cap.ok ? undefined : cap.reason;
}

export async function startTarget(o: DrillOptions, password: string): Promise<DrillTarget> {
  const serverPath = o.fault === "upgrade" ? resolvePreviousServer(o.upgradeFrom).path : undefined;
  return o.mode === "cluster"
    ? ClusterTarget.start({ ...o, password, serverPath })
    : ReplicationTarget.start({ ...o, password, serverPath });
}

export async function runDrill(o: DrillOptions): Promise<DrillRun> {
  const step = o.onStep ?? (() => undefined);
  const reason = skipReason(o);
  if (reason !== undefined) {
    step(`skipped: the ${o.fault} fault cannot run here: ${reason}`);
    return { mode: o.mode, fault: o.fault, ok: false, skipped: { reason } };
  }
  // The second client library's interpreter, checked before anything starts (a clear error, no servers left behind).
  if (o.valkeyPy ?? true) valkeyPyPython();
  const password = randomBytes(12).toString("hex");
  step(`starting the ${o.mode} topology`);
  const target = await startTarget(o, password);
  try {
    return await drillOn(target, o);
  } finally {
    await target.stop();
  }
}

type LoadStream = WriteStream | ValkeyPyStream;
type AfterReport = TopologyReport | { error: string };

/** The drill's load, built before it starts: the ioredis streams (per shard in cluster mode) and the valkey-py one. */
interface DrillLoad {
  streams: LoadStream[];
  pyStreams: ValkeyPyStream[];
  shards: LoadShard[];
}

/** The fault as injected: its handle, when (Date.now()) and how long inject() took. */
interface InjectedFault {
  handle: FaultHandle;
  faultAt: number;
  injectMs: number;
}

/** How the topology came back: the verifier's last report, and when it passed (undefined: not healed). */
interface Recovery {
  after: AfterReport;
  recoveredAt: number | undefined;
}

const whole = (v: number): number => Math.round(v);

/** The verifier must pass on the topology before the fault. */
async function verifyBeforeFault(target: DrillTarget, o: DrillOptions): Promise<void> {
  const before = await target.verify();
  if (!before.ok)
    throw new Error(
      `the ${o.mode} topology failed verification before the fault: ${before.failures.map((f) => f.code).join(", ")}`,
    );
}

/** The load's streams, not started yet: the ioredis writers (loadStreams) and the valkey-py writer. */
async function buildLoad(
  target: DrillTarget,
  o: DrillOptions,
  commandTimeoutMs: number,
  settings: ClientSettings,
): Promise<DrillLoad> {
  const prefix = `drill-${Date.now().toString(36)}`;
  // Before any client connects: a throw later would leave their timers running.
  if (o.valkeyPy ?? true) valkeyPyPython();
  const pyStreams = valkeyPyStreams(target.valkeyPyTarget?.(), {
    prefix,
    rate: o.rate,
    commandTimeoutMs,
    settings,
    enabled: o.valkeyPy ?? true,
  });
  const shards = (await target.loadShards?.()) ?? [];
  const streams = [
    ...loadStreams(target.loadClients(commandTimeoutMs, settings), shards, {
      prefix,
      rate: o.rate,
      waitTimeoutMs: o.waitTimeoutMs,
      deadlineMs: commandTimeoutMs,
    }),
    ...pyStreams,
  ];
  return { streams, pyStreams, shards };
}

/** Starts the load, lets it warm up, and injects the fault (the test hooks around it). */
async function startLoadAndInject(
  target: DrillTarget,
  o: DrillOptions,
  streams: readonly LoadStream[],
  settings: ClientSettings,
  step: (line: string) => void,
): Promise<InjectedFault> {
  streams.forEach((s) => s.start());
  // The warm-up counts from every writer's client being built (Python starts in seconds on a starved machine).
  await Promise.all(streams.filter((s) => s instanceof ValkeyPyStream).map((s) => s.ready()));
  step(
    `${target.describe}; load: ${streams.length} stream(s) × ${o.rate} writes/s (${settings} client settings), warm-up ${o.warmupMs} ms`,
  );
  await sleep(o.warmupMs);
  await o.beforeFault?.(target);
  const faultAt = Date.now();
  const handle = await target.inject(o.fault);
  const injectMs = Date.now() - faultAt;
  step(`fault: ${handle.description}`);
  await o.afterFault?.(target);
  return { handle, faultAt, injectMs };
}

/** Waits until every killed member runs again and the verifier passes (or the recovery timeout), then says which. */
async function awaitRecovery(
  target: DrillTarget,
  o: DrillOptions,
  { handle, faultAt }: InjectedFault,
  step: (line: string) => void,
): Promise<Recovery> {
  let after: AfterReport = { error: "not verified yet" };
  let recoveredAt: number | undefined;
  const deadline = faultAt + (o.recoveryTimeoutMs ?? 120_000);
  let restoredError: Error | undefined;
  let restoredDone = false;
  handle.restored.then(
    () => (restoredDone = true),
    (e: unknown) => ((restoredError = e as Error), (restoredDone = true)),
  );
  while (Date.now() < deadline) {
    if (restoredError !== undefined) {
      after = { error: `a member did not come back: ${restoredError.message}` };
      break;
    }
    if (restoredDone) {
      try {
        after = await target.verify();
        if (after.ok) {
          recoveredAt = Date.now();
          break;
        }
      } catch (e) {
        after = { error: (e as Error).message };
      }
    }
    await sleep(250);
  }
  handle.stopWatching();
  step(
    recoveredAt === undefined
      ? `not healed: ${"error" in after ? after.error : after.failures.map((f) => f.code).join(", ")}`
      : `verifier passes ${recoveredAt - faultAt} ms after the fault`,
  );
  return { after, recoveredAt };
}

/**
 * Keeps the load running for durationMs from its start and tailMs past recovery, then stops it; returns when it
 * stopped.
 */
async function finishLoad(
  o: DrillOptions,
  loadStart: number,
  recoveredAt: number | undefined,
  pyStreams: readonly ValkeyPyStream[],
  stopLoad: () => Promise<void>,
): Promise<number> {
  const until = Math.max(loadStart + o.durationMs, (recoveredAt ?? Date.now()) + (o.tailMs ?? 2000));
  await sleep(Math.max(0, until - Date.now()));
  const loadStop = Date.now();
  await stopLoad();
  const broken = pyStreams.find((s) => s.failure !== undefined)?.failure;
  if (broken !== undefined) throw broken;
  return loadStop;
}

/**
 * Every acknowledged key read back; not healed: what can be read is read, keys no node answers for are unknown, never
 * lost.
 */
async function readAcknowledged(
  target: DrillTarget,
  records: readonly WriteRecord[],
  step: (line: string) => void,
): Promise<Map<string, string | undefined>> {
  step(`reading back ${records.filter((r) => r.ok).length} acknowledged keys`);
  return target
    .readBack(records.filter((r) => r.ok).map((r) => r.key))
    .catch(() => new Map<string, string | undefined>());
}

/** The load's figures (ledger.ts) against the fault's loss bound, the shards the fault hit named. */
function figuresOf(
  o: DrillOptions,
  load: DrillLoad,
  fault: InjectedFault,
  durability: DurabilityConfig,
  window: { records: WriteRecord[]; readBack: Map<string, string | undefined>; loadStart: number; loadStop: number },
): LoadFigures {
  const { handle, faultAt, injectMs } = fault;
  const { records, readBack, loadStart, loadStop } = window;
  const bound = ackedLossBound(o.fault, injectMs, durability);
  const input = { records, readBack, faultAt, loadStart, loadStop, beforeMs: 10_000, bound };
  const hit = new Set(handle.affectedNodeIds ?? []);
  const affectedShards = load.shards.filter((sh) => sh.nodeIds.some((id) => hit.has(id))).map((sh) => sh.label);
  return loadFigures(
    load.streams.map((s) => s.stream),
    { ...input, affectedShards },
  );
}

/** partition: when the cut-off primary was fenced and demoted (ms from the fault), and who still wrote to it. */
function partitionFiguresOf(fault: Fault, handle: FaultHandle, faultAt: number): Partial<PartitionFigures> {
  const sinceFault = (at: number | undefined): number | null => (at === undefined ? null : whole(at - faultAt));
  return fault !== "partition"
    ? {}
    : {
        oldPrimaryFencedMs: sinceFault(handle.fencedAt?.()),
        oldPrimaryOpenAskedMs: sinceFault(handle.openAskedAt?.()),
        oldPrimaryDemotedMs: sinceFault(handle.demotedAt?.()),
        ...(handle.connectionsToOldPrimaryAfterFailover === undefined
          ? {}
          : { connectionsToOldPrimaryAfterFailover: handle.connectionsToOldPrimaryAfterFailover() }),
      };
}

/**
 * replication: the Sentinels' events (ms from the fault) and the failover steps in them, printed; undefined elsewhere.
 */
function sentinelFiguresOf(
  handle: FaultHandle,
  faultAt: number,
  step: (line: string) => void,
): { events: SentinelEventRow[] | undefined; steps: FailoverSteps | undefined } {
  const events = handle.sentinelEvents === undefined ? undefined : sentinelEventRows(handle.sentinelEvents(), faultAt);
  const steps = events === undefined ? undefined : failoverSteps(events);
  if (steps !== undefined) step(`Sentinels: ${renderFailoverSteps(steps)}`);
  return { events, steps };
}

/** Exporters and Prometheus over the target, the rules at the drill's clocks (scraped every second). */
async function watchAlerts(target: DrillTarget, o: DrillOptions, d: DurabilityConfig): Promise<AlertWatch> {
  o.onStep?.("metrics: exporters and Prometheus with the alert rules");
  return startAlertWatch(target, {
    mode: o.mode,
    maxLagSeconds: d.minReplicasMaxLag,
    downAfterSeconds: Math.ceil(o.failureDetectionMs / 1000),
    nodeTimeoutSeconds: Math.ceil((d.clusterNodeTimeoutMs ?? 15_000) / 1000),
    scrapeIntervalSeconds: 1,
  });
}

/** Waits for the alerts to resolve (bounded), then the rows, printed. */
async function alertsOf(
  watch: AlertWatch,
  o: DrillOptions,
  faultAt: number,
  step: (line: string) => void,
): Promise<AlertSeen[]> {
  await watch.settle(o.alertSettleMs ?? 60_000);
  const rows = alertsSeen(watch.snapshots, faultAt);
  step(`alerts: ${renderAlertsSeen(rows)}`);
  return rows;
}

/** The timings the drill ran at, the fault's own hold or delay included. */
function drillTimingsOf(o: DrillOptions): DrillTimings {
  return {
    failureDetectionMs: o.failureDetectionMs,
    failoverTimeoutMs: o.failoverTimeoutMs,
    restartDelayMs: o.restartDelayMs,
    zoneDownMs: o.zoneDownMs,
    ...(o.fault === "freeze" ? { freezeMs: freezeHoldMs(o) } : {}),
    ...(o.fault === "crash-restart" ? { crashRestartDelayMs: crashRestartDelay(o) } : {}),
    ...(o.fault === "partition" ? { partitionMs: partitionHoldMs(o) } : {}),
  };
}

/** What the drill measured, put together as its result. */
interface DrillParts {
  settings: ClientSettings;
  durability: DurabilityConfig;
  fault: InjectedFault;
  recovery: Recovery;
  figures: LoadFigures;
  records: readonly WriteRecord[];
  detectedAt: number | undefined;
  partitionFigures: Partial<PartitionFigures>;
  sentinel: { events: SentinelEventRow[] | undefined; steps: FailoverSteps | undefined };
  alerts: AlertSeen[] | undefined;
  liveMetrics: LiveMetrics | undefined;
  aofAtKill: AofAtKill | undefined;
}

function drillResult(target: DrillTarget, o: DrillOptions, p: DrillParts): DrillResult {
  const { handle, faultAt } = p.fault;
  const { after, recoveredAt } = p.recovery;
  const { figures, detectedAt } = p;
  const { events, steps } = p.sentinel;
  const healed = recoveredAt !== undefined;
  return {
    mode: o.mode,
    fault: o.fault,
    ok: drillOk(healed, figures),
    failures: drillFailures(healed, figures),
    healed,
    topology: target.describe,
    faultDescription: handle.description,
    ...figures,
    recoveryMs: healed ? whole(recoveredAt - faultAt) : null,
    detectionMs: detectedAt === undefined ? null : whole(detectedAt - faultAt),
    detectionNote: handle.detectionNote ?? (detectedAt === undefined ? "no failure mark seen" : undefined),
    rate: o.rate,
    waitTimeoutMs: o.waitTimeoutMs,
    clientSettings: p.settings,
    ...p.partitionFigures,
    ...(handle.rollSteps === undefined ? {} : { rollSteps: handle.rollSteps() }),
    ...(events === undefined ? {} : { sentinelEvents: events, failoverSteps: steps }),
    ...(p.alerts === undefined ? {} : { alerts: p.alerts }),
    ...(p.liveMetrics === undefined ? {} : { liveMetrics: p.liveMetrics }),
    ...(p.aofAtKill === undefined ? {} : { aofAtKill: p.aofAtKill }),
    timings: drillTimingsOf(o),
    durability: p.durability,
    after,
    timeline: p.records.map((r) => ({
      stream: r.stream,
      t: whole(r.sentAt - faultAt),
      latencyMs: r.ok ? roundLatency(r.doneAt - r.sentAt) : null,
    })),
  };
}

export async function drillOn(target: DrillTarget, o: DrillOptions): Promise<DrillResult> {
  const step = o.onStep ?? (() => undefined);
  await verifyBeforeFault(target, o);
  const durability = await target.durability();
  const commandTimeoutMs = o.commandTimeoutMs ?? 1000;
  const settings = o.clientSettings ?? DEFAULT_CLIENT_SETTINGS;
  const watch = o.metrics === true ? await watchAlerts(target, o, durability) : undefined;
  const load = await buildLoad(target, o, commandTimeoutMs, settings).catch(async (err: unknown) => {
    await watch?.stop();
    throw err;
  });
  const { streams } = load;
  const loadStart = Date.now();
  let stopped = false;
  const stopLoad = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await Promise.all(streams.map((s) => s.stop()));
  };
  try {
    const fault = await startLoadAndInject(target, o, streams, settings, step);
    const recovery = await awaitRecovery(target, o, fault, step);
    const loadStop = await finishLoad(o, loadStart, recovery.recoveredAt, load.pyStreams, stopLoad);
    const records: WriteRecord[] = streams.flatMap((s) => s.records);
    const readBack = await readAcknowledged(target, records, step);
    const figures = figuresOf(o, load, fault, durability, { records, readBack, loadStart, loadStop });
    const detectedAt = fault.handle.detectedAt();
    const partitionFigures = partitionFiguresOf(o.fault, fault.handle, fault.faultAt);
    const sentinel = sentinelFiguresOf(fault.handle, fault.faultAt, step);
    const aof = fault.handle.aofAtKill === undefined ? undefined : aofAtKill(fault.handle.aofAtKill, records);
    if (aof !== undefined)
      step(`${renderAofAtKill(aof)}; the ledger: ${figures.lostAckedWrites} acknowledged writes lost`);
    const alerts = watch === undefined ? undefined : await alertsOf(watch, o, fault.faultAt, step);
    const liveMetrics = watch === undefined ? undefined : await watch.liveOps(loadStart, fault.faultAt);
    return drillResult(target, o, {
      settings,
      durability,
      fault,
      recovery,
      figures,
      records,
      detectedAt,
      partitionFigures,
      sentinel,
      alerts,
      liveMetrics,
      aofAtKill: aof,
    });
  } finally {
    await stopLoad();
    await watch?.stop();
  }
}
