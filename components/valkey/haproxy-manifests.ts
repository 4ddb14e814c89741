/**
 * The write and read endpoints of a replication release for clients that do not speak
 * Sentinel: an HAProxy Deployment (2 replicas over the zones) whose health checks follow the
 * primary (haproxy-cfg.ts: writes go to the member a majority of the Sentinels names while it
 * says `role:master`; read backend = members saying `role:slave`), the write and read Services
 * in front of it, and its own PodDisruptionBudget. A proxy is ready (HTTP `/ready` on the status
 * port) only while some member qualifies for writes, so the Services hold no proxy that would
 * close every write connection; liveness stays a TCP probe of the write port (a proxy with no
 * primary to offer is alive). The kubelet's probes come from the node's IP, which the VPC CNI's
 * network policy agent always admits (aws/aws-network-policy-agent PR #65, "Ignore policy
 * restrictions against Node IP"), so the status port needs no NetworkPolicy rule. haproxy.cfg holds the password (the
 * health check's AUTH), so it lives in
 * a Secret, rendered by the component from the secret password; the builder here returns the
 * renderer and everything else. HAProxy needs no Kubernetes API access (no RBAC): it re-resolves
 * the members' stable DNS names through the cluster DNS. Pure.
 */
import { releaseLabels, type Placement } from "../shared.js";
import { configHash } from "./config-map.js";
import { renderHaproxyCfg } from "../../pod/haproxy-cfg.js";
import type { PodDisruptionBudget, PodSpec, Service } from "./k8s-types.js";
import { HOSTNAME_LABEL, podAffinity, toKubeTolerations, zoneSpread } from "./pod-placement.js";
import { hardenedPod, restrictedContainer } from "./pod-security.js";
import { SENTINEL_PORT } from "../../vocabulary/ports.js";
import type { MetricsConfig } from "../../config/types.js";
import { METRICS_PATH } from "../../pod/haproxy-checks.js";
import { scrapeAnnotations } from "./metrics-pod.js";
import type * as pulumi from "@pulumi/pulumi";
import type * as k8s from "@pulumi/kubernetes";

export const HAPROXY_WRITE_PORT = 6379;
export const HAPROXY_READ_PORT = 6380;
/** HTTP status frontend: `/ready` (the readiness probe) and `/quorum/<member>` (the write checks). */
export const HAPROXY_STATUS_PORT = 8404;
/** The status port's name in the pod (probes and the PodMonitor use it). */
export const HAPROXY_STATUS_PORT_NAME = "status";
export const HAPROXY_REPLICAS = 2;
export const HAPROXY_CFG_KEY = "haproxy.cfg";
export const HAPROXY_CFG_DIR = "/usr/local/etc/haproxy";
/** What the proxy container runs: master-worker, in the foreground, on the mounted haproxy.cfg. */
export const HAPROXY_COMMAND: readonly string[] = [
  "haproxy",
  "-W",
  "-db",
  "-f",
  `${HAPROXY_CFG_DIR}/${HAPROXY_CFG_KEY}`,
];
/** uid/gid of the official haproxy image's `haproxy` user. */
export const HAPROXY_UID = 99;
export const HAPROXY_RESOURCES = { requests: { cpu: "250m", memory: "128Mi" }, limits: { cpu: "1", memory: "256Mi" } };

export type Deployment = pulumi.Unwrap<k8s.types.input.apps.v1.Deployment>;

export function haproxyLabels(release: string): Record<string, string> {
  return {
    ...releaseLabels(release),
    "app.kubernetes.io/name": "valkey-haproxy",
    "app.kubernetes.io/component": "haproxy",
  };
}

export interface HaproxyManifestOptions {
  namespace: string;
  release: string;
  image: string;
  placement: Placement;
  deployment: string;
  cfgSecret: string;
  writeService: string;
  readService: string;
  pdb: string;
  /** The data members: `name` and stable DNS name each (what the Sentinels report, announce-hostnames). */
  members: readonly { name: string; dnsName: string }[];
  memberPort: number;
  /** The Sentinels: `name` and stable DNS name each. */
  sentinels: readonly { name: string; dnsName: string }[];
  masterName: string;
  memberSelector: Record<string, string>;
  /**
   * With `metrics.enabled`: the scrape annotations for HAProxy's own `/metrics` on the status port.
   * @default undefined (none)
   */
  metrics?: MetricsConfig;
}

export interface HaproxyManifests {
  /** haproxy.cfg for a password (undefined = auth off): the component renders it into the Secret. */
  renderCfg: (password: string | undefined) => string;
  deployment: Deployment;
  writeService: Service;
  readService: Service;
  pdb: PodDisruptionBudget;
}

/** haproxy.cfg for a password: the members and Sentinels by their stable DNS names, re-resolved. */
function cfgRenderer(o: HaproxyManifestOptions): HaproxyManifests["renderCfg"] {
  return (password: string | undefined): string =>
    renderHaproxyCfg({
      servers: o.members.map((m) => ({ name: m.name, host: m.dnsName, port: o.memberPort })),
      sentinels: o.sentinels.map((x) => ({ name: x.name, host: x.dnsName, port: SENTINEL_PORT })),
      masterName: o.masterName,
      write: { host: "*", port: HAPROXY_WRITE_PORT },
      read: { host: "*", port: HAPROXY_READ_PORT },
      status: { host: "*", port: HAPROXY_STATUS_PORT },
      password,
      dnsResolve: true,
    });
}

/** The members' soft per-node anti-affinity, replaced by: the proxies apart by node when they can be. */
function haproxyAffinity(o: HaproxyManifestOptions, labels: Record<string, string>): ReturnType<typeof podAffinity> {
  const affinity = podAffinity(o.memberSelector, o.placement.zones);
  affinity.podAntiAffinity = {
    preferredDuringSchedulingIgnoredDuringExecution: [
      { weight: 100, podAffinityTerm: { topologyKey: HOSTNAME_LABEL, labelSelector: { matchLabels: { ...labels } } } },
    ],
  };
  return affinity;
}

/** The proxy: ready while some member qualifies for writes (`/ready`), alive while the write port accepts. */
function haproxyContainer(o: HaproxyManifestOptions): NonNullable<PodSpec["containers"]>[number] {
  return {
    name: "haproxy",
    image: o.image,
    imagePullPolicy: "IfNotPresent",
    command: [...HAPROXY_COMMAND],
    ports: [
      { name: "write", containerPort: HAPROXY_WRITE_PORT, protocol: "TCP" },
      { name: "read", containerPort: HAPROXY_READ_PORT, protocol: "TCP" },
      { name: HAPROXY_STATUS_PORT_NAME, containerPort: HAPROXY_STATUS_PORT, protocol: "TCP" },
    ],
    resources: HAPROXY_RESOURCES,
    readinessProbe: {
      httpGet: { path: "/ready", port: "status" },
      initialDelaySeconds: 2,
      periodSeconds: 5,
      timeoutSeconds: 2,
      failureThreshold: 3,
    },
    livenessProbe: {
      tcpSocket: { port: HAPROXY_WRITE_PORT },
      initialDelaySeconds: 10,
      periodSeconds: 10,
      timeoutSeconds: 3,
      failureThreshold: 6,
    },
    volumeMounts: [{ name: "cfg", mountPath: HAPROXY_CFG_DIR, readOnly: true }],
    securityContext: restrictedContainer(),
  };
}

/** The proxies' Deployment; `hash` (of the password-free cfg) rolls them when the members change. */
function haproxyDeployment(o: HaproxyManifestOptions, labels: Record<string, string>, hash: string): Deployment {
  const affinity = haproxyAffinity(o, labels);
  return {
    metadata: { name: o.deployment, namespace: o.namespace, labels },
    spec: {
      replicas: HAPROXY_REPLICAS,
      selector: { matchLabels: { ...labels } },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: {
          labels: { ...labels },
          annotations: {
            "valkey-on-eks/config-hash": hash,
            ...(o.metrics?.enabled === true ? scrapeAnnotations(HAPROXY_STATUS_PORT, "haproxy", METRICS_PATH) : {}),
          },
        },
        spec: {
          nodeSelector: { ...o.placement.nodeSelector },
          tolerations: toKubeTolerations(o.placement),
          affinity,
          // Two proxies over the zones (hard spread): losing a zone keeps one.
          topologySpreadConstraints: [zoneSpread(labels, o.placement.zones.length)],
          ...hardenedPod(HAPROXY_UID, 10),
          containers: [haproxyContainer(o)],
          volumes: [{ name: "cfg", secret: { secretName: o.cfgSecret, defaultMode: 0o440 } }],
        },
      },
    },
  };
}

export function buildHaproxyManifests(o: HaproxyManifestOptions): HaproxyManifests {
  const labels = haproxyLabels(o.release);
  const renderCfg = cfgRenderer(o);
  // Rolls the proxies when the members change; the hash is of a password-free rendering.
  const hash = configHash({ [HAPROXY_CFG_KEY]: renderCfg(undefined) });
  const deployment = haproxyDeployment(o, labels, hash);
  const meta = (name: string): { name: string; namespace: string; labels: Record<string, string> } => ({
    name,
    namespace: o.namespace,
    labels: releaseLabels(o.release),
  });
  const service = (name: string, target: string): Service => ({
    metadata: meta(name),
    spec: {
      type: "ClusterIP",
      selector: { ...labels },
      ports: [{ name: "valkey", port: HAPROXY_WRITE_PORT, targetPort: target, protocol: "TCP" }],
    },
  });
  return {
    renderCfg,
    deployment,
    writeService: service(o.writeService, "write"),
    readService: service(o.readService, "read"),
    pdb: { metadata: meta(o.pdb), spec: { minAvailable: 1, selector: { matchLabels: { ...labels } } } },
  };
}
