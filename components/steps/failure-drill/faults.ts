/**
 * The faults of a drill in the deployed stack, injected through the Kubernetes API (kube-api.ts).
 * A pod "crashed" below has its server stopped at once first (CRASH_COMMAND exec'd in its Valkey
 * container, as crash-restart does), then is deleted with grace 0: a grace-0 deletion alone is not
 * a crash on a real kubelet. It still runs the pod's preStop, for up to 1 s (the kubelet's least
 * grace, pkg/kubelet/pod_workers.go calculateEffectiveGracePeriod), then SIGTERM with 2 s more; a
 * cluster primary's preStop hands its slots over inside that second, so the "unplanned" fault was
 * sometimes a planned hand-over (a cluster `primary` drill of 1.6 s against a 5 s detection on
 * kube:local). With the server already gone the preStop finds nothing to hand over.
 * - primary: crash the current primary's pod (from the verifier's healthy report);
 * - replica: crash one replica's pod;
 * - all: crash every member pod;
 * - switchover: evict the primary's pod through the Eviction API, as a node drain does: the
 *   PodDisruptionBudget is honoured (a refusal is asked again for EVICTION_PATIENCE_S) and the pod
 *   is deleted with its grace period, so its preStop runs;
 * - zone: cordon every node of the primary's zone, crash every member pod and delete every Sentinel
 *   pod on them (grace 0), and uncordon after `zoneDownS` (`restore`). While cordoned, the StatefulSets'
 *   replacement pods stay Pending under the hard zone spread. On EKS, Karpenter may launch a new
 *   node in that zone for them (a cordoned node is not capacity), which a real zone outage would
 *   not allow: the drill then measures a shorter outage of that zone than a real one;
 * - crash-restart: `valkey-cli SHUTDOWN NOSAVE NOW FORCE` exec'd in the primary's container: the
 *   server exits at once without waiting for its replicas and the kubelet restarts the container
 *   in place on the same volume, faster than the Sentinels' down-after / cluster-node-timeout (the
 *   restart path an OOM kill takes). Not a SIGKILL: valkey-server is PID 1 of its container, and
 *   Linux does not deliver SIGKILL or SIGSTOP sent from inside a PID namespace to its init; the
 *   API has no "kill container". The exit writes and fsyncs the AOF, so the AOF write window is not exercised;
 * - lost-volume: the primary's PersistentVolumeClaim (data-<pod>) deleted, then its pod crashed:
 *   the StatefulSet recreates the pod on a new, empty volume.
 * - freeze, partition: the API can neither stop a container's PID 1 (the PID-1 reason above) nor
 *   cut traffic the release's own NetworkPolicies admit (policies only add allowances), so a
 *   privileged agent pod on the primary's node does it from the host's PID namespace
 *   (fault-agent.ts): SIGSTOP of the primary's valkey-server, or iptables DROP in its network
 *   namespace between it and every other member and Sentinel, for `holdS`, then undone. Recovery
 *   counts only once the agent has undone the fault. The fault time is the agent's (the node's
 *   clock), when the fault took effect, not when its pod was asked for.
 * Every deleted pod must come back (same name, new uid, Ready), and a restarted container must
 * show a higher restartCount, before recovery counts.
 */
import { parseEndpoint } from "../../../vocabulary/endpoint.js";
import { UNSUPPORTED_DEPLOYED_FAULTS, type Fault } from "../../../vocabulary/faults.js";
import { startFaultAgent } from "./fault-agent.js";
import { ZONE_LABEL } from "../../../vocabulary/labels.js";
import type { TopologyCheckReport } from "../../../core/verify/check-report.js";
import { DATA_VOLUME } from "../../valkey/statefulset.js";
import type { DrillKubeApi, DrillPod } from "./kube-api.js";

/** The member pods' Valkey container (statefulset.ts). */
export const VALKEY_CONTAINER = "valkey";

/**
 * The crash: the server exits at once, no RDB save, no wait for replicas (the password from the container's env, never
 * argv). The server is the container's process, so its exit ends the container and kills the exec's shell with it
 * (KILLED_WITH_CONTAINER, or the stream just closes); a server that still answers PING 2 s later refused the SHUTDOWN,
 * and the command exits 3 saying so. The drill then fails rather than delete the pod with its server up,
 * whose grace second lets the preStop hand over (a switchover, not a crash).
 */
export const CRASH_COMMAND = [
  "sh",
  "-c",
  "valkey-cli -p 6379 SHUTDOWN NOSAVE NOW FORCE >/dev/null 2>&1; i=0; while [ $i -lt 20 ]; do " +
    "valkey-cli -p 6379 PING >/dev/null 2>&1 || exit 0; i=$((i+1)); sleep 0.1; done; " +
    "echo 'the server still answers PING 2 s after SHUTDOWN NOSAVE NOW FORCE' >&2; exit 3",
];
/** 128 + SIGKILL: the exec's shell killed when its container ended (seen on a real kubelet with containerd). */
export const KILLED_WITH_CONTAINER = 137;

export interface FaultTarget {
  namespace: string;
  /** The release's member pods and (replication) Sentinel pods, as listed right before the fault. */
  members: readonly DrillPod[];
  sentinels: readonly DrillPod[];
  /** The verifier's report of the healthy topology. */
  healthy: TopologyCheckReport;
  zoneDownS: number;
  /** freeze, partition: the agent pod's name, its image and how long the fault holds. */
  agent?: { name: string; image: string; holdS: number };
}

export interface InjectedFault {
  description: string;
  /** Pods deleted: each must run again under a new uid before recovery counts. */
  deleted: { name: string; uid: string }[];
  /** Containers restarted in place (crash-restart): the pod's restarts must exceed `restarts`. */
  restarted?: { name: string; restarts: number }[];
  /** Zone fault: the zone and its cordoned nodes. */
  zone?: string;
  cordoned: string[];
  /**
   * Uncordons what was cordoned (zone fault), stops the fault agent (freeze, partition); a no-op otherwise. Safe to
   * call twice.
   */
  restore: () => Promise<void>;
  /** freeze, partition: when the fault took effect (the agent's clock), later than the call that asked for it. */
  at?: number;
  /** freeze, partition: the pods the fault held (not deleted), watched for failure marks. */
  held?: DrillPod[];
  /** freeze, partition: why the fault still holds; undefined once undone (recovery counts only then). */
  holding?: () => Promise<string | undefined>;
}

/** The pod a report address (`host:port`, an IP or a pod DNS name) names. */
export function podOfAddress(address: string, pods: readonly DrillPod[]): DrillPod | undefined {
  const host = parseEndpoint(address).host.toLowerCase().replace(/\.$/, "");
  return pods.find((p) => p.podIP === host || host === p.name || host.startsWith(`${p.name}.`));
}

function pick(what: string, address: string | undefined, pods: readonly DrillPod[]): DrillPod {
  if (address === undefined) throw new Error(`the healthy topology report names no ${what}`);
  const pod = podOfAddress(address, pods);
  if (pod === undefined)
    throw new Error(
      `no pod of the release is the ${what} ${address} (pods: ${pods.map((p) => `${p.name} ${p.podIP ?? "no IP"}`).join(", ")})`,
    );
  return pod;
}

/** How long a switchover keeps asking while the PodDisruptionBudget refuses the eviction (HTTP 429). */
export const EVICTION_PATIENCE_S = 60;

/** Evicts like `kubectl drain`: asks again every second while the budget refuses; returns the number of asks. */
async function evict(
  api: DrillKubeApi,
  namespace: string,
  name: string,
  sleep: (ms: number) => Promise<void>,
): Promise<number> {
  for (let tries = 1; ; tries++) {
    if ((await api.evictPod(namespace, name)) === "evicted") return tries;
    if (tries >= EVICTION_PATIENCE_S)
      throw new Error(
        `switchover: the PodDisruptionBudget of ${name} refused its eviction for ${EVICTION_PATIENCE_S} s (HTTP 429): the release is not healthy enough to lose a member`,
      );
    await sleep(1000);
  }
}

const at = (p: DrillPod): string => `${p.name} (${p.podIP ?? "no IP"} on ${p.nodeName ?? "no node"})`;

/** What injecting a fault works with: the API, the target, the healthy report's first shard, the clock. */
interface Injection {
  api: DrillKubeApi;
  t: FaultTarget;
  shard: TopologyCheckReport["shards"][number] | undefined;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
}

const noop = (): Promise<void> => Promise.resolve();

/**
 * Crashes the pods, all at once: each member's server stopped at once (CRASH_COMMAND), then every pod deleted with
 * grace 0 (Sentinel pods have no preStop: deleted only). Returns their names and uids.
 */
async function crash(x: Injection, pods: readonly DrillPod[]): Promise<{ name: string; uid: string }[]> {
  const members = pods.filter((p) => x.t.members.some((m) => m.uid === p.uid));
  await Promise.all(members.map((p) => stopServer(x, p)));
  await Promise.all(pods.map((p) => x.api.deletePod(x.t.namespace, p.name, 0)));
  return pods.map((p) => ({ name: p.name, uid: p.uid }));
}

/**
 * CRASH_COMMAND in the pod's Valkey container. Stopped: the stream closed, exit 0 (no server answered PING) or
 * KILLED_WITH_CONTAINER. A refused exec, or any other exit (the server still answering), fails the drill naming why.
 */
async function stopServer(x: Injection, p: DrillPod): Promise<void> {
  const what = `the server of ${p.name} (exec SHUTDOWN NOSAVE NOW FORCE in its ${VALKEY_CONTAINER} container`;
  const r = await x.api.exec(x.t.namespace, p.name, VALKEY_CONTAINER, CRASH_COMMAND).catch((err: unknown) => {
    throw new Error(
      `could not stop ${what}; the drill's identity needs pods/exec create): ${err instanceof Error ? err.message : String(err)}`,
    );
  });
  if (r.exitCode === undefined || r.exitCode === 0 || r.exitCode === KILLED_WITH_CONTAINER) return;
  throw new Error(`could not stop ${what}, exit code ${r.exitCode}): ${r.stderr.trim() || "no stderr"}`);
}

/** How a fault description names a crashed member pod's end. */
const CRASHED = "server stopped at once (SHUTDOWN NOSAVE NOW FORCE), then its pod deleted, grace 0";

/** The healthy report's primary (of its first shard), as a member pod. */
function primaryPod(x: Injection): DrillPod {
  return pick("primary", x.shard?.primary.address, x.t.members);
}

/** primary: the primary's pod crashed. */
async function deletePrimary(x: Injection): Promise<InjectedFault> {
  const pod = primaryPod(x);
  return {
    description: `primary pod ${at(pod)} crashed: ${CRASHED}`,
    deleted: await crash(x, [pod]),
    cordoned: [],
    restore: noop,
  };
}

/** switchover: the primary's pod evicted as a drain does (the budget honoured), deleted with its grace period. */
async function evictPrimary(x: Injection): Promise<InjectedFault> {
  const pod = primaryPod(x);
  const tries = await evict(x.api, x.t.namespace, pod.name, x.sleep);
  const how = `evicted through the Eviction API (its PodDisruptionBudget honoured${tries > 1 ? `, after ${tries - 1} refusal(s)` : ""}; deleted with its grace period, preStop runs)`;
  return {
    description: `primary pod ${at(pod)} ${how}`,
    deleted: [{ name: pod.name, uid: pod.uid }],
    cordoned: [],
    restore: noop,
  };
}

/** crash-restart: SHUTDOWN NOSAVE NOW FORCE exec'd in the primary's container. */
async function crashPrimary(x: Injection): Promise<InjectedFault> {
  const pod = primaryPod(x);
  await stopServer(x, pod);
  return {
    description: `primary ${at(pod)}: SHUTDOWN NOSAVE NOW FORCE exec'd in its container (exits at once; the kubelet restarts it in place on its volume)`,
    deleted: [],
    restarted: [{ name: pod.name, restarts: pod.restarts ?? 0 }],
    cordoned: [],
    restore: noop,
  };
}

/** lost-volume: the primary's PersistentVolumeClaim deleted, then its pod crashed. */
async function losePrimaryVolume(x: Injection): Promise<InjectedFault> {
  const pod = primaryPod(x);
  const pvc = `${DATA_VOLUME}-${pod.name}`;
  await x.api.deletePvc(x.t.namespace, pvc);
  const deleted = await crash(x, [pod]);
  return {
    description: `primary ${at(pod)}: its PersistentVolumeClaim ${pvc} deleted, then the pod crashed (${CRASHED}): back on an empty volume`,
    deleted,
    cordoned: [],
    restore: noop,
  };
}

/**
 * freeze, partition: the fault agent on the primary's node holds the primary (SIGSTOP, or iptables DROP to its peers).
 */
async function holdPrimary(x: Injection, fault: "freeze" | "partition"): Promise<InjectedFault> {
  const { t } = x;
  const pod = primaryPod(x);
  if (t.agent === undefined) throw new Error(`the ${fault} fault needs its agent's name, image and hold`);
  const peers =
    fault === "freeze"
      ? []
      : [...t.members, ...t.sentinels]
          .filter((p) => p.uid !== pod.uid)
          .flatMap((p) => (p.podIP === undefined ? [] : [p.podIP]));
  const agent = await startFaultAgent(
    x.api,
    {
      namespace: t.namespace,
      name: t.agent.name,
      fault,
      victim: pod,
      peers,
      holdS: t.agent.holdS,
      image: t.agent.image,
    },
    x.sleep,
    x.now,
  );
  const what =
    fault === "freeze"
      ? `valkey-server stopped (SIGSTOP) for ${t.agent.holdS} s, then SIGCONT`
      : `cut off from ${peers.length} peer(s) (every other member and Sentinel: iptables DROP both ways in its network namespace) for ${t.agent.holdS} s, clients still reaching it`;
  return {
    description: `primary ${at(pod)}: ${what}, by the privileged agent pod ${t.agent.name} on its node`,
    deleted: [],
    cordoned: [],
    restore: agent.stop,
    at: agent.at,
    held: [pod],
    holding: agent.holding,
  };
}

/** replica: the first reported replica's pod crashed. */
async function deleteReplica(x: Injection): Promise<InjectedFault> {
  const pod = pick("replica", x.shard?.replicas[0]?.address, x.t.members);
  return {
    description: `replica pod ${at(pod)} crashed: ${CRASHED}`,
    deleted: await crash(x, [pod]),
    cordoned: [],
    restore: noop,
  };
}

/** all: every member pod crashed at once. */
async function deleteAllMembers(x: Injection): Promise<InjectedFault> {
  const deleted = await crash(x, x.t.members);
  return {
    description: `every member pod (${x.t.members.map((p) => p.name).join(", ")}) crashed: each ${CRASHED}`,
    deleted,
    cordoned: [],
    restore: noop,
  };
}

/**
 * zone: the primary's zone cordoned, its member pods crashed and its Sentinel pods deleted (grace 0); uncordoned after
 * `zoneDownS`.
 */
async function zoneDown(x: Injection): Promise<InjectedFault> {
  const { api, t } = x;
  const zone = x.shard?.primary.zone ?? undefined;
  if (zone === undefined) throw new Error("the zone drill needs the primary's zone, and the healthy report has none");
  const nodes = (await api.listNodes(`${ZONE_LABEL}=${zone}`)).filter((n) => !n.unschedulable).map((n) => n.name);
  if (nodes.length === 0) throw new Error(`the zone drill found no schedulable node in zone ${zone}`);
  const cordoned: string[] = [];
  let restored = false;
  const restore = async (): Promise<void> => {
    if (restored) return;
    restored = true;
    await Promise.all(cordoned.map((n) => api.setUnschedulable(n, false)));
  };
  try {
    for (const n of nodes) {
      await api.setUnschedulable(n, true);
      cordoned.push(n);
    }
    const inZone = [...t.members, ...t.sentinels].filter((p) => p.nodeName !== undefined && nodes.includes(p.nodeName));
    const deleted = await crash(x, inZone);
    // Hold the zone down, then uncordon: in the background, while the drill waits for recovery.
    const holding = x.sleep(t.zoneDownS * 1000).then(restore);
    holding.catch(() => undefined);
    return {
      description: `zone ${zone} down for ${t.zoneDownS} s: node(s) ${nodes.join(", ")} cordoned, pod(s) ${inZone.map((p) => p.name).join(", ") || "none"} gone (members: ${CRASHED}; Sentinels deleted, grace 0)`,
      deleted,
      zone,
      cordoned,
      restore,
    };
  } catch (err) {
    await restore();
    throw err;
  }
}

export async function injectFault(
  api: DrillKubeApi,
  fault: Fault,
  t: FaultTarget,
  sleep: (ms: number) => Promise<void>,
  now: () => number = Date.now,
): Promise<InjectedFault> {
  const x: Injection = { api, t, shard: t.healthy.shards[0], sleep, now };
  if (fault === "primary") return deletePrimary(x);
  if (fault === "switchover") return evictPrimary(x);
  if (fault === "crash-restart") return crashPrimary(x);
  if (fault === "lost-volume") return losePrimaryVolume(x);
  if (fault === "freeze" || fault === "partition") return holdPrimary(x, fault);
  const unsupported = UNSUPPORTED_DEPLOYED_FAULTS[fault];
  if (unsupported !== undefined)
    throw new Error(`the ${fault} fault cannot be injected in the deployed stack: ${unsupported}`);
  if (fault === "replica") return deleteReplica(x);
  if (fault === "all") return deleteAllMembers(x);
  if (fault !== "zone")
    throw new Error(`the deployed drill cannot inject '${fault}' (local drills only: vbench drill)`);
  // zone: the primary's zone.
  return zoneDown(x);
}

/**
 * Why the deleted pods do not count as back yet; undefined once each runs again (new uid, Ready, not Terminating) and
 * each restarted container has restarted.
 */
export function notBackYet(
  deleted: readonly { name: string; uid: string }[],
  now: readonly DrillPod[],
  restarted: readonly { name: string; restarts: number }[] = [],
): string | undefined {
  const notRestarted = restarted.flatMap((r) => {
    const p = now.find((x) => x.name === r.name && !x.deleting);
    if (p === undefined) return [`${r.name} missing`];
    if ((p.restarts ?? 0) <= r.restarts) return [`${r.name} not restarted yet (restartCount ${p.restarts ?? 0})`];
    if (!p.ready) return [`${r.name} not Ready (${p.phase})`];
    return [];
  });
  const missing = deleted.flatMap((d) => {
    const p = now.find((x) => x.name === d.name && !x.deleting);
    if (p === undefined) return [`${d.name} not recreated`];
    if (p.uid === d.uid) return [`${d.name} not replaced yet`];
    if (!p.ready) return [`${d.name} not Ready (${p.phase})`];
    return [];
  });
  const all = [...notRestarted, ...missing];
  return all.length === 0 ? undefined : all.join(", ");
}
