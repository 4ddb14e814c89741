/**
 * detectionMs in the deployed stack: fault → the first surviving node marking a deleted member
 * failed, watched through the checks' connector. Replication: every Sentinel's `+sdown` event
 * (subscribed before the fault) naming a deleted member; cluster: the surviving members'
 * `CLUSTER NODES`, polled, flagging a deleted member's address `fail?` or `fail`. Not observable
 * when nobody survives to see it (`all`), or, in the planned `switchover`, when nothing fails.
 * Replication also keeps every event the Sentinels publish (PSUBSCRIBE `*`), for the row's
 * `sentinelEvents` and `failoverSteps` (core/drill/sentinel-events.ts), as the local drills do.
 * Cluster also keeps every member's role as the polls saw it, from one poll before the fault on
 * (`clusterRoles`): a second view, the cluster's own, of whether the fault hit the shard's
 * serving primary and when a role moved.
 */
import type { Redis } from "ioredis";
import type { SentinelEventAt } from "../../../core/drill/sentinel-events.js";
import { parseClusterNodes } from "../../../core/topology/cluster-nodes-parser.js";
import type { DrillPod } from "./kube-api.js";

export interface DetectionWatch {
  /** Starts matching: marks of these (deleted) pods, seen from now on, count. */
  arm(deleted: readonly DrillPod[], faultAt: number): void;
  /** When the first mark was seen; undefined: none (yet). */
  detectedAt(): number | undefined;
  /** Replication: every Sentinel event received since the watch started (times on this process's clock). */
  events?(): SentinelEventAt[];
  /** Cluster: each member's role when first seen and at every change since the watch started (this process's clock). */
  roles?(): ClusterRoleAt[];
  stop(): Promise<void>;
}

/** Whether a host (an IP, or a pod DNS name) names one of the pods. */
export function namesPod(host: string, pods: readonly DrillPod[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return pods.some((p) => p.podIP === h || h === p.name || h.startsWith(`${p.name}.`));
}

/** `+sdown` payload: `<master|slave|sentinel> <name> <host> <port> [@ <master> <host> <port>]`. */
export function sdownHost(payload: string): string | undefined {
  return payload.split(" ")[2];
}

/** CLUSTER NODES: the address and the announced hostname of every node flagged `fail?` or `fail`. */
export function failedHosts(clusterNodes: string): string[] {
  return parseClusterNodes(clusterNodes)
    .nodes.filter((n) => n.pfail || n.failed)
    .flatMap((n) => [n.endpoint?.host, n.hostname].filter((h): h is string => h !== undefined));
}

/**
 * Replication: every event of every Sentinel client (already connected and authenticated), named by `pod`; detection is
 * the first `+sdown` of a deleted pod.
 */
export async function watchSentinels(
  clients: readonly { pod: string; client: Redis }[],
  now: () => number = Date.now,
): Promise<DetectionWatch> {
  let deleted: readonly DrillPod[] = [];
  let armedAt = Infinity;
  let seen: number | undefined;
  const events: SentinelEventAt[] = [];
  for (const { pod, client: c } of clients) {
    c.on("error", () => undefined);
    c.on("pmessage", (_pattern: string, channel: string, payload: string) => {
      const at = now();
      events.push({ sentinel: pod, at, channel, payload });
      if (channel !== "+sdown") return;
      const host = sdownHost(payload);
      if (seen === undefined && at >= armedAt && host !== undefined && namesPod(host, deleted)) seen = at;
    });
    await c.psubscribe("*");
  }
  return {
    arm: (pods, faultAt) => ((deleted = pods), (armedAt = faultAt)),
    detectedAt: () => seen,
    events: () => [...events],
    stop: () => Promise.resolve(clients.forEach((c) => c.client.disconnect())),
  };
}

/** A member's role as a survivor's CLUSTER NODES showed it, at `at` (Date.now()). */
export interface ClusterRoleAt {
  at: number;
  /** The announced hostname, else the address (ip:port). */
  node: string;
  /** `master` or `slave`, with `,fail?` / `,fail` when flagged; `master` of no slots is `master (no slots)`. */
  role: string;
  /** Who asked: the survivor whose CLUSTER NODES it was. */
  seenBy: string;
}

/** A ClusterRoleAt in a drill row: ms from the fault (negative: before it). */
export interface ClusterRoleRow {
  t: number;
  node: string;
  role: string;
  seenBy: string;
}

/** The role timeline relative to the fault. */
export function clusterRoleRows(roles: readonly ClusterRoleAt[], faultAt: number): ClusterRoleRow[] {
  return roles.map(({ at, ...r }) => ({ t: Math.round(at - faultAt), ...r }));
}

/** CLUSTER NODES: each node's name (announced hostname, else ip:port) and role (see ClusterRoleAt.role). */
export function nodeRoles(clusterNodes: string): Map<string, string> {
  const roles = new Map<string, string>();
  for (const n of parseClusterNodes(clusterNodes).nodes) {
    const name = n.hostname ?? (n.endpoint === undefined ? undefined : `${n.endpoint.host}:${n.endpoint.port}`);
    if (n.role === "unknown" || name === undefined) continue;
    const marks = [...(n.pfail ? ["fail?"] : []), ...(n.failed ? ["fail"] : [])];
    const slotless = n.role === "primary" && n.slots.length === 0 ? " (no slots)" : "";
    roles.set(name, [n.role === "primary" ? "master" : "slave", ...marks].join(",") + slotless);
  }
  return roles;
}

/**
 * Cluster: polls CLUSTER NODES every `intervalMs`, once before it returns (the roles right before the fault), then
 * on; after `arm` only the members the fault did not hit are asked. Detection: the first poll flagging a hit member.
 * Roles: the first answering survivor's view of every member at each poll (and the view that first flagged a hit
 * member), at each change; views can differ for a gossip round, so a role may flip back once.
 */
export async function watchClusterNodes(
  clients: readonly { pod: string; client: Redis }[],
  intervalMs = 250,
  now: () => number = Date.now,
): Promise<DetectionWatch> {
  let deleted: readonly DrillPod[] = [];
  let armed = false;
  let seen: number | undefined;
  let polling = false;
  const roles: ClusterRoleAt[] = [];
  const last = new Map<string, string>();
  clients.forEach((c) => c.client.on("error", () => undefined));
  const record = (text: string, seenBy: string, at: number): void => {
    for (const [node, role] of nodeRoles(text)) {
      if (last.get(node) === role) continue;
      last.set(node, role);
      roles.push({ at, node, role, seenBy });
    }
  };
  const poll = async (): Promise<void> => {
    if (polling) return;
    polling = true;
    try {
      let recorded = false;
      for (const c of clients) {
        // Checked at each member, not once per poll: a poll that began before the fault must not ask a hit member.
        if (deleted.some((d) => d.name === c.pod)) continue;
        const text = await (c.client.call("CLUSTER", "NODES") as Promise<string>).catch(() => "");
        if (text === "") continue;
        const at = now();
        if (!recorded) record(text, c.pod, at);
        recorded = true;
        if (!armed || seen !== undefined) break;
        if (failedHosts(text).some((h) => namesPod(h, deleted))) {
          seen = at;
          record(text, c.pod, at); // the view that saw the mark, if the first survivor's did not yet
          break;
        }
      }
    } finally {
      polling = false;
    }
  };
  await poll();
  const timer = setInterval(() => void poll(), intervalMs);
  return {
    arm: (pods) => {
      deleted = pods;
      armed = true;
    },
    detectedAt: () => seen,
    roles: () => [...roles],
    stop: () => {
      clearInterval(timer);
      clients.forEach((c) => c.client.disconnect());
      return Promise.resolve();
    },
  };
}
