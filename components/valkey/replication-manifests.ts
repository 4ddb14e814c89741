/**
 * Every Kubernetes object of a replication-mode release except the two Secrets that need the
 * secret password (the password Secret and HAProxy's cfg, whose renderer is returned). No fixed
 * primary: ONE StatefulSet of equal members whose entrypoint asks the Sentinels who the primary
 * is (replication-start.ts) and writes `replicaof` (or nothing) into the replication include
 * every member's valkey.conf includes; the first ordinal is primary only on the very first
 * start. The Sentinels (sentinel-manifests.ts), the HAProxy write/read endpoints
 * (haproxy-manifests.ts), a PDB each, NetworkPolicies (replication-network-policy.ts). No RBAC:
 * nothing here talks to the Kubernetes API. Pure: plain objects and plain facts.
 */
import { monitoringOf, type Monitoring } from "./monitoring.js";
import type { MetricsConfig, ValkeyConfig } from "../../config/types.js";
import { scrapeOf } from "./metrics-pod.js";
import type { PodDefinition } from "../../pod/definition.js";
import { releaseLabels, type Placement } from "../shared.js";
import { PASSWORD_SECRET_KEY } from "../../pod/paths.js";
import { SENTINEL_PORT, VALKEY_PORT } from "../../vocabulary/ports.js";
import { buildConfigMap, configHash } from "./config-map.js";
import { buildHaproxyManifests, haproxyLabels, type HaproxyManifests } from "./haproxy-manifests.js";
import type { ConfigMap, NetworkPolicy, PodDisruptionBudget, Service, StatefulSet } from "./k8s-types.js";
import { podDnsName, releaseNames, serviceHost, statefulSetPods, type ReleaseNames } from "./naming.js";
import { buildPodDisruptionBudget } from "./pdb.js";
import { podPlacement } from "./pod-placement.js";
import { buildReplicationNetworkPolicies } from "./replication-network-policy.js";
import { DEFAULT_SWITCHOVER_TIMEOUT_SECONDS } from "../../pod/replication-prestop-script.js";
import { replicationMemberPod } from "../../pod/replication-member.js";
import { DEFAULT_MASTER_NAME } from "../../pod/replication-start.js";
import { sentinelPod } from "../../pod/sentinel.js";
import { buildSentinelManifests, sentinelLabels } from "./sentinel-manifests.js";
import { buildHeadlessService } from "./services.js";
import { DEFAULT_TERMINATION_GRACE_SECONDS, buildValkeyStatefulSet, roleSelector } from "./statefulset.js";
import { rolloutOf, type Rollout } from "./rollout.js";
import { restartFiles } from "../../pod/conf-directives.js";
import { releaseRestore, type RestoreSettings } from "./restore-init.js";

export interface ReplicationInput {
  namespace: string;
  release: string;
  valkey: ValkeyConfig;
  placement: Placement;
  /** Whether the pods reference the password Secret. */
  auth: boolean;
  /** CIDRs the `direct` checks connect from; the NetworkPolicy admits them to 6379. @default [] */
  checkSourceCidrs?: string[];
  /** `restore.from`: the members start from a backup (restore-init.ts). @default undefined */
  restore?: RestoreSettings;
  /** `metrics`: exporters, scrape annotations and the scrape rule (metrics-pod.ts). @default undefined (none) */
  metrics?: MetricsConfig;
}

export interface ReplicationPod {
  name: string;
  /** `<pod>.<headless>.<ns>.svc.cluster.local`: what the member announces and the Sentinels report. */
  dnsName: string;
}

export interface ReplicationNames extends ReleaseNames {
  statefulSet: string;
  writeService: string;
  readService: string;
  sentinelStatefulSet: string;
  sentinelHeadless: string;
  sentinelService: string;
  sentinelPdb: string;
  sentinelNetworkPolicy: string;
  haproxyDeployment: string;
  haproxySecret: string;
  haproxyPdb: string;
  haproxyNetworkPolicy: string;
}

export interface ReplicationFacts {
  names: ReplicationNames;
  /** The write Service (HAProxy → the current primary). */
  writeHost: string;
  /** The read Service (HAProxy → replicas only). */
  readHost: string;
  /** The Sentinel Service, for Sentinel-aware clients (with `masterName`). */
  sentinelHost: string;
  sentinelPort: number;
  masterName: string;
  secretName: string | undefined;
  passwordKey: string | undefined;
  /** Labels of the data members (not the Sentinels or proxies). */
  podSelector: Record<string, string>;
  sentinelSelector: Record<string, string>;
  /** Labels of the HAProxy pods behind the write and read Services: what a client of `writeHost` dials. */
  endpointSelector: Record<string, string>;
  /** Data members by ordinal; ordinal 0 is primary only on the very first start. */
  pods: ReplicationPod[];
  sentinels: ReplicationPod[];
  port: number;
}

export interface ReplicationManifests {
  facts: ReplicationFacts;
  configMap: ConfigMap;
  headlessService: Service;
  statefulSet: StatefulSet;
  pdb: PodDisruptionBudget;
  sentinel: ReturnType<typeof buildSentinelManifests>;
  haproxy: HaproxyManifests;
  haproxySecretMeta: { name: string; namespace: string; labels: Record<string, string> };
  networkPolicies: { members: NetworkPolicy; sentinels: NetworkPolicy; haproxy: NetworkPolicy };
  /** With `metrics.prometheusOperator`: the PodMonitors and the PrometheusRule (monitoring.ts). */
  monitoring?: Monitoring;
  /** With `metrics.dashboard.enabled`: the Grafana dashboard's ConfigMap (monitoring.ts). */
  dashboard?: ConfigMap;
  /** While `restore.from` is set: the members' egress to S3. */
  restoreNetworkPolicy?: NetworkPolicy;
  /** The RollingRestart step's inputs: the member and Sentinel StatefulSets and their template hash. */
  rollout: Rollout;
}

export function replicationFacts(i: ReplicationInput): ReplicationFacts {
  const r = i.release;
  const names: ReplicationNames = {
    ...releaseNames(r),
    statefulSet: r,
    writeService: `${r}-write`,
    readService: `${r}-read`,
    sentinelStatefulSet: `${r}-sentinel`,
    sentinelHeadless: `${r}-sentinel-headless`,
    sentinelService: `${r}-sentinel`,
    sentinelPdb: `${r}-sentinel-pdb`,
    sentinelNetworkPolicy: `${r}-sentinel-ingress`,
    haproxyDeployment: `${r}-haproxy`,
    haproxySecret: `${r}-haproxy`,
    haproxyPdb: `${r}-haproxy-pdb`,
    haproxyNetworkPolicy: `${r}-haproxy-ingress`,
  };
  const members = statefulSetPods(names.statefulSet, 1 + i.valkey.replication.replicas);
  const sentinels = statefulSetPods(names.sentinelStatefulSet, i.valkey.replication.sentinel.replicas);
  return {
    names,
    writeHost: serviceHost(names.writeService, i.namespace),
    readHost: serviceHost(names.readService, i.namespace),
    sentinelHost: serviceHost(names.sentinelService, i.namespace),
    sentinelPort: SENTINEL_PORT,
    masterName: DEFAULT_MASTER_NAME,
    secretName: i.auth ? names.secret : undefined,
    passwordKey: i.auth ? PASSWORD_SECRET_KEY : undefined,
    podSelector: releaseLabels(r),
    sentinelSelector: sentinelLabels(r),
    endpointSelector: haproxyLabels(r),
    pods: members.map((name) => ({ name, dnsName: podDnsName(name, names.headless, i.namespace) })),
    sentinels: sentinels.map((name) => ({ name, dnsName: podDnsName(name, names.sentinelHeadless, i.namespace) })),
    port: VALKEY_PORT,
  };
}

/** What each data member runs (pod/replication-member.ts): it asks the Sentinels who the primary is. */
function memberPodOf(i: ReplicationInput, facts: ReplicationFacts): PodDefinition {
  return replicationMemberPod({
    valkey: i.valkey,
    auth: i.auth,
    masterName: facts.masterName,
    sentinels: facts.sentinels.map((x) => `${x.dnsName}:${SENTINEL_PORT}`),
    restore: i.restore !== undefined,
  });
}

/** What each Sentinel runs (pod/sentinel.ts): on its very first start it monitors the first ordinal. */
function sentinelPodOf(i: ReplicationInput, facts: ReplicationFacts): PodDefinition {
  const s = i.valkey.replication.sentinel;
  return sentinelPod({
    auth: i.auth,
    masterName: facts.masterName,
    primary: { host: facts.pods[0]?.dnsName ?? "", port: VALKEY_PORT },
    quorum: s.quorum,
    downAfterMs: s.downAfterMilliseconds,
    failoverTimeoutMs: s.failoverTimeoutMs,
    parallelSyncs: s.parallelSyncs,
    hostnames: true,
  });
}

/** While `restore.from` is set: what the members gain to start from the backup (restore-init.ts). */
function restoreOf(i: ReplicationInput, facts: ReplicationFacts, memberSelector: Record<string, string>) {
  return releaseRestore({
    restore: i.restore,
    mode: "replication",
    primaries: 1,
    release: i.release,
    namespace: i.namespace,
    valkeyImage: i.valkey.image,
    headless: facts.names.headless,
    secretName: facts.secretName,
    podSelector: memberSelector,
  });
}

interface MemberSetInput {
  i: ReplicationInput;
  facts: ReplicationFacts;
  member: PodDefinition;
  memberSelector: Record<string, string>;
  restore: ReturnType<typeof restoreOf>;
  storageClass: string | undefined;
}

/** The one StatefulSet of equal members. */
function memberStatefulSet({ i, facts, member, memberSelector, restore, storageClass }: MemberSetInput): StatefulSet {
  const { names } = facts;
  return buildValkeyStatefulSet({
    name: names.statefulSet,
    namespace: i.namespace,
    release: i.release,
    role: "member",
    replicas: 1 + i.valkey.replication.replicas,
    valkey: i.valkey,
    // Every member may become primary: all of them spread hard over every zone.
    placement: podPlacement({
      placement: i.placement,
      releaseSelector: facts.podSelector,
      spreadOver: memberSelector,
    }),
    headless: names.headless,
    configMap: names.configMap,
    pod: member,
    // Only what a restart is needed for: the LIVE directives are the LiveConfig step's.
    configHash: configHash(restartFiles(member.files)),
    secretName: facts.secretName,
    storageClass,
    // Room for the preStop switchover and then an RDB save at shutdown.
    terminationGracePeriodSeconds: DEFAULT_SWITCHOVER_TIMEOUT_SECONDS + DEFAULT_TERMINATION_GRACE_SECONDS,
    restore: restore?.pod,
    metrics: i.metrics,
  });
}

/** The Sentinels' StatefulSet, Services and PDB (sentinel-manifests.ts). */
function sentinelManifestsOf(
  i: ReplicationInput,
  facts: ReplicationFacts,
  sentinel: PodDefinition,
  storageClass: string | undefined,
): ReplicationManifests["sentinel"] {
  const { names } = facts;
  return buildSentinelManifests({
    namespace: i.namespace,
    release: i.release,
    image: i.valkey.image,
    replicas: i.valkey.replication.sentinel.replicas,
    placement: i.placement,
    statefulSet: names.sentinelStatefulSet,
    headless: names.sentinelHeadless,
    service: names.sentinelService,
    pdb: names.sentinelPdb,
    configMap: names.configMap,
    configHash: configHash(sentinel.files),
    pod: sentinel,
    secretName: facts.secretName,
    storageClass,
    memberSelector: facts.podSelector,
    metrics: i.metrics,
  });
}

/** The HAProxy write/read endpoints (haproxy-manifests.ts). */
function haproxyManifestsOf(i: ReplicationInput, facts: ReplicationFacts): HaproxyManifests {
  const { names } = facts;
  return buildHaproxyManifests({
    namespace: i.namespace,
    release: i.release,
    image: i.valkey.replication.haproxyImage,
    placement: i.placement,
    deployment: names.haproxyDeployment,
    cfgSecret: names.haproxySecret,
    writeService: names.writeService,
    readService: names.readService,
    pdb: names.haproxyPdb,
    members: facts.pods,
    memberPort: VALKEY_PORT,
    sentinels: facts.sentinels,
    masterName: facts.masterName,
    memberSelector: facts.podSelector,
    metrics: i.metrics,
  });
}

/** The members', Sentinels' and proxies' NetworkPolicies (replication-network-policy.ts). */
function networkPoliciesOf(i: ReplicationInput, facts: ReplicationFacts): ReplicationManifests["networkPolicies"] {
  const { names } = facts;
  return buildReplicationNetworkPolicies({
    namespace: i.namespace,
    release: i.release,
    names: {
      members: names.networkPolicy,
      sentinels: names.sentinelNetworkPolicy,
      haproxy: names.haproxyNetworkPolicy,
    },
    members: facts.podSelector,
    sentinels: facts.sentinelSelector,
    haproxy: haproxyLabels(i.release),
    checkSourceCidrs: i.checkSourceCidrs,
    scrape: scrapeOf(i.metrics),
  });
}

export function buildReplicationManifests(i: ReplicationInput): ReplicationManifests {
  const facts = replicationFacts(i);
  const { names } = facts;
  const member = memberPodOf(i, facts);
  const sentinel = sentinelPodOf(i, facts);
  const storageClass = i.placement.storageClass ?? i.valkey.persistence.storageClass;
  const memberSelector = roleSelector(i.release, "member");
  const restore = restoreOf(i, facts, memberSelector);
  const m: Omit<ReplicationManifests, "rollout"> = {
    facts,
    ...monitoringOf(i),
    configMap: buildConfigMap(names.configMap, i.namespace, i.release, {
      ...member.files,
      ...sentinel.files,
      ...restore?.files,
    }),
    headlessService: buildHeadlessService({
      name: names.headless,
      namespace: i.namespace,
      release: i.release,
      selector: facts.podSelector,
    }),
    statefulSet: memberStatefulSet({ i, facts, member, memberSelector, restore, storageClass }),
    pdb: buildPodDisruptionBudget(names.pdb, i.namespace, i.release, facts.podSelector),
    sentinel: sentinelManifestsOf(i, facts, sentinel, storageClass),
    haproxy: haproxyManifestsOf(i, facts),
    haproxySecretMeta: { name: names.haproxySecret, namespace: i.namespace, labels: releaseLabels(i.release) },
    networkPolicies: networkPoliciesOf(i, facts),
    ...(restore === undefined ? {} : { restoreNetworkPolicy: restore.networkPolicy }),
  };
  return { ...m, rollout: rolloutOf([m.statefulSet, m.sentinel.statefulSet], member.files) };
}
