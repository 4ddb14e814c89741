/**
 * The `metrics` section of the stack-file schema (sections.ts lists it): redis_exporter beside
 * every member and Sentinel (pod/exporter.ts), HAProxy's own `/metrics`, the scrape annotations,
 * and which pods the NetworkPolicies admit to scrape them. On by default, as valkey-helm's and
 * Bitnami's `metrics.enabled` are not: a stack nobody can watch is not what the tool promises.
 */
import { z } from "zod";
import { versions } from "../versions.js";
import { DEFAULT_EXPORTER_PORT, SENTINEL_PORT, VALKEY_BUS_PORT, VALKEY_PORT } from "../vocabulary/ports.js";
import { DNS_LABEL_RE, flag, imageReference, ipv4Cidr, section, unique } from "./fields.js";

const TAKEN_PORTS = [VALKEY_PORT, VALKEY_BUS_PORT, SENTINEL_PORT];

/** A label key (optional DNS-subdomain prefix, then a name of up to 63 characters) and its value. */
const LABEL_KEY_RE = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE_RE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** A map of Kubernetes labels, empty unless another default is given. */
const labelMap = (byDefault: Record<string, string> = {}) =>
  z
    .record(
      z.string().regex(LABEL_KEY_RE, { error: "must be a Kubernetes label key" }),
      z.string().regex(LABEL_VALUE_RE, { error: "must be a Kubernetes label value" }),
    )
    .default(byDefault);

/** An Amazon Managed Service for Prometheus workspace's ARN (`aws amp describe-workspace` prints it). */
export const AMP_WORKSPACE_ARN_RE =
  /^arn:aws[a-z-]*:aps:([a-z]{2}(-gov)?-[a-z]+-\d):\d{12}:workspace\/(ws-[A-Za-z0-9-]+)$/;

const namespaceName = () =>
  z.string().regex(DNS_LABEL_RE, { error: "must be a Kubernetes namespace name (lower-case DNS label)" });

export const metricsSchema = section(
  {
    enabled: flag(true).describe(
      "Run a metrics exporter (redis_exporter) beside every Valkey member and Sentinel, its password from the release's Secret in its environment (never argv); annotate the member, Sentinel and HAProxy pods with the conventional `prometheus.io/scrape`, `port` and `path` (HAProxy serves its own `/metrics` on its status port 8404); and let the NetworkPolicies admit the scrape from `scrapeFrom` only. The exporters' requests (25m CPU, 32Mi memory each) are counted by the capacity check and the cost estimate. false: no exporter, no annotation, no scrape rule.",
    ),
    exporterImage: imageReference(versions.EXPORTER_IMAGE).describe(
      "redis_exporter image, same forms as `valkey.image`. The default is the version whose metric names the alert rules are tested against (Debian's prometheus-redis-exporter 1.45, on real servers), from quay.io (no anonymous pull limit like Docker Hub's).",
    ),
    port: z
      .int()
      .min(1024)
      .max(65535)
      .refine((p) => !TAKEN_PORTS.includes(p), {
        error: `must not be a port the Valkey pods already use (${TAKEN_PORTS.join(", ")})`,
      })
      .default(DEFAULT_EXPORTER_PORT)
      .describe("Port of the exporter's `/metrics` in the member and Sentinel pods."),
    prometheusOperator: flag(false).describe(
      "Create, for a Prometheus Operator the cluster runs, a PodMonitor per scraped component (the members; in replication mode the Sentinels and HAProxy too) and a PrometheusRule holding this mode's alert rules (`monitoring.coreos.com/v1`). The PodMonitors attach the same target labels as the annotation scrape job (`namespace`, `release`, `component`, `pod`), so the rules work on either. The Operator's CRDs must already be installed (not detected: without them the Kubernetes provider refuses the two kinds at `pulumi up`); needs `enabled`. false: the scrape annotations only; load `report.metrics.scrapeJob` and `report.metrics.rules` into your Prometheus (docs/metrics.md).",
    ),
    monitorLabels: labelMap().describe(
      'Labels on the PodMonitors and the PrometheusRule (with `prometheusOperator`), for an Operator whose Prometheus selects them by label: kube-prometheus-stack\'s does by default, `{"release": "<its Helm release name>"}`.',
    ),
    dashboard: section(
      {
        enabled: flag(true).describe(
          "Ship this mode's Grafana dashboard (core/metrics/dashboard.ts: throughput and latency per command, memory, replication and failovers, cluster slots, Sentinels and the write endpoint, persistence, and the figures `vbench report --prometheus` exports) as a ConfigMap `<release>-dashboard` for the Grafana dashboard sidecar (kube-prometheus-stack's and the Grafana chart's). Only with `enabled`: without exporters nothing would fill it. false: no ConfigMap; the JSON is still in the stack report (`report.metrics.dashboard.json`).",
        ),
        labels: labelMap({ grafana_dashboard: "1" }).describe(
          "Labels on the dashboard's ConfigMap: the label the sidecar watches (`sidecar.dashboards.label`, `grafana_dashboard` by default, any value).",
        ),
        namespace: namespaceName()
          .optional()
          .describe(
            "Namespace of the dashboard's ConfigMap, which must exist: where the sidecar looks (`sidecar.dashboards.searchNamespace`; by default only Grafana's own). Unset: the release's namespace (`valkey.namespace`).",
          ),
      },
      "The Grafana dashboard of this mode, as a ConfigMap for Grafana's sidecar (docs/metrics.md).",
    ),
    scrapeFrom: section(
      {
        namespace: namespaceName()
          .default("monitoring")
          .describe(
            "Namespace of the Prometheus that scrapes the stack: the NetworkPolicies admit the exporters' port and HAProxy's status port from pods in it only (matched by its `kubernetes.io/metadata.name` label, which Kubernetes sets on every namespace).",
          ),
        podLabels: labelMap().describe(
          'Labels the scraping pods must also carry, e.g. `{"app.kubernetes.io/name": "prometheus"}`; empty: every pod in `namespace`.',
        ),
        cidrs: z
          .array(ipv4Cidr("must be an IPv4 CIDR such as 10.0.0.0/16"))
          .superRefine(unique("CIDR"))
          .default([])
          .describe(
            "Addresses outside the cluster's pods that may scrape too (a Prometheus on an instance, a managed collector): the NetworkPolicies admit the metrics ports from them. With `amp.enabled` the stack adds `eks.vpcCidr` itself (the managed scraper connects from network interfaces in the VPC's subnets).",
          ),
      },
      "Who may scrape the metrics (NetworkPolicy ingress).",
    ),
    amp: section(
      {
        enabled: flag(false).describe(
          "Platform eks: scrape the stack with an Amazon Managed Service for Prometheus managed collector (a scraper on the cluster, its scrape job the annotation job of `report.metrics.scrapeJob`), load this mode's alert rules into the workspace (a rule groups namespace), and bind the collector's Kubernetes user `aps-collector-user` to the read-only ClusterRole AWS documents. The stack creates no access entry for the collector's role: AWS's guide has AMP set up the collector's access on a cluster with access entries (this one); should the collector not list pods, map `report.metrics.amp.scraperRoleArn` to `aps-collector-user` with an access entry. The metrics ports are then admitted from `eks.vpcCidr` too: the collector connects from network interfaces in the private subnets, not from a pod. Needs `metrics.enabled`. false: nothing of AMP.",
        ),
        workspaceArn: z
          .string()
          .regex(AMP_WORKSPACE_ARN_RE, {
            error: "must be an AMP workspace ARN such as arn:aws:aps:us-west-2:123456789012:workspace/ws-0123abcd-…",
          })
          .optional()
          .describe(
            "An existing workspace, in the stack's region, to write to and load the rules into. Unset: the stack creates one (`valkey-<stack>`), which `pulumi destroy` removes with its data.",
          ),
      },
      "Amazon Managed Service for Prometheus: a managed collector and the alert rules (docs/metrics.md).",
    ),
  },
  "Metrics: an exporter beside every member and Sentinel, scrape annotations, and the NetworkPolicy rule admitting the scraper (docs/metrics.md).",
);
