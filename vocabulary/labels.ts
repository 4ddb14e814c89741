/**
 * The well-known zone label Kubernetes nodes carry (set by the cloud provider; by kwok and kube:local in the tests).
 */
export const ZONE_LABEL = "topology.kubernetes.io/zone";

/** `a=b,c=d`: a label selector from labels. */
export function selectorOf(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}
