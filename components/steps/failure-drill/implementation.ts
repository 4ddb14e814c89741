/**
 * The FailureDrill resource's implementation (loaded by its dynamic-provider shell, and called
 * directly by tests with a fake DrillKubeApi). Per fault, in order:
 * 1. verify the topology is healthy (the TopologyCheck's verifier, zones included);
 * 2. create the load ConfigMap + Job (load-job.ts) and wait for its pod to run and print its
 *    writing line (every stream acknowledged, record-lines.ts);
 * 3. wait `preFaultS`, verify again, start watching the survivors for failure marks (detection.ts), inject the
 *    fault (faults.ts) by half of the rest of `loadS` after the writing line (else, or when the writing line named a
 *    stream without an acknowledgement, once more with a second load: faultInLoad), and poll until every deleted
 *    pod runs again and the verifier passes: recoveryMs (and detectionMs, fault → first mark). Not within
 *    `timeoutS`: the drill fails `pulumi up`, naming the fault (the topology did not heal);
 * 4. wait for the Job, parse its pod's log (record-lines.ts), read every acknowledged key back
 *    through the connector, and compute the local drills' figures (ledger.ts);
 * 5. delete the Job and ConfigMap (also when anything above failed).
 * Lost writes do not fail `pulumi up`: the row says `ok: false` (a finding, shown) when a
 * WAIT-confirmed write was lost or acknowledged loss exceeds the fault's promised bound
 * (bounds.ts, from the primary's CONFIG GET before the fault).
 * Clocks: the fault time is this process's clock (freeze, partition: the agent's, on the victim's node), the write
 * times the load pod's (see CLOCK_NOTE).
 */
import { randomBytes } from "node:crypto";
import {
  ackedLossBound,
  firstFailureAfterMs,
  type DurabilityConfig,
  type LossWindow,
} from "../../../core/drill/bounds.js";
import { drillFailures, drillOk, loadFigures, nodeCandidates, type WriteRecord } from "../../../core/drill/ledger.js";
import { heldFaultS, type Fault } from "../../../vocabulary/faults.js";
import { parseRecordLines, writingLineSilent } from "../../../core/drill/record-lines.js";
import { failoverSteps, sentinelEventRows, type SentinelEventRow } from "../../../core/drill/sentinel-events.js";
import { renderDrillsCsv } from "../../../core/drill/drill-table.js";
import { alertsPerDrill } from "../../../core/drill/alert-history.js";
import { dynamicProtocol } from "../kit/protocol.js";
import type { TopologyCheckReport } from "../../../core/verify/check-report.js";
import { injectFault, notBackYet, podOfAddress, type InjectedFault } from "./faults.js";
import { labelRanges, shardLabel } from "../../../core/drill/writers.js";
import { UNSUPPORTED_DEPLOYED_FAULTS } from "../../../vocabulary/faults.js";
import type { DrillKubeApi, DrillPod } from "./kube-api.js";
import { clusterRoleRows, type ClusterRoleRow, type DetectionWatch } from "./detection.js";
import { buildDrillLoadJob, DRILL_LOAD_CONTAINER, DRILL_RUN_LABEL } from "./load-job.js";
import { drillStep, type FailureDrillInputs, type FailureDrillOutputs } from "./declaration.js";

export type { FailureDrillInputs, FailureDrillOutputs } from "./declaration.js";
export type { DeployedDrill, DrillDeps } from "./types.js";
import type { DeployedDrill, DrillDeps } from "./types.js";

export const CLOCK_NOTE =
  "The fault time is the clock of the process running `pulumi up` (freeze and partition: the fault agent's, on the primary's node, when the fault took effect); write times are the load pod's clock. Latencies and the write outage are differences on the pod's clock alone; the split of writes into 'before' and 'during' the fault assumes both clocks agree (NTP), off by their skew. recoveryMs and detectionMs are on the step's clock alone (detection: when the step received the mark, through the connector).";
/** How long a failing verdict before a fault is asked again. */
export const PRE_FAULT_SETTLE_MS = 60_000;
export const DETECTION_NOTE = "not watched (no detection watcher)";

/** Why a fault's detection cannot be observed (as in the local drills); undefined when it can. */
export function detectionUnobservable(mode: "cluster" | "replication", fault: Fault): string | undefined {
  if (fault === "switchover") return "planned: nothing to detect";
  if (fault === "crash-restart")
    return "restarted in place, faster than failure detection: nothing to detect when it works";
  if (fault === "all" && mode === "cluster") return "every member is down: no survivor to mark a failure";
  return undefined;
}

export class DrillError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DrillError";
  }
}

const realSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function tail(log: string, lines = 20): string {
  const t = log.trimEnd().split("\n").slice(-lines).join("\n");
  return t === "" ? "(empty log)" : t;
}

function failureText(e: unknown): string {
  return (e as Error).message.split("\n")[0] ?? String(e);
}

/** The load pod of a run (the newest, if the Job ever made two). */
async function loadPod(api: DrillKubeApi, namespace: string, runKey: string): Promise<DrillPod | undefined> {
  return (await api.listPods(namespace, `${DRILL_RUN_LABEL}=${runKey}`)).at(-1);
}

async function logTail(api: DrillKubeApi, namespace: string, pod: string): Promise<string> {
  try {
    return tail(await api.podLog(namespace, pod, DRILL_LOAD_CONTAINER));
  } catch (err) {
    return `(its log could not be read: ${(err as Error).message})`;
  }
}

/**
 * The verifier's report of the healthy topology before a fault. Right after the previous drill the
 * Sentinels may still be settling: a failing verdict is asked again for up to PRE_FAULT_SETTLE_MS.
 */
async function healthyBefore(
  i: FailureDrillInputs,
  fault: Fault,
  deps: DrillDeps,
  sleep: (ms: number) => Promise<void>,
  now: () => number,
): Promise<TopologyCheckReport> {
  const deadline = now() + Math.min(PRE_FAULT_SETTLE_MS, i.timeoutS * 1000);
  for (;;) {
    try {
      return await deps.verify();
    } catch (e) {
      if (now() >= deadline)
        throw new DrillError(
          `the ${fault} drill did not start: the topology fails verification before the fault: ${failureText(e)}`,
        );
    }
    await sleep(i.pollMs);
  }
}

/** Faults that delete pods through the API: their containers die when the kubelet gets to them. */
const DELETES_PODS: ReadonlySet<Fault> = new Set<Fault>(["primary", "switchover", "all", "zone", "lost-volume"]);

/**
 * `all`: every member is deleted, and the kubelet kills them one after another, seconds apart on a
 * busy node (seen on real pods: the first write failed 1.6 s after the API call, the last member
 * acknowledged writes until 5.8 s). The last of them stopped serving where the total write outage
 * begins: the last acknowledgement before the longest gap between acknowledgements after the fault.
 */
function lastServedBeforeOutageMs(records: readonly WriteRecord[], faultAt: number): number | null {
  const acks = records
    .filter((r) => r.ok && r.doneAt >= faultAt)
    .map((r) => r.doneAt)
    .sort((a, b) => a - b);
  let best: { gap: number; from: number } | null = null;
  for (let n = 1; n < acks.length; n++) {
    const gap = (acks[n] as number) - (acks[n - 1] as number);
    if (best === null || gap > best.gap) best = { gap, from: acks[n - 1] as number };
  }
  return best === null ? null : Math.ceil(best.from - faultAt);
}

/**
 * The last write a deleted pod itself acknowledged after the fault, as ms from the fault (null:
 * none): on each stream, an acknowledgement by one of `killed` (a record's node: its IP, or its
 * DNS name as a cluster announces it) before that stream's first failed write. The kubelet kills
 * a pod's connections one at a time: seen on real pods, the endpoint's write failed at +1.24 s
 * while the Sentinel client's connection to the same primary was acknowledged at +1.25 s, and
 * that write was lost (its replica never had it); in cluster mode the killed primary's no-WAIT
 * stream was acknowledged until +3.4 s while another stream failed at +2.02 s.
 */
function lastAckByKilledMs(
  records: readonly WriteRecord[],
  killed: readonly DrillPod[],
  faultAt: number,
): number | null {
  if (killed.length === 0) return null;
  const firstFail = new Map<string, number>();
  for (const r of records)
    if (!r.ok && r.doneAt >= faultAt && r.doneAt < (firstFail.get(r.stream) ?? Infinity))
      firstFail.set(r.stream, r.doneAt);
  let last: number | null = null;
  for (const r of records) {
    const failAt = firstFail.get(r.stream);
    if (!r.ok || r.doneAt < faultAt || failAt === undefined || r.doneAt > failAt || !ackedBy(r.node, killed)) continue;
    if (last === null || r.doneAt > last) last = r.doneAt;
  }
  return last === null ? null : Math.ceil(last - faultAt);
}

/**
 * A record's node (HOST:PORT; a cluster node id is not an address) is one of `pods`. A cluster
 * `SENT→AT` record counts only when both are: which one answered is not known, and a pod that
 * may not have answered must not stretch the bound.
 */
export function ackedBy(node: string | undefined, pods: readonly DrillPod[]): boolean {
  if (node === undefined) return false;
  return nodeCandidates(node).every((n) => /:\d+$/.test(n) && podOfAddress(n, pods) !== undefined);
}

/**
 * The fault's promised window (bounds.ts), ending where the pods really stopped serving (each end
 * rounded UP to the whole ms: seen on real pods, the last write a deleted pod acknowledged came at
 * +1844.24 ms, a window rounded to +1844 left it and its neighbour outside, "lost outside the
 * bound"): for
 * faults that delete pods, at the first write that failed after the fault when that is later than
 * the API call's return (firstFailureAfterMs), or at the last write a deleted pod (`killed`)
 * acknowledged when that is later; for `all`, at the last member's last acknowledgement before
 * the total outage when that is later still.
 */
export function deployedLossBound(
  fault: Fault,
  injectMs: number,
  c: DurabilityConfig,
  records: readonly WriteRecord[],
  faultAt: number,
  killed: readonly DrillPod[] = [],
): LossWindow {
  const first = DELETES_PODS.has(fault) ? firstFailureAfterMs(records, faultAt) : null;
  const last = fault === "all" && first !== null ? lastServedBeforeOutageMs(records, faultAt) : null;
  const byKilled = first !== null ? lastAckByKilledMs(records, killed, faultAt) : null;
  const died = Math.max(first ?? -Infinity, last ?? -Infinity, byKilled ?? -Infinity);
  if (first === null || died <= injectMs) return ackedLossBound(fault, injectMs, c);
  const w = ackedLossBound(fault, died, c);
  const at = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
  const where =
    died === first
      ? `the fault ends at the first failed write, ${at(died)} after the API call`
      : died === last
        ? `the fault ends where the last member stopped acknowledging (the total outage begins), ${at(died)} after the API call; the first write failed at ${at(first)}`
        : `the fault ends at the last write a deleted pod acknowledged, ${at(died)} after the API call; the first write failed at ${at(first)}`;
  return { ...w, reason: `${w.reason}; ${where} (the kubelet kills after it returns)` };
}

/**
 * Cluster: the shards (labelled by their slot ranges, as the load's streams are) whose primary the fault deleted,
 * restarted or held.
 */
export function affectedShards(
  healthy: TopologyCheckReport,
  members: readonly DrillPod[],
  hit: readonly DrillPod[],
): string[] {
  const names = new Set(hit.map((p) => p.name));
  return healthy.shards.flatMap((sh) => {
    const pod = podOfAddress(sh.primary.address, members);
    if (pod === undefined || !names.has(pod.name) || sh.primary.slotRanges.length === 0) return [];
    return [shardLabel(labelRanges(sh.primary.slotRanges.join(",")))];
  });
}

/** What one drill's steps share: its inputs and fault, the outside world, and its load's run key and Job name. */
interface DrillRun {
  i: FailureDrillInputs;
  fault: Fault;
  deps: DrillDeps;
  api: DrillKubeApi;
  ns: string;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
  runKey: string;
  /** The load Job's (and its ConfigMap's) name. */
  name: string;
}

/** The load's ConfigMap and Job (load-job.ts), with the bundled load script. */
async function loadManifests(run: DrillRun): Promise<ReturnType<typeof buildDrillLoadJob>> {
  const { i, fault, runKey } = run;
  const t = i.loadTarget;
  return buildDrillLoadJob({
    namespace: run.ns,
    name: run.name,
    runKey,
    mode: i.mode,
    image: i.image,
    target: { host: t.host, port: t.port, ...(t.sentinel === undefined ? {} : { sentinel: t.sentinel }) },
    rate: i.rate,
    loadS: i.loadS,
    keyPrefix: `drill:${runKey}:${fault}`,
    waitTimeoutMs: i.waitTimeoutMs,
    secretName: i.secretName,
    passwordKey: i.passwordKey,
    placement: i.placement,
    script: await run.deps.loadScript(),
  });
}

/** 2. The load pod runs and has printed its writing line; its name. */
async function loadPodWriting(run: DrillRun): Promise<{ podName: string; writingAt: number; silent: string[] }> {
  const { i, fault, api, ns, sleep, now } = run;
  const startBy = now() + i.timeoutS * 1000;
  let pod = await loadPod(api, ns, run.runKey);
  while (pod?.phase !== "Running") {
    if (pod !== undefined && (pod.phase === "Failed" || pod.phase === "Succeeded")) {
      throw new DrillError(
        `the ${fault} drill's load pod ${pod.name} ended (${pod.phase}) before the fault: ${await logTail(api, ns, pod.name)}`,
      );
    }
    if (now() >= startBy)
      throw new DrillError(
        `the ${fault} drill's load pod is not Running after ${i.timeoutS} s (${pod?.phase ?? "no pod"})`,
      );
    await sleep(1000);
    pod = await loadPod(api, ns, run.runKey);
  }
  const podName = pod.name;
  // Running is not writing: on a busy node the load's first writes come seconds later, and a
  // fault before them leaves nothing to compare with. Its writing line is the cue.
  for (;;) {
    const silent = writingLineSilent(await api.podLog(ns, podName, DRILL_LOAD_CONTAINER).catch(() => ""));
    if (silent !== undefined) return { podName, writingAt: now(), silent };
    if (now() >= startBy)
      throw new DrillError(
        `the ${fault} drill's load pod ${podName} has not started writing after ${i.timeoutS} s: ${await logTail(api, ns, podName)}`,
      );
    await sleep(1000);
  }
}

/**
 * The latest time the fault may come after the load's writing line: preFaultS, plus half of what the load writes for
 * after it (loadS − preFaultS), so that the fault and what follows it fall inside the load. The pre-fault verification
 * and the watch's start take longer on a busy cluster (on real pods a replication `all` drill was injected after its
 * load had ended, 2026-12-02).
 */
const latestFaultAt = (i: FailureDrillInputs, writingAt: number): number =>
  writingAt + (i.preFaultS + Math.max(0, i.loadS - i.preFaultS) / 2) * 1000;

/** A load writing on every stream, the topology verified right before the fault, and when the fault must come by. */
interface LoadAtFault {
  run: DrillRun;
  podName: string;
  atFault: TopologyCheckReport;
  injectBy: number;
  silent: string[];
}

/** 2. The load Job created and writing, preFaultS, then the topology verified right before the fault. */
async function loadAtFault(run: DrillRun): Promise<LoadAtFault> {
  const { i, fault, deps, sleep, now } = run;
  await run.api.createLoad(await loadManifests(run));
  const { podName, writingAt, silent } = await loadPodWriting(run);
  // The target comes from a report taken right before the fault: while the load pod started, a heal or the AZ
  // failback may have moved a primary role.
  await sleep(i.preFaultS * 1000);
  const atFault = await healthyBefore(i, fault, deps, sleep, now);
  return { run, podName, atFault, injectBy: latestFaultAt(i, writingAt), silent };
}

/**
 * The watch of a drill: absent when it could not start (why), or in cluster `all` (no member survives to ask). Where
 * detection is unobservable it still runs for its account of the fault (the Sentinels' events, the cluster's roles),
 * and its marks are not reported as a detection.
 */
interface DetectionWatching {
  watch: DetectionWatch | undefined;
  unobservable: string | undefined;
  watchError: string | undefined;
}

async function watchDetection(
  run: DrillRun,
  members: readonly DrillPod[],
  sentinels: readonly DrillPod[],
): Promise<DetectionWatching> {
  const unobservable = detectionUnobservable(run.i.mode, run.fault);
  let watchError: string | undefined;
  const watch =
    run.i.mode === "replication" || run.fault !== "all"
      ? await run.deps.watchDetection?.(members, sentinels).catch((e: unknown) => {
          watchError = `not watched: ${failureText(e)}`;
          return undefined;
        })
      : undefined;
  return { watch, unobservable, watchError };
}

/** The fault as injected, with the pods it hit and when it took effect. */
interface FaultInjected extends DetectionWatching {
  /** The member pods as listed right before the fault. */
  members: DrillPod[];
  injected: InjectedFault;
  faultAt: number;
  injectMs: number;
  /** The pods the fault deleted or restarted. */
  deletedPods: DrillPod[];
  /** Every pod the fault hit: deleted, restarted or held. */
  hitPods: DrillPod[];
}

/** 3. The survivors watched, then the fault injected (faults.ts); the watch is armed with the pods it hit. */
async function injectWatched(
  run: DrillRun,
  healthy: TopologyCheckReport,
  injectBy = Infinity,
): Promise<FaultInjected | "late"> {
  const { i, api, ns, now } = run;
  const members = await api.listPods(ns, i.selector);
  const sentinels = i.sentinel === undefined ? [] : await api.listPods(ns, i.sentinel.selector);
  const watching = await watchDetection(run, members, sentinels);
  const { watch } = watching;
  const asked = now();
  if (asked > injectBy) {
    await watch?.stop();
    return "late";
  }
  const agent = { name: `${run.name}-agent`, image: i.agentImage ?? i.image, holdS: heldFaultS(i.failureDetectionMs) };
  const injected = await injectFault(
    api,
    run.fault,
    { namespace: ns, members, sentinels, healthy, zoneDownS: i.zoneDownS, agent },
    run.sleep,
    now,
  ).catch(async (e: unknown) => {
    await watch?.stop();
    throw e;
  });
  // A held fault (freeze, partition) took effect when its agent says, seconds after it was asked for.
  const faultAt = injected.at ?? asked;
  const injectMs = injected.at === undefined ? now() - faultAt : 0;
  const deletedPods = [...members, ...sentinels].filter(
    (p) => injected.deleted.some((d) => d.uid === p.uid) || injected.restarted?.some((r) => r.name === p.name),
  );
  // Every pod the fault hit: deleted, restarted or held (detection watches them; cluster rows mark their shards).
  const hitPods = [...deletedPods, ...(injected.held ?? [])];
  watch?.arm(hitPods, faultAt);
  return { ...watching, members, injected, faultAt, injectMs, deletedPods, hitPods };
}

/**
 * Polls until the fault no longer holds, every deleted pod runs again and the verifier passes, at most
 * `timeoutS` from the fault; then undoes the fault and stops the watch (also on a throw).
 */
async function pollRecovery(
  run: DrillRun,
  f: FaultInjected,
): Promise<{ after: TopologyCheckReport | undefined; recoveredAt: number | undefined; why: string }> {
  const { i, api, ns, deps, now } = run;
  const { injected, watch } = f;
  let after: TopologyCheckReport | undefined;
  let why = "not checked yet";
  let recoveredAt: number | undefined;
  try {
    const deadline = f.faultAt + i.timeoutS * 1000;
    while (now() < deadline) {
      await run.sleep(i.pollMs);
      const held = await injected.holding?.();
      if (held !== undefined) {
        why = held;
        continue;
      }
      const pods = [
        ...(await api.listPods(ns, i.selector)),
        ...(i.sentinel === undefined ? [] : await api.listPods(ns, i.sentinel.selector)),
      ];
      const pending = notBackYet(injected.deleted, pods, injected.restarted);
      if (pending !== undefined) {
        why = pending;
        continue;
      }
      try {
        after = await deps.verify();
        recoveredAt = now();
        break;
      } catch (e) {
        why = failureText(e);
      }
    }
  } finally {
    await injected.restore();
    await watch?.stop();
  }
  return { after, recoveredAt, why };
}

/** The healed topology, when it healed and what the watch saw. */
interface Healed {
  after: TopologyCheckReport;
  recoveredAt: number;
  detectedAt: number | undefined;
  sentinelEvents: SentinelEventRow[] | undefined;
  clusterRoles: ClusterRoleRow[] | undefined;
}

/** The recovery, or a DrillError naming the fault when the topology did not heal in time. */
async function healed(run: DrillRun, f: FaultInjected): Promise<Healed> {
  const { after, recoveredAt, why } = await pollRecovery(run, f);
  const { watch, faultAt } = f;
  const detectedAt = f.unobservable === undefined ? watch?.detectedAt() : undefined;
  const sentinelEvents = watch?.events === undefined ? undefined : sentinelEventRows(watch.events(), faultAt);
  const clusterRoles = watch?.roles === undefined ? undefined : clusterRoleRows(watch.roles(), faultAt);
  if (after === undefined || recoveredAt === undefined) {
    throw new DrillError(
      `the ${run.fault} drill did not heal within ${run.i.timeoutS} s (drills.timeoutS) after ${f.injected.description}: ${why}`,
    );
  }
  return { after, recoveredAt, detectedAt, sentinelEvents, clusterRoles };
}

/** 4. The load Job finished; its pod's log parsed into records (record-lines.ts). */
async function loadRecords(run: DrillRun, podName: string): Promise<ReturnType<typeof parseRecordLines>> {
  const { i, fault, api, ns, name, now } = run;
  const doneBy = now() + (i.loadS + 300) * 1000;
  for (;;) {
    const st = await api.jobState(ns, name);
    if (st !== undefined && st.failed > 0)
      throw new DrillError(`the ${fault} drill's load Job ${ns}/${name} failed: ${await logTail(api, ns, podName)}`);
    if (st !== undefined && st.succeeded > 0) break;
    if (now() >= doneBy)
      throw new DrillError(
        `the ${fault} drill's load Job ${ns}/${name} has not finished ${i.loadS + 300} s after the fault`,
      );
    await run.sleep(2000);
  }
  const log = await api.podLog(ns, podName, DRILL_LOAD_CONTAINER);
  try {
    return parseRecordLines(log);
  } catch (err) {
    throw new DrillError(
      `the ${fault} drill's load pod ${podName}: ${(err as Error).message}; last log lines:\n${tail(log)}`,
    );
  }
}

/** What the drill measured, for its row. */
interface DrillMeasured {
  healthy: TopologyCheckReport;
  durability: DurabilityConfig;
  podName: string;
  f: FaultInjected;
  h: Healed;
  load: ReturnType<typeof parseRecordLines>;
}

/** Every acknowledged key read back, and the load's figures against the fault's loss bound (ledger.ts). */
async function drillFigures(run: DrillRun, m: DrillMeasured): Promise<ReturnType<typeof loadFigures>> {
  const { load, f } = m;
  const acked = load.records.filter((r) => r.ok).map((r) => r.key);
  const readBack = await run.deps.readBack(acked, m.h.after);
  const bound = deployedLossBound(run.fault, f.injectMs, m.durability, load.records, f.faultAt, f.deletedPods);
  const input = {
    records: load.records,
    readBack,
    faultAt: f.faultAt,
    loadStart: load.loadStart,
    loadStop: load.loadStop,
    beforeMs: 10_000,
    bound,
  };
  return loadFigures(load.streams, { ...input, affectedShards: affectedShards(m.healthy, f.members, f.hitPods) });
}

/** The drill's row. */
function drillRow(run: DrillRun, m: DrillMeasured, figures: ReturnType<typeof loadFigures>): DeployedDrill {
  const { i, fault, ns } = run;
  const { healthy, f, h } = m;
  const { detectedAt, sentinelEvents, clusterRoles } = h;
  return {
    mode: i.mode,
    fault,
    ok: drillOk(true, figures),
    failures: drillFailures(true, figures),
    healed: true,
    topology: `${i.mode}: ${healthy.shards.length} shard(s), ${healthy.nodeCount} node(s)${healthy.sentinels === undefined ? "" : `, ${healthy.sentinels.length} Sentinel(s)`} (deployed, namespace ${ns})`,
    faultDescription: f.injected.description,
    ...figures,
    recoveryMs: Math.round(h.recoveredAt - f.faultAt),
    detectionMs: detectedAt === undefined ? null : Math.round(detectedAt - f.faultAt),
    ...(detectedAt === undefined
      ? {
          detectionNote:
            f.unobservable ?? f.watchError ?? (f.watch === undefined ? DETECTION_NOTE : "no failure mark seen"),
        }
      : {}),
    rate: i.rate,
    waitTimeoutMs: i.waitTimeoutMs,
    timings: { failureDetectionMs: i.failureDetectionMs, zoneDownMs: i.zoneDownS * 1000 },
    durability: m.durability,
    after: h.after,
    faultAt: new Date(f.faultAt).toISOString(),
    loadPod: m.podName,
    deletedPods: f.injected.deleted.map((d) => ({ name: d.name, uid: d.uid })),
    ...(sentinelEvents === undefined ? {} : { sentinelEvents, failoverSteps: failoverSteps(sentinelEvents) }),
    ...(clusterRoles === undefined ? {} : { clusterRoles }),
  };
}

/** Runs one fault's drill; throws DrillError when the topology does not heal in time. */
export async function drillOnce(i: FailureDrillInputs, fault: Fault, deps: DrillDeps): Promise<DeployedDrill> {
  const { api } = deps;
  const unsupported = UNSUPPORTED_DEPLOYED_FAULTS[fault];
  if (unsupported !== undefined)
    throw new DrillError(`the ${fault} fault cannot be injected in the deployed stack: ${unsupported}`);
  const sleep = deps.sleep ?? realSleep;
  const now = deps.now ?? Date.now;
  const ns = i.namespace;
  const healthy = await healthyBefore(i, fault, deps, sleep, now);
  const durability = await deps.durability(healthy);
  const runKey = deps.runKey?.() ?? randomBytes(3).toString("hex");
  const name = `valkey-drill-${fault}-${runKey}`;
  // The load that runs now (a second replaces the first when the fault cannot come inside it: faultInLoad).
  let current: DrillRun = { i, fault, deps, api, ns, sleep, now, runKey, name };
  try {
    // 2. The load pod runs; 3. the fault, then recovery.
    const { run, podName, atFault, f } = await faultInLoad(current, (again) => (current = again));
    const h = await healed(run, f);
    // 4. The load's records.
    const load = await loadRecords(run, podName);
    const measured: DrillMeasured = { healthy: atFault, durability, podName, f, h, load };
    return drillRow(run, measured, await drillFigures(run, measured));
  } finally {
    await api.deleteLoad(ns, current.name);
  }
}

/**
 * The fault injected inside a writing load: when the load's streams were not all writing at its writing line, or the
 * fault could not come by `injectBy` (the verification before it took too long), that load is deleted and a second
 * one started (`started` is told of it, before it is created); the second too late fails the drill naming
 * drills.loadS.
 */
async function faultInLoad(
  first: DrillRun,
  started: (again: DrillRun) => void,
): Promise<LoadAtFault & { f: FaultInjected }> {
  let at = await loadAtFault(first);
  for (let attempt = 1; ; attempt++) {
    const f = attempt === 1 && at.silent.length > 0 ? "late" : await injectWatched(at.run, at.atFault, at.injectBy);
    if (f !== "late") return { ...at, f };
    const { i, fault, api, ns, now } = at.run;
    if (attempt === 2)
      throw new DrillError(
        `the ${fault} drill's fault could not come inside its load: ${Math.round((now() - at.injectBy) / 1000)} s past ` +
          `preFaultS + half of the rest of drills.loadS (${i.loadS} s) after the load's writing line, twice (the ` +
          `verification before the fault and the detection watch's start took that long): raise drills.loadS`,
      );
    await api.deleteLoad(ns, at.run.name);
    const again: DrillRun = { ...at.run, runKey: `${at.run.runKey}r`, name: `${at.run.name}-r` };
    started(again);
    at = await loadAtFault(again);
  }
}

/**
 * With `drills.alertsFrom`: once the last drill healed and its alerts had time to be evaluated, each row gets the
 * alerts Prometheus's history shows around it (core/drill/alert-history.ts). A history that cannot be read is noted
 * on every row; the drills' own figures stand.
 */
async function recordAlerts(
  i: FailureDrillInputs,
  drills: DeployedDrill[],
  a: NonNullable<DrillDeps["alerts"]>,
  deps: DrillDeps,
): Promise<void> {
  const now = deps.now ?? Date.now;
  try {
    await (deps.sleep ?? realSleep)(await a.settleMs());
    const faults = drills.map((d) => Date.parse(d.faultAt));
    const from = (faults[0] ?? now()) - i.preFaultS * 1000;
    const seen = alertsPerDrill(faults, await a.history(from, now()), from, Infinity);
    drills.forEach((d, k) => (d.alerts = seen[k] ?? []));
  } catch (e) {
    for (const d of drills) d.alertsNote = `not read from drills.alertsFrom: ${failureText(e)}`;
  }
}

/** Every fault in order; the first that does not heal stops the run (and fails `pulumi up`). */
export async function runDrills(i: FailureDrillInputs, deps: DrillDeps): Promise<FailureDrillOutputs> {
  const drills: DeployedDrill[] = [];
  for (const fault of i.faults) drills.push(await drillOnce(i, fault, deps));
  if (deps.alerts !== undefined) await recordAlerts(i, drills, deps.alerts, deps);
  return { drills, csv: renderDrillsCsv(drills), note: CLOCK_NOTE };
}

// --- the dynamic-provider protocol (called by ../kit/ts-module-provider.ts) ---

/** The real outside world: the API server and connector named by the inputs (real-deps.ts). */
async function realDeps(i: FailureDrillInputs): Promise<DrillDeps> {
  const { drillDepsFor } = await import("./real-deps.js");
  return drillDepsFor(i);
}

export const { check, create, diff, update } = dynamicProtocol(drillStep, {
  run: async (i, deps?: DrillDeps) => runDrills(i, deps ?? (await realDeps(i))),
  idOf: (i) => `${i.namespace}/${i.selector}/drills`,
});
