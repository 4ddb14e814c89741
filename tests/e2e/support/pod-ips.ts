/**
 * The CNI half of a recreated pod for the e2e plane (ControlPlaneOptions.freshPodIps): every
 * StatefulSet pod, once scheduled, gets an address of its node's pod CIDR that no pod of this
 * plane has had before, written to POD_IP_ANNOTATION; kwok's pod-ready stage (freshIpPodReady)
 * then reports it as the pod IP. Addresses are taken from the top of each node's /24 downwards
 * (kwok's own pool, for the other pods, counts upwards from the bottom), and one in use by any pod
 * is skipped. So a member deleted and recreated by its StatefulSet comes back on a new address,
 * as it may on a real cluster, instead of on the address kwok's pool would hand back first.
 */
import { pollInBackground } from "../../support/background-poll.js";
import { POD_IP_ANNOTATION } from "./kwok-config.js";

type Api = <T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  opts?: { contentType?: string; allow?: number[] },
) => Promise<{ status: number; body: T }>;

interface PodItem {
  metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status?: { podIP?: string };
}

export interface PodIpAllocator {
  /** Errors (a node without a usable /24 pod CIDR, exhausted addresses), reported by the plane's user. */
  readonly errors: string[];
  stop(): Promise<void>;
}

/** The next never-given address of a /24 pod CIDR, from the top down; undefined when exhausted. */
export function nextFreshIp(cidr: string, given: ReadonlySet<string>, inUse: ReadonlySet<string>): string | undefined {
  const m = /^(\d+\.\d+\.\d+)\.0\/24$/.exec(cidr);
  if (m === null) throw new Error(`fresh pod IPs need a /24 pod CIDR per node, got ${cidr}`);
  for (let host = 254; host >= 128; host--) {
    const ip = `${m[1]}.${host}`;
    if (!given.has(ip) && !inUse.has(ip)) return ip;
  }
  return undefined;
}

/** Annotates scheduled StatefulSet pods with a fresh IP until stopped (polls every 150 ms). */
export function startPodIpAllocator(api: Api): PodIpAllocator {
  const errors: string[] = [];
  const given = new Set<string>();
  const cidrs = new Map<string, string>();

  const cidrOf = async (node: string): Promise<string> => {
    const known = cidrs.get(node);
    if (known !== undefined) return known;
    const { body } = await api<{ spec: { podCIDR?: string } }>("GET", `/api/v1/nodes/${node}`);
    const cidr = body.spec.podCIDR;
    if (cidr === undefined) throw new Error(`node ${node} has no pod CIDR: fresh pod IPs need one`);
    cidrs.set(node, cidr);
    return cidr;
  };

  const tick = async (): Promise<void> => {
    const { body } = await api<{ items: PodItem[] }>("GET", "/api/v1/pods");
    const inUse = new Set(
      body.items.flatMap((p) => [p.status?.podIP, p.metadata.annotations?.[POD_IP_ANNOTATION]].filter((x): x is string => x !== undefined)),
    );
    for (const ip of inUse) given.add(ip);
    const waiting = body.items.filter(
      (p) =>
        p.spec.nodeName !== undefined &&
        p.metadata.deletionTimestamp === undefined &&
        p.metadata.annotations?.[POD_IP_ANNOTATION] === undefined &&
        p.metadata.labels?.["statefulset.kubernetes.io/pod-name"] !== undefined,
    );
    for (const p of waiting) {
      let cidr: string;
      try {
        cidr = await cidrOf(p.spec.nodeName as string);
      } catch (e) {
        // One pod on a node without a pod CIDR must not hold back the others.
        const msg = `${p.metadata.namespace}/${p.metadata.name}: ${(e as Error).message}`;
        if (!errors.includes(msg)) errors.push(msg);
        continue;
      }
      const ip = nextFreshIp(cidr, given, inUse);
      if (ip === undefined) {
        errors.push(`node ${p.spec.nodeName}: no fresh pod IP left for ${p.metadata.namespace}/${p.metadata.name}`);
        continue;
      }
      given.add(ip);
      const patch = { metadata: { annotations: { [POD_IP_ANNOTATION]: ip } } };
      await api("PATCH", `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`, patch, {
        contentType: "application/merge-patch+json",
        allow: [404, 409],
      });
    }
  };

  const poll = pollInBackground(tick, 150, (e) => {
    const msg = (e as Error).message;
    if (!errors.includes(msg) && !/ECONNREFUSED|timed out/.test(msg)) errors.push(msg);
  });
  return { errors, stop: () => poll.stop() };
}
