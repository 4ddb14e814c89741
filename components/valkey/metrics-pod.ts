/**
 * What `metrics.enabled` adds to a release's pods (docs/metrics.md): the exporter container beside
 * a member's or a Sentinel's server (pod/exporter.ts's arguments, the password from the release's
 * Secret in its environment), the scrape annotations every pod that serves metrics carries, and
 * the NetworkPolicy ingress rule that admits the scrape from `metrics.scrapeFrom` only. Pure.
 */
import type { MetricsConfig } from "../../config/types.js";
import { METRICS_COMPONENT_ANNOTATION, SCRAPE_ANNOTATIONS, type Component } from "../../core/metrics/targets.js";
import { EXPORTER_METRICS_PATH, exporterDefinition } from "../../pod/exporter.js";
import type { Container } from "./k8s-types.js";
import { podEnv } from "./pod-env.js";
import { restrictedContainer } from "./pod-security.js";

export const EXPORTER_CONTAINER = "metrics";
/**
 * Requests and limits of each exporter. Measured: Debian's redis_exporter 1.45 beside a Valkey 9.1
 * server held 15.7 MB resident after 50 scrapes and spent 2.4 ms of CPU per scrape (28 KB
 * exposition); at one scrape every 15 s that is well under 1 millicore. The memory limit is four
 * times the resident size; the CPU limit lets a scrape finish in a few ms.
 */
export const EXPORTER_RESOURCES = {
  requests: { cpu: "25m", memory: "32Mi" },
  limits: { cpu: "100m", memory: "64Mi" },
};

/** The scrape sources `metrics.scrapeFrom` names, as NetworkPolicy peers. */
export interface ScrapeSource {
  namespace: string;
  podLabels: Record<string, string>;
  /** Addresses outside the pods (a managed collector's network interfaces). @default [] */
  cidrs?: readonly string[];
}

type ScrapePeer =
  | {
      namespaceSelector: { matchLabels: Record<string, string> };
      podSelector: { matchLabels: Record<string, string> };
    }
  | { ipBlock: { cidr: string } };

export interface ExporterContainerOptions {
  metrics: MetricsConfig;
  /** The server's port in the same pod (the exporter reads it on 127.0.0.1). */
  serverPort: number;
  /** The password Secret; undefined = auth off. */
  secretName: string | undefined;
  /** What the pods belong to, for errors (e.g. "StatefulSet valkey"). */
  owner: string;
  headless: string;
  namespace: string;
}

/** The exporter's container port name (the PodMonitors scrape it by name). */
export const EXPORTER_PORT_NAME = "metrics";

/** The exporter container: the image's entrypoint with pod/exporter.ts's arguments; alive while its port accepts. */
export function exporterContainer(o: ExporterContainerOptions): Container {
  const def = exporterDefinition({
    server: { host: "127.0.0.1", port: o.serverPort },
    listen: { host: "", port: o.metrics.port },
    auth: o.secretName !== undefined,
  });
  return {
    name: EXPORTER_CONTAINER,
    image: o.metrics.exporterImage,
    imagePullPolicy: "IfNotPresent",
    args: def.args,
    ports: [{ name: EXPORTER_PORT_NAME, containerPort: o.metrics.port, protocol: "TCP" }],
    env: podEnv(def, { owner: o.owner, headless: o.headless, namespace: o.namespace, secretName: o.secretName }),
    resources: EXPORTER_RESOURCES,
    // No readiness probe: a pod is ready only when all its containers are, and an exporter that
    // cannot start must not take a healthy server out of its Services.
    livenessProbe: {
      tcpSocket: { port: EXPORTER_PORT_NAME },
      initialDelaySeconds: 10,
      periodSeconds: 20,
      failureThreshold: 3,
    },
    securityContext: restrictedContainer(),
  };
}

/** What a server's pod gains from `metrics`: the exporter container and the scrape annotations; nothing while off. */
export function serverMetrics(
  metrics: MetricsConfig | undefined,
  o: Omit<ExporterContainerOptions, "metrics"> & { component: Component },
): { containers: Container[]; annotations: Record<string, string> } {
  if (metrics?.enabled !== true) return { containers: [], annotations: {} };
  const { component, ...exporter } = o;
  return {
    containers: [exporterContainer({ metrics, ...exporter })],
    annotations: scrapeAnnotations(metrics.port, component),
  };
}

/** The conventional `prometheus.io/*` annotations (Prometheus's kubernetes-pods example job) plus the component. */
export function scrapeAnnotations(
  port: number,
  component: Component,
  path = EXPORTER_METRICS_PATH,
): Record<string, string> {
  return {
    [SCRAPE_ANNOTATIONS.scrape]: "true",
    [SCRAPE_ANNOTATIONS.port]: String(port),
    [SCRAPE_ANNOTATIONS.path]: path,
    [METRICS_COMPONENT_ANNOTATION]: component,
  };
}

/** Ingress to `port` from the scrape source only: pods in its namespace carrying its labels, and its CIDRs. */
export function scrapeIngress(
  source: ScrapeSource,
  port: number,
): { from: ScrapePeer[]; ports: Array<{ protocol: string; port: number }> } {
  return {
    from: [
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": source.namespace } },
        // Both selectors in one peer: pods with these labels IN that namespace (an empty selector: every pod there).
        podSelector: { matchLabels: { ...source.podLabels } },
      },
      ...(source.cidrs ?? []).map((cidr) => ({ ipBlock: { cidr } })),
    ],
    ports: [{ protocol: "TCP", port }],
  };
}

/** The NetworkPolicies' scrape option for a release: undefined while metrics are off. */
export function scrapeOf(metrics: MetricsConfig | undefined): { source: ScrapeSource; port: number } | undefined {
  return metrics?.enabled === true ? { source: metrics.scrapeFrom, port: metrics.port } : undefined;
}
