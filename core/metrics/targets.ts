/**
 * What every scraped target carries, so rules and dashboards can group by it. The scrape
 * configuration (PodMonitor, or the annotations' relabelling) attaches these labels from the pod:
 *
 *   namespace  the pod's namespace
 *   release    the pod's `app.kubernetes.io/instance` (the stack's release name)
 *   component  what the target is: a Valkey member, a Sentinel or HAProxy (the exporter's or
 *              HAProxy's own endpoint)
 *   pod        the pod's name
 *
 * The alert rules (alert-rules.ts) select on `component` and group by `namespace` and `release`.
 *
 * The pods say what they are through annotations (components/valkey/metrics-pod.ts sets them,
 * scrape-config.ts reads them): the conventional `prometheus.io/scrape|port|path`, and
 * METRICS_COMPONENT_ANNOTATION for `component`.
 */

/** The label names every target carries, in the order rules list them. */
export const TARGET_LABELS = ["namespace", "release", "component", "pod"] as const;
export type TargetLabel = (typeof TARGET_LABELS)[number];

/** What a target is; the value of its `component` label. */
export const COMPONENTS = ["valkey", "sentinel", "haproxy"] as const;
export type Component = (typeof COMPONENTS)[number];

/** The pod annotation naming what the pod's metrics are: the value of the `component` label. */
export const METRICS_COMPONENT_ANNOTATION = "valkey-on-eks/metrics-component";
/** The conventional scrape annotations (Prometheus's own kubernetes-pods example job reads them). */
export const SCRAPE_ANNOTATIONS = {
  scrape: "prometheus.io/scrape",
  port: "prometheus.io/port",
  path: "prometheus.io/path",
} as const;
/** The pod label that names the release (`release`). */
export const RELEASE_POD_LABEL = "app.kubernetes.io/instance";

/** The labels that name one release: the rules' `by (…)` over a whole topology. */
export const RELEASE_GROUP = "namespace, release";

/** A target's labels, as a PromQL series selector would name them. */
export type TargetLabels = Record<TargetLabel, string>;

/** `name{k="v",…}`: one series in promtool's input notation. */
export function seriesName(metric: string, labels: Record<string, string>): string {
  const body = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(",");
  return `${metric}{${body}}`;
}
