/**
 * The names a Valkey pod is announced or reached by: its pod IP, and its stable DNS names
 * through the headless Service (`<pod>.<headless>.<ns>.svc.cluster.local`, `<pod>.<headless>.<ns>.svc`,
 * shorter forms). Zone lookups and the port-forward connector both key pods by these.
 */
import type { DiscoveredPod } from "./pod-discovery.js";

export interface AddressOptions {
  namespace: string;
  /** Headless Service name; falls back to each pod's spec.subdomain. */
  headlessService?: string;
  /** @default "cluster.local" */
  clusterDomain?: string;
}

/** Every host a pod may be announced by, most specific first. */
export function podHosts(pod: DiscoveredPod, o: AddressOptions): string[] {
  const hosts: string[] = [];
  if (pod.podIP !== undefined) hosts.push(pod.podIP);
  const headless = o.headlessService ?? pod.subdomain;
  if (headless !== undefined && headless !== "") {
    const base = `${pod.name}.${headless}.${o.namespace}`;
    hosts.push(`${base}.svc.${o.clusterDomain ?? "cluster.local"}`, `${base}.svc`, base, `${pod.name}.${headless}`);
  }
  hosts.push(pod.name);
  return hosts;
}

/** Lower-cased host (DNS names are case-insensitive; a trailing dot is the same name). */
export function normalHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, "");
}

/** host -> pod over every pod's hosts; the first pod to claim a host keeps it. */
export function podsByHost(pods: readonly DiscoveredPod[], o: AddressOptions): Map<string, DiscoveredPod> {
  const out = new Map<string, DiscoveredPod>();
  for (const p of pods) {
    for (const h of podHosts(p, o)) if (!out.has(normalHost(h))) out.set(normalHost(h), p);
  }
  return out;
}

/** The pod announced as `host:port`: one of its hosts (podHosts) and its client port. */
export function podAnnouncedAs(
  address: string,
  pods: readonly DiscoveredPod[],
  o: AddressOptions,
): DiscoveredPod | undefined {
  const at = address.lastIndexOf(":");
  const host = normalHost(address.slice(0, at));
  const port = Number(address.slice(at + 1));
  return pods.find((p) => p.port === port && podHosts(p, o).some((h) => normalHost(h) === host));
}
