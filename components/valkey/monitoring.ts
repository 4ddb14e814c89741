/**
 * The Prometheus Operator's objects for a release (`metrics.prometheusOperator`): a PodMonitor per
 * scraped component (metrics-targets.ts), attaching the same target labels as the annotation
 * scrape job (core/metrics/scrape-config.ts: `release` and `component` from the pod, `zone` from its
 * node; the Operator itself sets `namespace` and `pod`), and a PrometheusRule holding the mode's alert rules at the
 * release's own bounds (core/metrics/rule-file.ts). And the mode's Grafana dashboard as a ConfigMap
 * for Grafana's sidecar (`metrics.dashboard`, core/metrics/dashboard.ts). Pure: manifests from the
 * resolved config.
 */
import type { MetricsConfig, ValkeyConfig } from "../../config/types.js";
import { alertInputs, DEFAULT_SCRAPE_INTERVAL_SECONDS } from "../../core/metrics/alert-definition.js";
import { dashboardFileName, dashboardJson } from "../../core/metrics/dashboard.js";
import { ruleGroups, type RuleGroups } from "../../core/metrics/rule-file.js";
import { POD_LABEL_SOURCES } from "../../core/metrics/scrape-config.js";
import type { Component } from "../../core/metrics/targets.js";
import { releaseLabels } from "../shared.js";
import type { ConfigMap } from "./k8s-types.js";
import { scrapeTargets } from "./metrics-targets.js";

export const MONITORING_API_VERSION = "monitoring.coreos.com/v1";

interface Meta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
}

export interface PodMonitor {
  apiVersion: typeof MONITORING_API_VERSION;
  kind: "PodMonitor";
  metadata: Meta;
  spec: {
    selector: { matchLabels: Record<string, string> };
    namespaceSelector: { matchNames: string[] };
    attachMetadata: { node: boolean };
    podMetricsEndpoints: Array<{
      port: string;
      path: string;
      interval: string;
      relabelings: Array<{ sourceLabels: string[]; targetLabel: string; action: "replace" }>;
    }>;
  };
}

export interface PrometheusRuleObject {
  apiVersion: typeof MONITORING_API_VERSION;
  kind: "PrometheusRule";
  metadata: Meta;
  spec: RuleGroups;
}

export interface Monitoring {
  /** One per scraped component, by component. */
  podMonitors: Array<{ component: Component; manifest: PodMonitor }>;
  rule: PrometheusRuleObject;
}

export interface MonitoringInput {
  namespace: string;
  release: string;
  valkey: ValkeyConfig;
  metrics?: MetricsConfig;
}

/** The PodMonitor's name part for a component. */
const part = (c: Component): string => (c === "valkey" ? "members" : c);

/** undefined unless `metrics.enabled` and `metrics.prometheusOperator`. */
export function buildMonitoring(i: MonitoringInput): Monitoring | undefined {
  const m = i.metrics;
  if (m?.enabled !== true || !m.prometheusOperator) return undefined;
  const labels = { ...releaseLabels(i.release), ...m.monitorLabels };
  const interval = `${DEFAULT_SCRAPE_INTERVAL_SECONDS}s`;
  const podMonitors = scrapeTargets(i.valkey.mode, i.release).map((t) => ({
    component: t.component,
    manifest: {
      apiVersion: MONITORING_API_VERSION,
      kind: "PodMonitor",
      metadata: { name: `${i.release}-${part(t.component)}`, namespace: i.namespace, labels },
      spec: {
        selector: { matchLabels: { ...t.labels } },
        namespaceSelector: { matchNames: [i.namespace] },
        // The node's labels on each target: `zone` (the zone alert) comes from them.
        attachMetadata: { node: true },
        podMetricsEndpoints: [
          {
            port: t.portName,
            path: t.path,
            interval,
            relabelings: (Object.keys(POD_LABEL_SOURCES) as Array<keyof typeof POD_LABEL_SOURCES>).map((label) => ({
              sourceLabels: [POD_LABEL_SOURCES[label]],
              targetLabel: label,
              action: "replace" as const,
            })),
          },
        ],
      },
    } satisfies PodMonitor,
  }));
  return {
    podMonitors,
    rule: {
      apiVersion: MONITORING_API_VERSION,
      kind: "PrometheusRule",
      metadata: { name: `${i.release}-alerts`, namespace: i.namespace, labels },
      spec: ruleGroups(alertInputs(i.valkey, DEFAULT_SCRAPE_INTERVAL_SECONDS)),
    },
  };
}

/** The dashboard ConfigMap's name for a release. */
export const dashboardConfigMapName = (release: string): string => `${release}-dashboard`;

/** The ConfigMap `<release>-dashboard`; undefined unless `metrics.enabled` and `metrics.dashboard.enabled`. */
export function buildDashboardConfigMap(i: MonitoringInput): ConfigMap | undefined {
  const m = i.metrics;
  if (m?.enabled !== true || !m.dashboard.enabled) return undefined;
  return {
    metadata: {
      name: dashboardConfigMapName(i.release),
      namespace: m.dashboard.namespace ?? i.namespace,
      labels: { ...releaseLabels(i.release), ...m.dashboard.labels },
    },
    data: { [dashboardFileName(i.valkey.mode)]: dashboardJson(i.valkey.mode) },
  };
}

/** What a release hands to the user's monitoring, each part only when there is one: spread into its manifests. */
export interface MonitoringParts {
  /** With `metrics.prometheusOperator`: the PodMonitors and the PrometheusRule. */
  monitoring?: Monitoring;
  /** With `metrics.dashboard.enabled`: the Grafana dashboard's ConfigMap. */
  dashboard?: ConfigMap;
}

export function monitoringOf(i: MonitoringInput): MonitoringParts {
  const monitoring = buildMonitoring(i);
  const dashboard = buildDashboardConfigMap(i);
  return { ...(monitoring === undefined ? {} : { monitoring }), ...(dashboard === undefined ? {} : { dashboard }) };
}
