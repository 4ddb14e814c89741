/**
 * Names, DNS names and in-pod paths shared by the replication and cluster builders. All plain
 * functions of the release, namespace and config, so outputs are known before deployment.
 */

/** Kubernetes cluster DNS domain. */
export const CLUSTER_DOMAIN = "cluster.local";

/** Where the ConfigMap (valkey.conf files and scripts) is mounted. */
export const CONFIG_MOUNT = "/etc/valkey";
/** Where the password Secret is mounted; the start script reads the password file from here. */
export const SECRET_MOUNT = "/etc/valkey-secret";
/** Memory-backed directory for the generated includes (auth.conf, announce.conf): never on disk. */
export const RUN_DIR = "/run/valkey";
/** The data volume: RDB, AOF and cluster nodes.conf. */
export const DATA_DIR = "/data";

/** ConfigMap keys. */
export const START_SCRIPT_KEY = "start.sh";
export const PRESTOP_SCRIPT_KEY = "prestop.sh";
export const HEAL_SCRIPT_KEY = "heal.sh";
export const REJOIN_SCRIPT_KEY = "rejoin.sh";
export const READINESS_SCRIPT_KEY = "readiness.sh";
export const FAILBACK_SCRIPT_KEY = "failback.sh";

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
