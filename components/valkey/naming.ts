/**
 * Names and DNS names shared by the replication and cluster builders. All plain
 * functions of the release, namespace and config, so outputs are known before deployment.
 */

/** Kubernetes cluster DNS domain. */
export const CLUSTER_DOMAIN = "cluster.local";

/** `<service>.<namespace>.svc.cluster.local`. */
export function serviceHost(service: string, namespace: string): string {
  return `${service}.${namespace}.svc.${CLUSTER_DOMAIN}`;
}

/** A StatefulSet pod's stable DNS name through its governing headless Service. */
export function podDnsName(pod: string, headless: string, namespace: string): string {
  return `${pod}.${headless}.${namespace}.svc.${CLUSTER_DOMAIN}`;
}

/** The same, with the pod name left to Kubernetes' `$(POD_NAME)` env expansion. */
export function podDnsTemplate(headless: string, namespace: string): string {
  return podDnsName("$(POD_NAME)", headless, namespace);
}

/** The pods of a StatefulSet, by ordinal. */
export function statefulSetPods(statefulSet: string, replicas: number): string[] {
  return Array.from({ length: replicas }, (_, i) => `${statefulSet}-${i}`);
}

/** Kubernetes object names of one release (identical for every stack with the same release). */
export interface ReleaseNames {
  secret: string;
  configMap: string;
  headless: string;
  pdb: string;
  networkPolicy: string;
}

export function releaseNames(release: string): ReleaseNames {
  return {
    secret: `${release}-auth`,
    configMap: `${release}-config`,
    headless: `${release}-headless`,
    pdb: `${release}-pdb`,
    networkPolicy: `${release}-ingress`,
  };
}
