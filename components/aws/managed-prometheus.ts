/**
 * Amazon Managed Service for Prometheus (`metrics.amp`): what the managed collector and the
 * workspace are given, and the Kubernetes permissions the collector needs. Pure: plain config in,
 * plain values out (components/managed-prometheus.ts creates the resources).
 *
 * - The scraper's configuration is the annotation scrape job a self-run Prometheus gets
 *   (core/metrics/scrape-config.ts, `report.metrics.scrapeJob`) under a `global` block at the
 *   interval the alert rules' hold times assume: one job, one definition.
 * - The rule groups namespace holds the mode's rule file at the stack's bounds, the text
 *   `report.metrics.rules` hands to any other Prometheus.
 * - The collector calls the Kubernetes API as the user `aps-collector-user` (its role mapped to that
 *   name by an access entry, which this stack does not create: docs/metrics.md); the ClusterRole is
 *   the read-only one AWS documents for managed collectors: discovery of pods, services, endpoints
 *   and nodes, and `/metrics`.
 */
import { stringify } from "yaml";
import { AMP_WORKSPACE_ARN_RE } from "../../config/metrics-section.js";
import { DEFAULT_SCRAPE_INTERVAL_SECONDS } from "../../core/metrics/alert-definition.js";
import { annotationScrapeJob } from "../../core/metrics/scrape-config.js";

/** The Kubernetes user name AMP gives a managed collector's role in the cluster. */
export const AMP_COLLECTOR_USER = "aps-collector-user";
/** The ClusterRole and binding names AWS's guide uses (one collector per cluster is the common case). */
export const AMP_COLLECTOR_ROLE = "aps-collector-role";

/** The managed collector's scrape configuration (YAML): a `global` interval and the stack's annotation job. */
export function ampScrapeConfiguration(namespaces: readonly string[]): string {
  const interval = `${DEFAULT_SCRAPE_INTERVAL_SECONDS}s`;
  return stringify(
    {
      global: { scrape_interval: interval },
      scrape_configs: [annotationScrapeJob({ namespaces, scrapeIntervalSeconds: DEFAULT_SCRAPE_INTERVAL_SECONDS })],
    },
    { lineWidth: 0 },
  );
}

/** The workspace id (`ws-…`) of a workspace ARN; throws naming the key on anything else. */
export function workspaceIdOf(arn: string): string {
  const id = arn.match(AMP_WORKSPACE_ARN_RE)?.[3];
  if (id === undefined) throw new Error(`metrics.amp.workspaceArn: ${arn} is not an AMP workspace ARN`);
  return id;
}

export interface ClusterRoleManifest {
  metadata: { name: string; labels: Record<string, string> };
  rules: Array<{ apiGroups?: string[]; resources?: string[]; nonResourceURLs?: string[]; verbs: string[] }>;
}

export interface ClusterRoleBindingManifest {
  metadata: { name: string; labels: Record<string, string> };
  subjects: Array<{ kind: "User"; name: string; apiGroup: "rbac.authorization.k8s.io" }>;
  roleRef: { kind: "ClusterRole"; name: string; apiGroup: "rbac.authorization.k8s.io" };
}

const RBAC = "rbac.authorization.k8s.io" as const;
const READ = ["get", "list", "watch"];

/** The collector's read-only ClusterRole and its binding to the user AMP maps the collector's role to. */
export function ampCollectorRbac(labels: Record<string, string>): {
  clusterRole: ClusterRoleManifest;
  binding: ClusterRoleBindingManifest;
} {
  return {
    clusterRole: {
      metadata: { name: AMP_COLLECTOR_ROLE, labels },
      rules: [
        {
          apiGroups: [""],
          resources: ["nodes", "nodes/proxy", "nodes/metrics", "services", "endpoints", "pods", "configmaps"],
          verbs: READ,
        },
        { apiGroups: ["networking.k8s.io"], resources: ["ingresses"], verbs: READ },
        { nonResourceURLs: ["/metrics"], verbs: ["get"] },
      ],
    },
    binding: {
      metadata: { name: `${AMP_COLLECTOR_USER}-role-binding`, labels },
      subjects: [{ kind: "User", name: AMP_COLLECTOR_USER, apiGroup: RBAC }],
      roleRef: { kind: "ClusterRole", name: AMP_COLLECTOR_ROLE, apiGroup: RBAC },
    },
  };
}
