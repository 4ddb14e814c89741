/**
 * The stack report's `metrics` part (stacks/outputs.ts): what the stack serves to a Prometheus and
 * what to load into it, from the resolved config alone. The scrape targets per component (the
 * label selector of their pods, how many, port and path), who may scrape them, the scrape job for a
 * Prometheus without the Operator (core/metrics/scrape-config.ts) and the alert rule file of the
 * stack's mode at its own bounds (core/metrics/rule-file.ts), e.g.
 *
 *   pulumi stack output report --json | jq -r .metrics.rules > valkey-rules.yml
 *
 * and the mode's Grafana dashboard (core/metrics/dashboard.ts) with the ConfigMap that ships it.
 */
import type { StackConfig } from "../config/types.js";
import { dashboardJson, dashboardUid } from "../core/metrics/dashboard.js";
import { stackRuleFile } from "../core/metrics/rule-file.js";
import { scrapeConfigText } from "../core/metrics/scrape-config.js";
import type { Component } from "../core/metrics/targets.js";
import { scrapeTargets } from "../components/valkey/metrics-targets.js";
import { dashboardConfigMapName } from "../components/valkey/monitoring.js";
import { DEFAULT_CLUSTER_RELEASE } from "../components/valkey-cluster.js";
import { DEFAULT_REPLICATION_RELEASE } from "../components/valkey-replication.js";
import { HAPROXY_REPLICAS, HAPROXY_STATUS_PORT } from "../components/valkey/haproxy-manifests.js";

/** One kind of scrape target: the pods a selector picks in the stack's namespace. */
export interface MetricsTargets {
  component: Component;
  /** Label selector of its pods, `k=v,k=v` as kubectl takes it. */
  selector: string;
  pods: number;
  port: number;
  path: string;
}

export interface MetricsPart {
  exporterImage: string;
  namespace: string;
  targets: MetricsTargets[];
  /** Who the NetworkPolicies admit to scrape (metrics.scrapeFrom; with AMP its cidrs hold eks.vpcCidr). */
  scrapeFrom: { namespace: string; podLabels: Record<string, string>; cidrs: string[] };
  /** A `scrape_configs:` block with the job for this stack's namespace (YAML). */
  scrapeJob: string;
  /** The alert rule file of this stack's mode at its bounds, at a 15 s scrape interval (YAML). */
  rules: string;
  /**
   * The mode's Grafana dashboard: its uid, its JSON, and the ConfigMap holding it (null with
   * `metrics.dashboard.enabled` false).
   */
  dashboard: { uid: string; configMap: { name: string; namespace: string } | null; json: string };
  /**
   * The Amazon Managed Service for Prometheus side (`metrics.amp.enabled`, components/managed-prometheus.ts): the
   * workspace, its query endpoint, the managed collector and the rule groups namespace; null without AMP (and while
   * unknown, in a preview).
   */
  amp: AmpPart | null;
}

/** What `metrics.amp` created or used (ManagedPrometheus's outputs). */
export interface AmpPart {
  workspaceArn: string;
  prometheusEndpoint: string;
  scraperArn: string;
  scraperRoleArn: string;
  ruleNamespace: string;
}

const selector = (labels: Record<string, string>): string =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");

const releaseOf = (config: StackConfig): string =>
  config.valkey.mode === "cluster" ? DEFAULT_CLUSTER_RELEASE : DEFAULT_REPLICATION_RELEASE;

/** The pods of each scraped component (components/valkey/metrics-targets.ts), counted, with their port numbers. */
function targetsOf(config: StackConfig): MetricsTargets[] {
  const v = config.valkey;
  const release = releaseOf(config);
  const count: Record<Component, number> = {
    valkey: v.pods,
    sentinel: v.replication.sentinel.replicas,
    haproxy: HAPROXY_REPLICAS,
  };
  return scrapeTargets(v.mode, release).map((t) => ({
    component: t.component,
    selector: selector(t.labels),
    pods: count[t.component],
    port: t.component === "haproxy" ? HAPROXY_STATUS_PORT : config.metrics.port,
    path: t.path,
  }));
}

/** null when `metrics.enabled` is false (nothing is served). */
export function metricsPart(config: StackConfig, amp: AmpPart | undefined = undefined): MetricsPart | null {
  const m = config.metrics;
  if (!m.enabled) return null;
  const namespace = config.valkey.namespace;
  return {
    exporterImage: m.exporterImage,
    namespace,
    targets: targetsOf(config),
    scrapeFrom: {
      namespace: m.scrapeFrom.namespace,
      podLabels: { ...m.scrapeFrom.podLabels },
      cidrs: [...m.scrapeFrom.cidrs],
    },
    scrapeJob: scrapeConfigText({ namespaces: [namespace] }),
    rules: stackRuleFile(config.valkey),
    dashboard: {
      uid: dashboardUid(config.valkey.mode),
      configMap: m.dashboard.enabled
        ? { name: dashboardConfigMapName(releaseOf(config)), namespace: m.dashboard.namespace ?? namespace }
        : null,
      json: dashboardJson(config.valkey.mode),
    },
    amp: amp ?? null,
  };
}
