/**
 * Where a Valkey pod may run: node selector and tolerations from the Placement, a required
 * node affinity to the placement's zones (or one zone, for the replication primary), a hard
 * zone spread (maxSkew 1, DoNotSchedule) over the pods `spreadOver` selects, a soft per-node
 * anti-affinity against every pod of the release, and, where the placement says `membersPerNode:
 * "one"`, a required one against the other members (`spreadOver`).
 */
import { type Placement } from "../shared.js";
import { ZONE_LABEL } from "../../vocabulary/labels.js";
import type { Affinity, KubeToleration, PodSpec, TopologySpreadConstraint } from "./k8s-types.js";

export const HOSTNAME_LABEL = "kubernetes.io/hostname";
/** Weight of the soft per-node anti-affinity. */
export const NODE_ANTI_AFFINITY_WEIGHT = 100;

export interface PodPlacementOptions {
  placement: Placement;
  /** Labels of every pod of the release: the per-node anti-affinity keeps away from all of them. */
  releaseSelector: Record<string, string>;
  /** Labels of the pods the zone spread balances (e.g. the replicas only). */
  spreadOver: Record<string, string>;
  /** Zones this pod may run in. @default placement.zones */
  zones?: string[];
}

export type PodPlacement = Required<
  Pick<PodSpec, "nodeSelector" | "tolerations" | "affinity" | "topologySpreadConstraints">
>;

export function toKubeTolerations(placement: Placement): KubeToleration[] {
  return placement.tolerations.map((t) => {
    const out: KubeToleration = { operator: t.operator };
    if (t.key !== undefined) out.key = t.key;
    if (t.value !== undefined) out.value = t.value;
    if (t.effect !== undefined) out.effect = t.effect;
    if (t.tolerationSeconds !== undefined) out.tolerationSeconds = t.tolerationSeconds;
    return out;
  });
}

export function podAffinity(releaseSelector: Record<string, string>, zones: string[]): Affinity {
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE_LABEL, operator: "In", values: [...zones] }] }],
      },
    },
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: NODE_ANTI_AFFINITY_WEIGHT,
          podAffinityTerm: { topologyKey: HOSTNAME_LABEL, labelSelector: { matchLabels: { ...releaseSelector } } },
        },
      ],
    },
  };
}

export function zoneSpread(spreadOver: Record<string, string>, zoneCount: number): TopologySpreadConstraint {
  const c: TopologySpreadConstraint = {
    maxSkew: 1,
    topologyKey: ZONE_LABEL,
    whenUnsatisfiable: "DoNotSchedule",
    labelSelector: { matchLabels: { ...spreadOver } },
  };
  // Count zones without a node yet (Karpenter provisions on demand) as empty domains.
  if (zoneCount > 1) c.minDomains = zoneCount;
  return c;
}

export function podPlacement(o: PodPlacementOptions): PodPlacement {
  const zones = o.zones ?? o.placement.zones;
  if (zones.length === 0) throw new Error("placement has no zones");
  const affinity = podAffinity(o.releaseSelector, zones);
  if (o.placement.membersPerNode === "one") {
    const apart = { topologyKey: HOSTNAME_LABEL, labelSelector: { matchLabels: { ...o.spreadOver } } };
    affinity.podAntiAffinity = { ...affinity.podAntiAffinity, requiredDuringSchedulingIgnoredDuringExecution: [apart] };
  }
  return {
    nodeSelector: { ...o.placement.nodeSelector },
    tolerations: toKubeTolerations(o.placement),
    affinity,
    topologySpreadConstraints: [zoneSpread(o.spreadOver, zones.length)],
  };
}
