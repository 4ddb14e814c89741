/**
 * The Valkey StatefulSet shared by both modes: one container running the start script with a
 * role's valkey.conf, the password only through Secret references (a mounted file for the
 * start script, VALKEYCLI_AUTH/REDISCLI_AUTH for valkey-cli in probes and hooks), a PVC per pod,
 * non-root uid 999 like the official image, and the placement rules of pod-placement.ts.
 */
import type { MetricsConfig, ValkeyConfig } from "../../config/types.js";
import { DATA_PLANE_LABEL, ROLE_LABEL, releaseLabels } from "../shared.js";
import { VALKEY_BUS_PORT, VALKEY_PORT } from "../../vocabulary/ports.js";
import type { Container, PersistentVolumeClaim, PodSpec, StatefulSet } from "./k8s-types.js";
import { podEnv } from "./pod-env.js";
import type { PodDefinition } from "../../pod/definition.js";
import { CONFIG_MOUNT, DATA_DIR, RUN_DIR, SECRET_MOUNT } from "../../pod/paths.js";
import type { PodPlacement } from "./pod-placement.js";
import { hardenedPod, restrictedContainer } from "./pod-security.js";
import { ROLLED_BY_STEP } from "./rollout.js";
import { serverMetrics } from "./metrics-pod.js";

/** uid/gid of the official valkey image's `valkey` user. */
export const VALKEY_UID = 999;
export const DATA_VOLUME = "data";
export const CONFIG_VOLUME = "config";
/** Pod annotation carrying a hash of the ConfigMap, so a config change rolls the pods. */
export const CONFIG_HASH_ANNOTATION = "valkey-on-eks/config-hash";
/** @default terminationGracePeriodSeconds: time for an RDB save at shutdown (and the preStop failover). */
export const DEFAULT_TERMINATION_GRACE_SECONDS = 60;

export type PodRole = "primary" | "replica" | "member";

/** What a member pod gains before its server (the restore's init containers, restore-init.ts). */
export interface PodExtras {
  initContainers: Container[];
  volumes: NonNullable<PodSpec["volumes"]>;
  serviceAccountName?: string;
}

export interface ValkeyStatefulSetOptions {
  /** StatefulSet name; pods are `<name>-<ordinal>`. */
  name: string;
  namespace: string;
  release: string;
  role: PodRole;
  replicas: number;
  valkey: ValkeyConfig;
  placement: PodPlacement;
  /** Governing headless Service. */
  headless: string;
  configMap: string;
  /** What the pod runs (pod/): its command, preStop, readiness probe and the env its scripts read. */
  pod: PodDefinition;
  /** Hash of the ConfigMap data (annotation; rolls pods on change). */
  configHash: string;
  /** Password Secret; undefined = auth off (no Secret references at all). */
  secretName: string | undefined;
  storageClass: string | undefined;
  /** Cluster members: expose the bus port. @default false */
  clusterMember?: boolean;
  /** @default DEFAULT_TERMINATION_GRACE_SECONDS */
  terminationGracePeriodSeconds?: number;
  /** Seconds a pod must stay ready before the rollout counts it available. @default 0 */
  minReadySeconds?: number;
  /**
   * `restore.from`: the init containers, volumes and ServiceAccount of restore-init.ts. @default undefined (no restore)
   */
  restore?: PodExtras;
  /** `metrics`: with `enabled`, the exporter container and scrape annotations (metrics-pod.ts). @default undefined */
  metrics?: MetricsConfig;
}

/** Labels of one role's pods (the StatefulSet selector). */
export function roleSelector(release: string, role: PodRole): Record<string, string> {
  return { ...releaseLabels(release), [ROLE_LABEL]: role };
}

/** Labels every pod of the role carries. */
export function podLabels(release: string, role: PodRole): Record<string, string> {
  return { ...roleSelector(release, role), [DATA_PLANE_LABEL]: "true" };
}

export const READINESS_SCRIPT_TIMEOUT_SECONDS = 8;
/**
 * How often the kubelet runs a member's readiness probe, in seconds. The kubelet probes on its
 * own ticks, so a restarted member is Ready up to one period after it could be: at 5 s (with a
 * 5 s initial delay) a member whose first sync was done 2 s after its start was Ready 6.5–9.5 s
 * after it (real pods), and every drill's recovery and every roll step waited for that. At 2 s
 * it is 2–4 s. The failure threshold keeps the tolerance it had (about 15 s of failed probes
 * before NotReady).
 */
export const READINESS_PERIOD_SECONDS = 2;

function readinessProbe(o: ValkeyStatefulSetOptions): NonNullable<Container["readinessProbe"]> {
  const command = o.pod.readiness ?? ["sh", "-c", `[ "$(valkey-cli -h 127.0.0.1 -p ${VALKEY_PORT} ping)" = PONG ]`];
  return {
    exec: { command },
    initialDelaySeconds: READINESS_PERIOD_SECONDS,
    periodSeconds: READINESS_PERIOD_SECONDS,
    timeoutSeconds: o.pod.readiness === undefined ? 3 : READINESS_SCRIPT_TIMEOUT_SECONDS,
    failureThreshold: Math.ceil(15 / READINESS_PERIOD_SECONDS),
  };
}

function container(o: ValkeyStatefulSetOptions): Container {
  const mounts = [
    { name: DATA_VOLUME, mountPath: DATA_DIR },
    { name: CONFIG_VOLUME, mountPath: CONFIG_MOUNT, readOnly: true },
    { name: "run", mountPath: RUN_DIR },
  ];
  if (o.secretName !== undefined) mounts.push({ name: "auth", mountPath: SECRET_MOUNT, readOnly: true });
  const ports = [{ name: "valkey", containerPort: VALKEY_PORT, protocol: "TCP" }];
  if (o.clusterMember) ports.push({ name: "cluster-bus", containerPort: VALKEY_BUS_PORT, protocol: "TCP" });
  const c: Container = {
    name: "valkey",
    image: o.valkey.image,
    imagePullPolicy: "IfNotPresent",
    command: o.pod.command,
    ports,
    env: podEnv(o.pod, {
      owner: `StatefulSet ${o.name}`,
      headless: o.headless,
      namespace: o.namespace,
      secretName: o.secretName,
    }),
    resources: {
      requests: { cpu: o.valkey.resources.requests.cpu, memory: o.valkey.resources.requests.memory },
      limits: { cpu: o.valkey.resources.limits.cpu, memory: o.valkey.resources.limits.memory },
    },
    readinessProbe: readinessProbe(o),
    // A TCP check: a server loading a large AOF is alive but answers PING with LOADING.
    livenessProbe: {
      tcpSocket: { port: VALKEY_PORT },
      initialDelaySeconds: 15,
      periodSeconds: 10,
      timeoutSeconds: 5,
      failureThreshold: 6,
    },
    volumeMounts: mounts,
    securityContext: restrictedContainer(),
  };
  if (o.pod.preStop !== undefined) c.lifecycle = { preStop: { exec: { command: o.pod.preStop } } };
  return c;
}

/** The exporter beside the server and the scrape annotations, with `metrics.enabled` (metrics-pod.ts). */
function memberMetrics(o: ValkeyStatefulSetOptions): ReturnType<typeof serverMetrics> {
  return serverMetrics(o.metrics, {
    component: "valkey",
    serverPort: VALKEY_PORT,
    secretName: o.secretName,
    owner: `StatefulSet ${o.name}`,
    headless: o.headless,
    namespace: o.namespace,
  });
}

function podSpec(o: ValkeyStatefulSetOptions, exporters: Container[]): PodSpec {
  const volumes: NonNullable<PodSpec["volumes"]> = [
    { name: CONFIG_VOLUME, configMap: { name: o.configMap, defaultMode: 0o444 } },
    { name: "run", emptyDir: { medium: "Memory", sizeLimit: "1Mi" } },
  ];
  if (o.secretName !== undefined)
    volumes.push({ name: "auth", secret: { secretName: o.secretName, defaultMode: 0o400 } });
  const r = o.restore;
  return {
    ...o.placement,
    ...hardenedPod(VALKEY_UID, o.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_SECONDS, "OnRootMismatch"),
    ...(r?.serviceAccountName === undefined ? {} : { serviceAccountName: r.serviceAccountName }),
    ...(r === undefined ? {} : { initContainers: r.initContainers }),
    containers: [container(o), ...exporters],
    volumes: [...volumes, ...(r?.volumes ?? [])],
  };
}

export function dataVolumeClaim(
  release: string,
  size: string,
  storageClass: string | undefined,
): PersistentVolumeClaim {
  const spec: NonNullable<PersistentVolumeClaim["spec"]> = {
    accessModes: ["ReadWriteOnce"],
    resources: { requests: { storage: size } },
  };
  if (storageClass !== undefined) spec.storageClassName = storageClass;
  return { metadata: { name: DATA_VOLUME, labels: releaseLabels(release) }, spec };
}

export function buildValkeyStatefulSet(o: ValkeyStatefulSetOptions): StatefulSet {
  const metrics = memberMetrics(o);
  return {
    metadata: { name: o.name, namespace: o.namespace, labels: podLabels(o.release, o.role) },
    spec: {
      serviceName: o.headless,
      replicas: o.replicas,
      // Cluster members must all start before the bootstrap; replicas need not wait for each other.
      podManagementPolicy: "Parallel",
      ...(o.minReadySeconds !== undefined ? { minReadySeconds: o.minReadySeconds } : {}),
      // Rolled by the RollingRestart step in role order (rollout.ts), not by ordinal.
      updateStrategy: ROLLED_BY_STEP,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
      selector: { matchLabels: roleSelector(o.release, o.role) },
      template: {
        metadata: {
          labels: podLabels(o.release, o.role),
          annotations: { [CONFIG_HASH_ANNOTATION]: o.configHash, ...metrics.annotations },
        },
        spec: podSpec(o, metrics.containers),
      },
      volumeClaimTemplates: [dataVolumeClaim(o.release, o.valkey.persistence.size, o.storageClass)],
    },
  };
}
