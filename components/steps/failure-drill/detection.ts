/**
 * detectionMs in the deployed stack: fault → the first surviving node marking a deleted member
 * failed, watched through the checks' connector. Replication: every Sentinel's `+sdown` event
 * (subscribed before the fault) naming a deleted member; cluster: the surviving members'
 * `CLUSTER NODES`, polled, flagging a deleted member's address `fail?` or `fail`. Not observable
 * when nobody survives to see it (`all`), or, in the planned `switchover`, when nothing fails.
 * Replication also keeps every event the Sentinels publish (PSUBSCRIBE `*`), for the row's
 * `sentinelEvents` and `failoverSteps` (core/drill/sentinel-events.ts), as the local drills do.
 */
import type { Redis } from "ioredis";
import type { SentinelEventAt } from "../../../core/drill/sentinel-events.js";
import type { DrillPod } from "./kube-api.js";

export interface DetectionWatch {
  /** Starts matching: marks of these (deleted) pods, seen from now on, count. */
  arm(deleted: readonly DrillPod[], faultAt: number): void;
  /** When the first mark was seen; undefined: none (yet). */
  detectedAt(): number | undefined;
  /** Replication: every Sentinel event received since the watch started (times on this process's clock). */
  events?(): SentinelEventAt[];
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

/** CLUSTER NODES: the hosts of nodes flagged `fail?` or `fail`. */
export function failedHosts(clusterNodes: string): string[] {
  return clusterNodes
    .split("\n")
    .map((l) => l.trim().split(" "))
    .filter((f) => f.length >= 3 && (f[2] ?? "").split(",").some((flag) => flag === "fail?" || flag === "fail"))
    .map((f) => (f[1] ?? "").split("@")[0]!.replace(/:\d+$/, ""));
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

/** Cluster: polls CLUSTER NODES of the members that survive the fault, every `intervalMs`. */
export function watchClusterNodes(
  clients: readonly { pod: string; client: Redis }[],
  intervalMs = 250,
  now: () => number = Date.now,
): DetectionWatch {
  let deleted: readonly DrillPod[] = [];
  let seen: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let polling = false;
  clients.forEach((c) => c.client.on("error", () => undefined));
  const poll = async (): Promise<void> => {
    if (polling || seen !== undefined) return;
    polling = true;
    try {
      const survivors = clients.filter((c) => !deleted.some((d) => d.name === c.pod));
      for (const c of survivors) {
        const text = await (c.client.call("CLUSTER", "NODES") as Promise<string>).catch(() => "");
        if (failedHosts(text).some((h) => namesPod(h, deleted))) {
          seen ??= now();
          return;
        }
      }
    } finally {
      polling = false;
    }
  };
  return {
    arm: (pods) => {
      deleted = pods;
      timer = setInterval(() => void poll(), intervalMs);
    },
    detectedAt: () => seen,
    stop: () => {
      if (timer !== undefined) clearInterval(timer);
      clients.forEach((c) => c.client.disconnect());
      return Promise.resolve();
    },
  };
}
