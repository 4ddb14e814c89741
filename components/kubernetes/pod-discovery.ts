/**
 * Finds the pods of a Valkey release and where they run: name, pod IP, node, the node's
 * `topology.kubernetes.io/zone`, readiness and StatefulSet ordinal. Each distinct node is read
 * once, concurrently.
 */
import { ZONE_LABEL } from "../../vocabulary/labels.js";
import { VALKEY_BUS_PORT, VALKEY_PORT } from "../../vocabulary/ports.js";
import type { PodApi, PodRecord } from "./pod-api.js";

export interface DiscoveredPod {
  name: string;
  podIP: string | undefined;
  nodeName: string | undefined;
  /** The node's zone label; undefined when the pod is unscheduled or the node has no zone label. */
  zone: string | undefined;
  ready: boolean;
  labels: Record<string, string>;
  /** StatefulSet ordinal (`valkey-2` -> 2); undefined for names without a trailing number. */
  ordinal: number | undefined;
  /** Headless Service of the pod's stable DNS name (spec.subdomain), when set. */
  subdomain: string | undefined;
  /** Valkey client port. */
  port: number;
  /** Cluster bus port. */
  busPort: number;
}

export interface DiscoverOptions {
  namespace: string;
  /** Label selector, e.g. `app.kubernetes.io/instance=valkey`. */
  selector: string;
  /** Client and bus port of a pod. @default `podPorts` (named container ports, else 6379 / 16379) */
  portsOf?: (pod: PodRecord) => { port: number; busPort: number };
}

/** Container port names read as the Valkey client port, in order of preference. */
export const CLIENT_PORT_NAMES = ["valkey", "tcp-valkey", "redis", "tcp-redis", "client"] as const;
/** Container port names read as the cluster bus port, in order of preference. */
export const BUS_PORT_NAMES = ["cluster-bus", "bus", "tcp-valkey-bus", "tcp-redis-bus", "tcp-bus"] as const;

/** A pod's client and bus ports from its named container ports, else 6379 / 16379. */
export function podPorts(pod: PodRecord): { port: number; busPort: number } {
  const first = (names: readonly string[]): number | undefined =>
    names.map((n) => pod.ports[n]).find((x) => x !== undefined);
  return { port: first(CLIENT_PORT_NAMES) ?? VALKEY_PORT, busPort: first(BUS_PORT_NAMES) ?? VALKEY_BUS_PORT };
}

export function podOrdinal(name: string): number | undefined {
  const m = /-(\d+)$/.exec(name);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

/** Ordinal order first (StatefulSet order), then name. */
function byOrdinal(a: DiscoveredPod, b: DiscoveredPod): number {
  const oa = a.ordinal ?? Number.MAX_SAFE_INTEGER;
  const ob = b.ordinal ?? Number.MAX_SAFE_INTEGER;
  return oa - ob || a.name.localeCompare(b.name);
}

export async function discoverPods(api: PodApi, o: DiscoverOptions): Promise<DiscoveredPod[]> {
  const pods = await api.listPods(o.namespace, o.selector);
  const nodeNames = [...new Set(pods.map((p) => p.nodeName).filter((n): n is string => n !== undefined))];
  const zones = new Map(
    await Promise.all(
      nodeNames.map(async (n): Promise<[string, string | undefined]> => {
        try {
          return [n, (await api.getNode(n)).labels[ZONE_LABEL]];
        } catch (err) {
          throw new Error(`cannot read node ${n} (for the zone of its pods): ${(err as Error).message}`, {
            cause: err,
          });
        }
      }),
    ),
  );
  const portsOf = o.portsOf ?? podPorts;
  return pods
    .map((p) => ({
      name: p.name,
      podIP: p.podIP,
      nodeName: p.nodeName,
      zone: p.nodeName === undefined ? undefined : zones.get(p.nodeName),
      ready: p.ready,
      labels: p.labels,
      ordinal: podOrdinal(p.name),
      subdomain: p.subdomain,
      ...portsOf(p),
    }))
    .sort(byOrdinal);
}

/** Pods found but not (yet) usable: not ready, no IP, not scheduled or on a node without a zone. */
export class PodsNotUsableError extends Error {}

/** Names every pod that is not ready, has no IP or no zone; empty when all are usable. */
export function unusablePods(pods: readonly DiscoveredPod[]): string[] {
  return pods.flatMap((p) => {
    const why = [
      p.ready ? undefined : "not ready",
      p.podIP === undefined ? "no pod IP" : undefined,
      p.nodeName === undefined
        ? "not scheduled"
        : p.zone === undefined
          ? `node ${p.nodeName} has no ${ZONE_LABEL} label`
          : undefined,
    ].filter((x): x is string => x !== undefined);
    return why.length === 0 ? [] : [`${p.name} (${why.join(", ")})`];
  });
}
