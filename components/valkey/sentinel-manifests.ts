/**
 * The Sentinels of a replication release: one StatefulSet (one Sentinel per zone: a hard zone
 * spread plus a required per-zone anti-affinity), a headless Service publishing not-ready
 * addresses (each Sentinel's stable DNS name is what it announces, so a restarted Sentinel
 * with a new IP is still found), a client Service for Sentinel-aware clients, a PVC per
 * Sentinel for its state file, and its own PodDisruptionBudget. Pure.
 */
import { releaseLabels, type Placement } from "../shared.js";
import { ZONE_LABEL } from "../../vocabulary/labels.js";
import type { PodDefinition } from "../../pod/definition.js";
import { SENTINEL_DATA_DIR } from "../../pod/sentinel.js";
import { SENTINEL_PORT } from "../../vocabulary/ports.js";
import type { PodDisruptionBudget, PodSpec, Service, StatefulSet } from "./k8s-types.js";
import { podEnv } from "./pod-env.js";
import { CONFIG_MOUNT, SECRET_MOUNT } from "../../pod/paths.js";
import { podAffinity, toKubeTolerations, zoneSpread } from "./pod-placement.js";
import { hardenedPod, restrictedContainer } from "./pod-security.js";
import { VALKEY_UID } from "./statefulset.js";
import { ROLLED_BY_STEP } from "./rollout.js";
import type { MetricsConfig } from "../../config/types.js";
import { serverMetrics } from "./metrics-pod.js";

export const SENTINEL_VOLUME_SIZE = "1Gi";
export const SENTINEL_RESOURCES = {
  requests: { cpu: "100m", memory: "64Mi" },
  limits: { cpu: "500m", memory: "256Mi" },
};

/** Labels of the Sentinel pods: the release's, but a different name, so the data-member selector never matches them. */
export function sentinelLabels(release: string): Record<string, string> {
  return {
    ...releaseLabels(release),
    "app.kubernetes.io/name": "valkey-sentinel",
    "app.kubernetes.io/component": "sentinel",
  };
}

export interface SentinelManifestOptions {
  namespace: string;
  release: string;
  image: string;
  replicas: number;
  placement: Placement;
  statefulSet: string;
  headless: string;
  service: string;
  pdb: string;
  configMap: string;
  configHash: string;
  /** What each Sentinel pod runs (pod/sentinel.ts): its command and the env its scripts read. */
  pod: PodDefinition;
  secretName: string | undefined;
  storageClass: string | undefined;
  /** Labels of the data members (the soft per-node anti-affinity keeps Sentinels off their nodes when it can). */
  memberSelector: Record<string, string>;
  /** `metrics`: with `enabled`, an exporter beside each Sentinel and the scrape annotations. @default undefined */
  metrics?: MetricsConfig;
}

export interface SentinelManifests {
  statefulSet: StatefulSet;
  headlessService: Service;
  service: Service;
  pdb: PodDisruptionBudget;
}

const sentinelPort = { name: "sentinel", port: SENTINEL_PORT, targetPort: "sentinel", protocol: "TCP" };

/** The members' soft per-node anti-affinity, plus at most one Sentinel per zone. */
function sentinelAffinity(o: SentinelManifestOptions, labels: Record<string, string>): ReturnType<typeof podAffinity> {
  const affinity = podAffinity(o.memberSelector, o.placement.zones);
  // At most one Sentinel per zone: losing a zone loses one vote, never the quorum.
  affinity.podAntiAffinity = {
    ...affinity.podAntiAffinity,
    requiredDuringSchedulingIgnoredDuringExecution: [
      { topologyKey: ZONE_LABEL, labelSelector: { matchLabels: { ...labels } } },
    ],
  };
  return affinity;
}

type VolumeMount = { name: string; mountPath: string; readOnly?: boolean };

/** The state volume and the config, plus the password Secret with auth on: mounts and pod volumes. */
function sentinelVolumes(o: SentinelManifestOptions): {
  mounts: VolumeMount[];
  volumes: NonNullable<PodSpec["volumes"]>;
} {
  const mounts = [
    { name: "data", mountPath: SENTINEL_DATA_DIR },
    { name: "config", mountPath: CONFIG_MOUNT, readOnly: true },
  ];
  const volumes: NonNullable<PodSpec["volumes"]> = [
    { name: "config", configMap: { name: o.configMap, defaultMode: 0o444 } },
  ];
  if (o.secretName !== undefined) {
    mounts.push({ name: "auth", mountPath: SECRET_MOUNT, readOnly: true });
    volumes.push({ name: "auth", secret: { secretName: o.secretName, defaultMode: 0o400 } });
  }
  return { mounts, volumes };
}

/** Each Sentinel's claim for its state file. */
function sentinelPvcSpec(o: SentinelManifestOptions): Record<string, unknown> {
  const pvcSpec: Record<string, unknown> = {
    accessModes: ["ReadWriteOnce"],
    resources: { requests: { storage: SENTINEL_VOLUME_SIZE } },
  };
  if (o.storageClass !== undefined) pvcSpec.storageClassName = o.storageClass;
  return pvcSpec;
}

/** The Sentinel container's name (its logs: `kubectl logs -c sentinel`). */
export const SENTINEL_CONTAINER = "sentinel";

/** The Sentinel container: ready once it answers PING, alive while its port accepts. */
function sentinelContainer(
  o: SentinelManifestOptions,
  env: ReturnType<typeof podEnv>,
  mounts: VolumeMount[],
): NonNullable<PodSpec["containers"]>[number] {
  return {
    name: SENTINEL_CONTAINER,
    image: o.image,
    imagePullPolicy: "IfNotPresent",
    command: o.pod.command,
    ports: [{ name: "sentinel", containerPort: SENTINEL_PORT, protocol: "TCP" }],
    env,
    resources: SENTINEL_RESOURCES,
    readinessProbe: {
      exec: {
        command: ["sh", "-c", `[ "$(timeout 3 valkey-cli -h 127.0.0.1 -p ${SENTINEL_PORT} ping)" = PONG ]`],
      },
      initialDelaySeconds: 3,
      periodSeconds: 5,
      timeoutSeconds: 4,
      failureThreshold: 3,
    },
    livenessProbe: {
      tcpSocket: { port: SENTINEL_PORT },
      initialDelaySeconds: 15,
      periodSeconds: 10,
      timeoutSeconds: 5,
      failureThreshold: 6,
    },
    volumeMounts: mounts,
    securityContext: restrictedContainer(),
  };
}

function sentinelStatefulSet(o: SentinelManifestOptions, labels: Record<string, string>): StatefulSet {
  const affinity = sentinelAffinity(o, labels);
  const env = podEnv(o.pod, {
    owner: `StatefulSet ${o.statefulSet}`,
    headless: o.headless,
    namespace: o.namespace,
    secretName: o.secretName,
  });
  const { mounts, volumes } = sentinelVolumes(o);
  const pvcSpec = sentinelPvcSpec(o);
  const metrics = serverMetrics(o.metrics, {
    component: "sentinel",
    serverPort: SENTINEL_PORT,
    secretName: o.secretName,
    owner: `StatefulSet ${o.statefulSet}`,
    headless: o.headless,
    namespace: o.namespace,
  });
  return {
    metadata: { name: o.statefulSet, namespace: o.namespace, labels },
    spec: {
      serviceName: o.headless,
      replicas: o.replicas,
      podManagementPolicy: "Parallel",
      // One Sentinel at a time, by the RollingRestart step (rollout.ts), keeping the quorum.
      updateStrategy: ROLLED_BY_STEP,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
      selector: { matchLabels: { ...labels } },
      template: {
        metadata: {
          labels: { ...labels },
          annotations: { "valkey-on-eks/config-hash": o.configHash, ...metrics.annotations },
        },
        spec: {
          nodeSelector: { ...o.placement.nodeSelector },
          tolerations: toKubeTolerations(o.placement),
          affinity,
          topologySpreadConstraints: [zoneSpread(labels, o.placement.zones.length)],
          ...hardenedPod(VALKEY_UID, 10, "OnRootMismatch"),
          containers: [sentinelContainer(o, env, mounts), ...metrics.containers],
          volumes,
        },
      },
      volumeClaimTemplates: [{ metadata: { name: "data", labels: releaseLabels(o.release) }, spec: pvcSpec }],
    },
  };
}

export function buildSentinelManifests(o: SentinelManifestOptions): SentinelManifests {
  const labels = sentinelLabels(o.release);
  const statefulSet = sentinelStatefulSet(o, labels);
  const meta = (name: string): { name: string; namespace: string; labels: Record<string, string> } => ({
    name,
    namespace: o.namespace,
    labels: releaseLabels(o.release),
  });
  return {
    statefulSet,
    headlessService: {
      metadata: meta(o.headless),
      spec: { clusterIP: "None", publishNotReadyAddresses: true, selector: { ...labels }, ports: [sentinelPort] },
    },
    service: { metadata: meta(o.service), spec: { type: "ClusterIP", selector: { ...labels }, ports: [sentinelPort] } },
    // One Sentinel at a time: 2 of 3 keep the quorum through a drain.
    pdb: { metadata: meta(o.pdb), spec: { maxUnavailable: 1, selector: { matchLabels: { ...labels } } } },
  };
}
