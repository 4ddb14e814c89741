/**
 * Every Kubernetes object of a replication-mode release except the password Secret (which
 * needs the secret input): one primary StatefulSet pinned to the first zone, a replica
 * StatefulSet spread over all zones, services, PDB and NetworkPolicy. Pure: plain objects and
 * plain facts (names, pods, hosts) computed from the config.
 */
import type { ValkeyConfig } from "../../config/types.js";
import { PASSWORD_SECRET_KEY, VALKEY_PORT, releaseLabels, type Placement } from "../shared.js";
import { buildConfigMap, configHash } from "./config-map.js";
import type { ConfigMap, NetworkPolicy, PodDisruptionBudget, Service, StatefulSet } from "./k8s-types.js";
import { START_SCRIPT_KEY, podDnsName, releaseNames, serviceHost, statefulSetPods, type ReleaseNames } from "./naming.js";
import { buildNetworkPolicy } from "./network-policy.js";
import { buildPodDisruptionBudget } from "./pdb.js";
import { podPlacement } from "./pod-placement.js";
import { buildClientService, buildHeadlessService } from "./services.js";
import { renderStartScript } from "./start-script.js";
import { buildValkeyStatefulSet, roleSelector } from "./statefulset.js";
import { renderValkeyConf } from "./valkey-conf.js";

export const PRIMARY_CONF_KEY = "valkey-primary.conf";
export const REPLICA_CONF_KEY = "valkey-replica.conf";

export interface ReplicationInput {
  namespace: string;
  release: string;
  valkey: ValkeyConfig;
  placement: Placement;
  /** Whether the pods reference the password Secret. */
  auth: boolean;
  /** CIDRs the `direct` checks connect from; the NetworkPolicy admits them to 6379. @default [] */
  checkSourceCidrs?: string[];
}

export interface ReplicationPod {
  name: string;
  role: "primary" | "replica";
  dnsName: string;
}

export interface ReplicationFacts {
  names: ReleaseNames & { primaryStatefulSet: string; replicaStatefulSet: string; primaryService: string; readService: string };
  primaryHost: string;
  readHost: string;
  secretName: string | undefined;
  passwordKey: string | undefined;
  podSelector: Record<string, string>;
  primaryPod: string;
  replicaPods: string[];
  pods: ReplicationPod[];
  port: number;
}

export interface ReplicationManifests {
  facts: ReplicationFacts;
  configMap: ConfigMap;
  headlessService: Service;
  primaryService: Service;
  readService: Service;
  primary: StatefulSet;
  replica: StatefulSet;
  pdb: PodDisruptionBudget;
  networkPolicy: NetworkPolicy;
}

export function replicationFacts(i: ReplicationInput): ReplicationFacts {
  const base = releaseNames(i.release);
  const names = {
    ...base,
    primaryStatefulSet: `${i.release}-primary`,
    replicaStatefulSet: `${i.release}-replica`,
    primaryService: `${i.release}-primary`,
    readService: `${i.release}-read`,
  };
  const [primaryPod] = statefulSetPods(names.primaryStatefulSet, 1) as [string];
  const replicaPods = statefulSetPods(names.replicaStatefulSet, i.valkey.replication.replicas);
  const dns = (pod: string): string => podDnsName(pod, names.headless, i.namespace);
  return {
    names,
    primaryHost: serviceHost(names.primaryService, i.namespace),
    readHost: serviceHost(names.readService, i.namespace),
    secretName: i.auth ? names.secret : undefined,
    passwordKey: i.auth ? PASSWORD_SECRET_KEY : undefined,
    podSelector: releaseLabels(i.release),
    primaryPod,
    replicaPods,
    pods: [
      { name: primaryPod, role: "primary", dnsName: dns(primaryPod) },
      ...replicaPods.map((name) => ({ name, role: "replica" as const, dnsName: dns(name) })),
    ],
    port: VALKEY_PORT,
  };
}

export function buildReplicationManifests(i: ReplicationInput): ReplicationManifests {
  const facts = replicationFacts(i);
  const { names } = facts;
  const primaryDns = facts.pods[0]?.dnsName ?? "";
  const data = {
    [PRIMARY_CONF_KEY]: renderValkeyConf(i.valkey, { role: { kind: "primary" } }),
    [REPLICA_CONF_KEY]: renderValkeyConf(i.valkey, { role: { kind: "replica", primaryHost: primaryDns } }),
    [START_SCRIPT_KEY]: renderStartScript({ mode: "replication", auth: i.auth }),
  };
  const hash = configHash(data);
  const statefulSet = (role: "primary" | "replica"): StatefulSet => {
    const primary = role === "primary";
    return buildValkeyStatefulSet({
      name: primary ? names.primaryStatefulSet : names.replicaStatefulSet,
      namespace: i.namespace,
      release: i.release,
      role,
      replicas: primary ? 1 : i.valkey.replication.replicas,
      valkey: i.valkey,
      placement: podPlacement({
        placement: i.placement,
        releaseSelector: facts.podSelector,
        spreadOver: roleSelector(i.release, role),
        // The primary lives in the first zone; replicas spread over all of them.
        zones: primary ? i.placement.zones.slice(0, 1) : i.placement.zones,
      }),
      headless: names.headless,
      configMap: names.configMap,
      confKey: primary ? PRIMARY_CONF_KEY : REPLICA_CONF_KEY,
      configHash: hash,
      secretName: facts.secretName,
      storageClass: i.placement.storageClass ?? i.valkey.persistence.storageClass,
    });
  };
  return {
    facts,
    configMap: buildConfigMap(names.configMap, i.namespace, i.release, data),
    headlessService: buildHeadlessService({ name: names.headless, namespace: i.namespace, release: i.release, selector: facts.podSelector }),
    primaryService: buildClientService(names.primaryService, i.namespace, i.release, roleSelector(i.release, "primary")),
    readService: buildClientService(names.readService, i.namespace, i.release, roleSelector(i.release, "replica")),
    primary: statefulSet("primary"),
    replica: statefulSet("replica"),
    pdb: buildPodDisruptionBudget(names.pdb, i.namespace, i.release, facts.podSelector),
    networkPolicy: buildNetworkPolicy({ name: names.networkPolicy, namespace: i.namespace, release: i.release, podSelector: facts.podSelector, checkSourceCidrs: i.checkSourceCidrs }),
  };
}
