/**
 * The Prometheus scrape job for a stack without the Prometheus Operator: Kubernetes service
 * discovery of pods, kept when they carry the scrape annotations components/valkey/metrics-pod.ts
 * sets, scraped at their annotated port and path, and labelled with TARGET_LABELS (targets.ts)
 * from the pod: its namespace, its release label, its component annotation, its name. So the alert
 * rules (rule-file.ts), which select on `component` and group by `namespace, release`, work on
 * what this job scrapes. docs/metrics.md shows it (generated), and tests/core/scrape-config.test.ts
 * runs `promtool check config` over it.
 *
 *   npx tsx core/metrics/scrape-config.ts             print the job (YAML)
 *   npx tsx core/metrics/scrape-config.ts --write     replace it in docs/metrics.md (between the markers only)
 *   npx tsx core/metrics/scrape-config.ts --check     exit 1 when docs/metrics.md is stale
 */
import { stringify } from "yaml";
import { parseStackConfig } from "../../config/schema.js";
import { replaceBetweenMarkers, runTableCli, type GeneratedTable } from "../../config/generated-table.js";
import { ZONE_LABEL } from "../../vocabulary/labels.js";
import { COMPONENTS, METRICS_COMPONENT_ANNOTATION, RELEASE_POD_LABEL, SCRAPE_ANNOTATIONS } from "./targets.js";

/** Prometheus's name of a pod annotation or label in its `__meta_kubernetes_pod_*` labels. */
export function meta(kind: "annotation" | "label", name: string): string {
  return `__meta_kubernetes_pod_${kind}_${name.replace(/[^a-zA-Z0-9_]/g, "_")}`;
}

/**
 * Where the target labels the scrape adds come from, as Prometheus names them: the annotation job
 * below and the PodMonitors (components/valkey/monitoring.ts) relabel the same. `zone` is the pod's
 * node's zone label, present when discovery attaches the node's metadata (`attach_metadata: node`,
 * the PodMonitor's `attachMetadata.node`; Prometheus 2.35 and later, with list/watch on nodes).
 */
export const POD_LABEL_SOURCES = {
  release: meta("label", RELEASE_POD_LABEL),
  component: meta("annotation", METRICS_COMPONENT_ANNOTATION),
  zone: `__meta_kubernetes_node_label_${ZONE_LABEL.replace(/[^a-zA-Z0-9_]/g, "_")}`,
} as const;

export interface ScrapeJobOptions {
  /** Namespaces to discover pods in (the stacks' `valkey.namespace`). */
  namespaces: readonly string[];
  /** @default "valkey-on-eks" */
  jobName?: string;
  /** The rules' hold times assume it (rule-file.ts holdSeconds). @default 15 */
  scrapeIntervalSeconds?: number;
}

/** The scrape job as Prometheus's configuration reads it (one entry of `scrape_configs`). */
export function annotationScrapeJob(o: ScrapeJobOptions): Record<string, unknown> {
  return {
    job_name: o.jobName ?? "valkey-on-eks",
    scrape_interval: `${o.scrapeIntervalSeconds ?? 15}s`,
    kubernetes_sd_configs: [{ role: "pod", namespaces: { names: [...o.namespaces] }, attach_metadata: { node: true } }],
    relabel_configs: [
      { source_labels: [meta("annotation", SCRAPE_ANNOTATIONS.scrape)], action: "keep", regex: "true" },
      {
        source_labels: [POD_LABEL_SOURCES.component],
        action: "keep",
        regex: COMPONENTS.join("|"),
      },
      // Every container port of the pod is a discovered target; keep the annotated one's address.
      {
        source_labels: ["__address__", meta("annotation", SCRAPE_ANNOTATIONS.port)],
        regex: "([^:]+)(?::\\d+)?;(\\d+)",
        replacement: "$1:$2",
        target_label: "__address__",
      },
      { source_labels: [meta("annotation", SCRAPE_ANNOTATIONS.path)], regex: "(.+)", target_label: "__metrics_path__" },
      { source_labels: ["__meta_kubernetes_namespace"], target_label: "namespace" },
      { source_labels: [POD_LABEL_SOURCES.release], target_label: "release" },
      { source_labels: [POD_LABEL_SOURCES.component], target_label: "component" },
      { source_labels: [POD_LABEL_SOURCES.zone], target_label: "zone" },
      { source_labels: ["__meta_kubernetes_pod_name"], target_label: "pod" },
    ],
  };
}

/** The job as YAML, under `scrape_configs:` as it goes into prometheus.yml. */
export function scrapeConfigText(o: ScrapeJobOptions): string {
  return stringify({ scrape_configs: [annotationScrapeJob(o)] }, { lineWidth: 0 });
}

export const SCRAPE_CONFIG_BLOCK: GeneratedTable = {
  doc: "docs/metrics.md",
  start: "<!-- scrape-config:start -->",
  end: "<!-- scrape-config:end -->",
  script: "core/metrics/scrape-config.ts",
  what: "scrape configuration",
};

/** The docs' block: the job for the embedded default's namespace (`valkey.namespace`), fenced. */
export function renderScrapeConfigBlock(): string {
  const namespaces = [parseStackConfig({}).config.valkey.namespace];
  return ["```yaml", scrapeConfigText({ namespaces }).trimEnd(), "```"].join("\n");
}

export function replaceScrapeConfigBlock(doc: string, block: string): string {
  return replaceBetweenMarkers(SCRAPE_CONFIG_BLOCK, doc, block);
}

if (import.meta.url === `file://${process.argv[1]}`)
  process.exit(runTableCli(SCRAPE_CONFIG_BLOCK, renderScrapeConfigBlock(), process.argv.slice(2)));
