/**
 * The verifier's and planner's `ZoneSource` on Kubernetes: pod -> node -> the node's
 * `topology.kubernetes.io/zone`, keyed by every address a pod may be announced by (pod IP and
 * stable DNS names, each with the pod's client port).
 */
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import type { ZoneSource } from "../../core/topology/zones.js";
import { normalHost, podHosts, type AddressOptions } from "./pod-addresses.js";
import type { PodApi } from "./pod-api.js";
import { discoverPods, type DiscoverOptions, type DiscoveredPod } from "./pod-discovery.js";

/** `host:port` -> zone for every address of every pod with a known zone. */
export function zoneMapForPods(pods: readonly DiscoveredPod[], o: AddressOptions): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of pods) {
    if (p.zone === undefined) continue;
    for (const host of podHosts(p, o)) {
      const key = endpointKey({ host: normalHost(host), port: p.port });
      if (!out.has(key)) out.set(key, p.zone);
    }
  }
  return out;
}

export type KubernetesZoneSourceOptions = DiscoverOptions & AddressOptions;

export class KubernetesZoneSource implements ZoneSource {
  constructor(
    private readonly api: PodApi,
    private readonly o: KubernetesZoneSourceOptions,
  ) {}

  /** Discovers the pods afresh on every call (pods move between nodes when they restart). */
  async zonesFor(endpoints: readonly NodeEndpoint[]): Promise<Map<string, string>> {
    const all = zoneMapForPods(await discoverPods(this.api, this.o), this.o);
    const out = new Map<string, string>();
    for (const e of endpoints) {
      const key = endpointKey({ host: normalHost(e.host), port: e.port });
      const zone = all.get(key);
      if (zone !== undefined) out.set(endpointKey(e), zone);
    }
    return out;
  }
}
