/**
 * Every Kubernetes object of a cluster-mode release except the password Secret: one StatefulSet
 * of P × (1 + M) cluster-enabled members (no slots: the ClusterBootstrap assigns them after the
 * pods exist), headless and client Services, PDB and NetworkPolicy. Pure.
 */
import { monitoringOf, type Monitoring } from "./monitoring.js";
import type { MetricsConfig, ValkeyConfig } from "../../config/types.js";
import { scrapeOf } from "./metrics-pod.js";
import { releaseLabels, type Placement } from "../shared.js";
import { PASSWORD_SECRET_KEY } from "../../pod/paths.js";
import { VALKEY_BUS_PORT, VALKEY_PORT } from "../../vocabulary/ports.js";
import { buildConfigMap, configHash } from "./config-map.js";
import type { ConfigMap, NetworkPolicy, PodDisruptionBudget, Service, StatefulSet } from "./k8s-types.js";
import { podDnsName, releaseNames, serviceHost, statefulSetPods, type ReleaseNames } from "./naming.js";
import { buildNetworkPolicy } from "./network-policy.js";
import { buildPodDisruptionBudget } from "./pdb.js";
import { podPlacement } from "./pod-placement.js";
import { DEFAULT_FAILOVER_TIMEOUT_SECONDS } from "../../pod/prestop-script.js";
import { clusterMemberPod } from "../../pod/cluster-member.js";
import { buildClientService, buildHeadlessService } from "./services.js";
import { DEFAULT_TERMINATION_GRACE_SECONDS, buildValkeyStatefulSet } from "./statefulset.js";
import { rolloutOf, type Rollout } from "./rollout.js";
import { restartFiles } from "../../pod/conf-directives.js";
import { releaseRestore, type RestoreSettings } from "./restore-init.js";

/** A member must stay ready (synced, cluster ok) this long before a rollout moves on. */
export const CLUSTER_MIN_READY_SECONDS = 10;

export interface ClusterInput {
  namespace: string;
  release: string;
  valkey: ValkeyConfig;
  placement: Placement;
  auth: boolean;
  /** CIDRs the `direct` checks connect from; the NetworkPolicy admits them to 6379. @default [] */
  checkSourceCidrs?: string[];
  /** `restore.from`: the members start from a backup (restore-init.ts). @default undefined */
  restore?: RestoreSettings;
  /** `metrics`: exporters, scrape annotations and the scrape rule (metrics-pod.ts). @default undefined (none) */
  metrics?: MetricsConfig;
}

export interface ClusterFacts {
  names: ReleaseNames & { statefulSet: string; clientService: string };
  clientHost: string;
  headlessService: string;
  secretName: string | undefined;
  passwordKey: string | undefined;
  podSelector: Record<string, string>;
  pods: { name: string; dnsName: string }[];
  port: number;
  busPort: number;
}

export interface ClusterManifests {
  facts: ClusterFacts;
  configMap: ConfigMap;
  headlessService: Service;
  clientService: Service;
  statefulSet: StatefulSet;
  pdb: PodDisruptionBudget;
  networkPolicy: NetworkPolicy;
  /** With `metrics.prometheusOperator`: the PodMonitors and the PrometheusRule (monitoring.ts). */
  monitoring?: Monitoring;
  /** With `metrics.dashboard.enabled`: the Grafana dashboard's ConfigMap (monitoring.ts). */
  dashboard?: ConfigMap;
  /** While `restore.from` is set: the members' egress to S3. */
  restoreNetworkPolicy?: NetworkPolicy;
  /** The RollingRestart step's inputs: the member StatefulSet and its template hash. */
  rollout: Rollout;
}

/** Members of a cluster: primaries × (1 + replicasPerPrimary). */
export function clusterPodCount(valkey: ValkeyConfig): number {
  return valkey.cluster.primaries * (1 + valkey.cluster.replicasPerPrimary);
}

export function clusterFacts(i: ClusterInput): ClusterFacts {
  const names = { ...releaseNames(i.release), statefulSet: i.release, clientService: i.release };
  return {
    names,
    clientHost: serviceHost(names.clientService, i.namespace),
    headlessService: names.headless,
    secretName: i.auth ? names.secret : undefined,
    passwordKey: i.auth ? PASSWORD_SECRET_KEY : undefined,
    podSelector: releaseLabels(i.release),
    pods: statefulSetPods(names.statefulSet, clusterPodCount(i.valkey)).map((name) => ({
      name,
      dnsName: podDnsName(name, names.headless, i.namespace),
    })),
    port: VALKEY_PORT,
    busPort: VALKEY_BUS_PORT,
  };
}

export function buildClusterManifests(i: ClusterInput): ClusterManifests {
  const facts = clusterFacts(i);
  const { names } = facts;
  const pod = clusterMemberPod({ valkey: i.valkey, auth: i.auth, restore: i.restore !== undefined });
  const restore = releaseRestore({
    restore: i.restore,
    mode: "cluster",
    primaries: i.valkey.cluster.primaries,
    release: i.release,
    namespace: i.namespace,
    valkeyImage: i.valkey.image,
    headless: names.headless,
    secretName: facts.secretName,
    podSelector: facts.podSelector,
  });
  const data = { ...pod.files, ...restore?.files };
  const m: Omit<ClusterManifests, "rollout"> = {
    facts,
    ...monitoringOf(i),
    configMap: buildConfigMap(names.configMap, i.namespace, i.release, data),
    headlessService: buildHeadlessService({
      name: names.headless,
      namespace: i.namespace,
      release: i.release,
      selector: facts.podSelector,
      busPort: true,
    }),
    clientService: buildClientService(names.clientService, i.namespace, i.release, facts.podSelector),
    statefulSet: buildValkeyStatefulSet({
      name: names.statefulSet,
      namespace: i.namespace,
      release: i.release,
      role: "member",
      replicas: clusterPodCount(i.valkey),
      valkey: i.valkey,
      placement: podPlacement({
        placement: i.placement,
        releaseSelector: facts.podSelector,
        spreadOver: facts.podSelector,
      }),
      headless: names.headless,
      configMap: names.configMap,
      pod,
      // Only what a restart is needed for: the LIVE directives are the LiveConfig step's.
      configHash: configHash(restartFiles(data)),
      secretName: facts.secretName,
      storageClass: i.placement.storageClass ?? i.valkey.persistence.storageClass,
      clusterMember: true,
      minReadySeconds: CLUSTER_MIN_READY_SECONDS,
      restore: restore?.pod,
      metrics: i.metrics,
      // Room for the preStop failover and then an RDB save at shutdown.
      terminationGracePeriodSeconds: DEFAULT_FAILOVER_TIMEOUT_SECONDS + DEFAULT_TERMINATION_GRACE_SECONDS,
    }),
    pdb: buildPodDisruptionBudget(names.pdb, i.namespace, i.release, facts.podSelector),
    networkPolicy: buildNetworkPolicy({
      name: names.networkPolicy,
      namespace: i.namespace,
      release: i.release,
      podSelector: facts.podSelector,
      clusterBus: true,
      checkSourceCidrs: i.checkSourceCidrs,
      scrape: scrapeOf(i.metrics),
    }),
    ...(restore === undefined ? {} : { restoreNetworkPolicy: restore.networkPolicy }),
  };
  return { ...m, rollout: rolloutOf([m.statefulSet], data) };
}
