/**
 * detectionMs in the deployed stack: fault → the first surviving node marking a deleted member
 * failed, watched through the checks' connector. Replication: every Sentinel's `+sdown` event
 * (subscribed before the fault) naming a deleted member; cluster: the surviving members'
 * `CLUSTER NODES`, polled, flagging a deleted member's address `fail?` or `fail`. Not observable
 * when nobody survives to see it (`all`), or, in the planned `switchover`, when nothing fails.
 */
import type { Redis } from "ioredis";
import type { DrillPod } from "./kube-api.js";

export interface DetectionWatch {
  /** Starts matching: marks of these (deleted) pods, seen from now on, count. */
  arm(deleted: readonly DrillPod[], faultAt: number): void;
  /** When the first mark was seen; undefined: none (yet). */
  detectedAt(): number | undefined;
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

/** Replication: subscribes `+sdown` on every Sentinel client (already connected and authenticated). */
export async function watchSentinels(clients: readonly Redis[], now: () => number = Date.now): Promise<DetectionWatch> {
  let deleted: readonly DrillPod[] = [];
  let armedAt = Infinity;
  let seen: number | undefined;
  for (const c of clients) {
    c.on("error", () => undefined);
    c.on("message", (_channel: string, payload: string) => {
      const at = now();
      const host = sdownHost(payload);
      if (seen === undefined && at >= armedAt && host !== undefined && namesPod(host, deleted)) seen = at;
    });
    await c.subscribe("+sdown");
  }
  return {
    arm: (pods, faultAt) => ((deleted = pods), (armedAt = faultAt)),
    detectedAt: () => seen,
    stop: () => Promise.resolve(clients.forEach((c) => c.disconnect())),
  };
}

/** Cluster: polls CLUSTER NODES of the members that survive the fault, every `intervalMs`. */
export function watchClusterNodes(clients: readonly { pod: string; client: Redis }[], intervalMs = 250, now: () => number = Date.now): DetectionWatch {
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
