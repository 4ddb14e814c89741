/** The well-known zone label Kubernetes nodes carry (set by the cloud provider; by kwok and kube:local in the tests). */
export const ZONE_LABEL = "topology.kubernetes.io/zone";
