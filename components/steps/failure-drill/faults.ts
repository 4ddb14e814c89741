/**
 * The faults of a drill in the deployed stack, injected through the Kubernetes API (kube-api.ts):
 * - primary: delete the current primary's pod (from the verifier's healthy report), grace 0;
 * - replica: delete one replica's pod, grace 0;
 * - all: delete every member pod, grace 0;
 * - switchover: delete the primary's pod WITH its grace period, so its preStop runs (the planned
 *   path a node drain takes);
 * - zone: cordon every node of the primary's zone, delete every member and Sentinel pod on them
 *   (grace 0), and uncordon after `zoneDownS` (`restore`). While cordoned, the StatefulSets'
 *   replacement pods stay Pending under the hard zone spread. On EKS, Karpenter may launch a new
 *   node in that zone for them (a cordoned node is not capacity), which a real zone outage would
 *   not allow: the drill then measures a shorter outage of that zone than a real one.
 * Every deleted pod must come back (same name, new uid, Ready) before recovery counts.
 */
import { parseEndpoint } from "../../../benchmarks/topology/endpoint.js";
import type { Fault } from "../../../benchmarks/drill/ledger.js";
import { ZONE_LABEL } from "../../shared.js";
import type { TopologyCheckReport } from "../topology-check/implementation.js";
import type { DrillKubeApi, DrillPod } from "./kube-api.js";

export interface FaultTarget {
  namespace: string;
  /** The release's member pods and (replication) Sentinel pods, as listed right before the fault. */
  members: readonly DrillPod[];
  sentinels: readonly DrillPod[];
  /** The verifier's report of the healthy topology. */
  healthy: TopologyCheckReport;
  zoneDownS: number;
}

export interface InjectedFault {
  description: string;
  /** Pods deleted: each must run again under a new uid before recovery counts. */
  deleted: { name: string; uid: string }[];
  /** Zone fault: the zone and its cordoned nodes. */
  zone?: string;
  cordoned: string[];
  /** Uncordons what was cordoned (zone fault; a no-op otherwise). Safe to call twice. */
  restore: () => Promise<void>;
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
    throw new Error(`no pod of the release is the ${what} ${address} (pods: ${pods.map((p) => `${p.name} ${p.podIP ?? "no IP"}`).join(", ")})`);
  return pod;
}

const at = (p: DrillPod): string => `${p.name} (${p.podIP ?? "no IP"} on ${p.nodeName ?? "no node"})`;

export async function injectFault(api: DrillKubeApi, fault: Fault, t: FaultTarget, sleep: (ms: number) => Promise<void>): Promise<InjectedFault> {
  const shard = t.healthy.shards[0];
  const noop = (): Promise<void> => Promise.resolve();
  const kill = async (pods: readonly DrillPod[], grace: number | undefined): Promise<{ name: string; uid: string }[]> => {
    await Promise.all(pods.map((p) => api.deletePod(t.namespace, p.name, grace)));
    return pods.map((p) => ({ name: p.name, uid: p.uid }));
  };
  if (fault === "primary" || fault === "switchover") {
    const pod = pick("primary", shard?.primary.address, t.members);
    const graceful = fault === "switchover";
    const deleted = await kill([pod], graceful ? undefined : 0);
    const how = graceful ? "deleted with its grace period (preStop runs)" : "deleted, grace 0";
    return { description: `primary pod ${at(pod)} ${how}`, deleted, cordoned: [], restore: noop };
  }
  if (fault === "replica") {
    const pod = pick("replica", shard?.replicas[0]?.address, t.members);
    return { description: `replica pod ${at(pod)} deleted, grace 0`, deleted: await kill([pod], 0), cordoned: [], restore: noop };
  }
  if (fault === "all") {
    const deleted = await kill(t.members, 0);
    return { description: `every member pod (${t.members.map((p) => p.name).join(", ")}) deleted, grace 0`, deleted, cordoned: [], restore: noop };
  }
  if (fault !== "zone") throw new Error(`the deployed FailureDrill does not inject the ${fault} fault (a local drill only: vbench drill)`);
  // zone: the primary's zone.
  const zone = shard?.primary.zone ?? undefined;
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
    const deleted = await kill(inZone, 0);
    // Hold the zone down, then uncordon: in the background, while the drill waits for recovery.
    const holding = sleep(t.zoneDownS * 1000).then(restore);
    holding.catch(() => undefined);
    return {
      description: `zone ${zone} down for ${t.zoneDownS} s: node(s) ${nodes.join(", ")} cordoned, pod(s) ${inZone.map((p) => p.name).join(", ") || "none"} deleted, grace 0`,
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

/** Why the deleted pods do not count as back yet; undefined once each runs again (new uid, Ready, not Terminating). */
export function notBackYet(deleted: readonly { name: string; uid: string }[], now: readonly DrillPod[]): string | undefined {
  const missing = deleted.flatMap((d) => {
    const p = now.find((x) => x.name === d.name && !x.deleting);
    if (p === undefined) return [`${d.name} not recreated`];
    if (p.uid === d.uid) return [`${d.name} not replaced yet`];
    if (!p.ready) return [`${d.name} not Ready (${p.phase})`];
    return [];
  });
  return missing.length === 0 ? undefined : missing.join(", ");
}
