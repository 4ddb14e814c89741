/**
 * `metrics.prometheusOperator` (components/valkey/monitoring.ts): a PodMonitor per scraped
 * component whose selector picks exactly that component's rendered pods, scraping the named port
 * those pods expose at the path and port number their scrape annotations give, and attaching the
 * same `release` and `component` labels as the annotation scrape job; a PrometheusRule holding the
 * mode's rule groups, accepted by the real promtool; nothing without the flag. That the objects fit
 * the Operator's CRDs is tests/stacks/kubernetes-schemas.test.ts's (kubeconform against the CRDs of
 * PROMETHEUS_OPERATOR_VERSION); the program registering them, tests/stacks/monitoring-program.test.ts's.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseStackConfig } from "../../config/schema.js";
import type { MetricsConfig } from "../../config/types.js";
import { buildClusterManifests } from "../../components/valkey/cluster-manifests.js";
import type { Container } from "../../components/valkey/k8s-types.js";
import type { PodMonitor } from "../../components/valkey/monitoring.js";
import { alertInputs } from "../../core/metrics/alert-definition.js";
import { ruleGroups } from "../../core/metrics/rule-file.js";
import { annotationScrapeJob } from "../../core/metrics/scrape-config.js";
import { SCRAPE_ANNOTATIONS } from "../../core/metrics/targets.js";
import { debianBinary } from "../../harness/metrics/process.js";
import { PLACEMENT, replicationFixture, valkeyConfig } from "../support/valkey-fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "monitoring-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const metricsOf = (metrics: Record<string, unknown>): MetricsConfig => parseStackConfig({ metrics }).config.metrics;
const OPERATOR = { prometheusOperator: true, monitorLabels: { release: "kps" } };

interface Workload {
  spec?: {
    template?: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec?: { containers?: Container[] };
    };
  };
}

const selects = (pm: PodMonitor, w: Workload): boolean =>
  Object.entries(pm.spec.selector.matchLabels).every(([k, v]) => w.spec?.template?.metadata?.labels?.[k] === v);

/** The PodMonitor picks `own` and none of `others`, at a port `own`'s containers name, at its annotated port and path. */
function expectScrapes(pm: PodMonitor, own: Workload, others: Workload[]): void {
  expect(selects(pm, own), pm.metadata.name).toBe(true);
  for (const o of others) expect(selects(pm, o), pm.metadata.name).toBe(false);
  const [endpoint, ...more] = pm.spec.podMetricsEndpoints;
  expect(more).toEqual([]);
  const ports = (own.spec?.template?.spec?.containers ?? []).flatMap((c) => c.ports ?? []);
  const port = ports.find((p) => p.name === endpoint?.port);
  expect(port, `${pm.metadata.name}: no container port named ${endpoint?.port}`).toBeDefined();
  const a = own.spec?.template?.metadata?.annotations ?? {};
  expect(String(port?.containerPort)).toBe(a[SCRAPE_ANNOTATIONS.port]);
  expect(endpoint?.path).toBe(a[SCRAPE_ANNOTATIONS.path]);
}

/** What the annotation job relabels into `label`: the PodMonitors must attach the same. */
function jobSource(label: string): string[] {
  const rules = annotationScrapeJob({ namespaces: ["valkey"] }).relabel_configs as Array<{
    source_labels: string[];
    target_label?: string;
  }>;
  return rules.find((r) => r.target_label === label)?.source_labels ?? [];
}

describe("PodMonitors and a PrometheusRule for the Prometheus Operator", () => {
  it("replication: members, Sentinels and HAProxy, each selecting only its own pods at its annotated port and path", () => {
    const r = replicationFixture({ metrics: metricsOf(OPERATOR) });
    const mon = r.monitoring;
    expect(mon?.podMonitors.map((p) => [p.component, p.manifest.metadata.name])).toEqual([
      ["valkey", "valkey-members"],
      ["sentinel", "valkey-sentinel"],
      ["haproxy", "valkey-haproxy"],
    ]);
    const [members, sentinels, haproxy] = (mon?.podMonitors ?? []).map((p): PodMonitor => p.manifest);
    const sts = r.statefulSet as Workload;
    const sen = r.sentinel.statefulSet as Workload;
    const hap = r.haproxy.deployment as Workload;
    expectScrapes(members as PodMonitor, sts, [sen, hap]);
    expectScrapes(sentinels as PodMonitor, sen, [sts, hap]);
    expectScrapes(haproxy as PodMonitor, hap, [sts, sen]);
    for (const pm of [members, sentinels, haproxy] as PodMonitor[]) {
      expect(pm.metadata.namespace).toBe("valkey");
      expect(pm.metadata.labels).toMatchObject({ "release": "kps", "app.kubernetes.io/instance": "valkey" });
      expect(pm.spec.namespaceSelector).toEqual({ matchNames: ["valkey"] });
      const relabel = pm.spec.podMetricsEndpoints[0]?.relabelings ?? [];
      for (const label of ["release", "component"])
        expect(relabel.find((x) => x.targetLabel === label)?.sourceLabels, label).toEqual(jobSource(label));
      expect(pm.spec.podMetricsEndpoints[0]?.interval).toBe("15s");
    }
    expect(mon?.rule.metadata).toMatchObject({ name: "valkey-alerts", namespace: "valkey" });
    expect(mon?.rule.spec).toEqual(ruleGroups(alertInputs(valkeyConfig())));
  });

  it("cluster: the members only; the rule holds the cluster groups", () => {
    const valkey = valkeyConfig({ mode: "cluster" });
    const c = buildClusterManifests({
      namespace: "ns",
      release: "vc",
      valkey,
      placement: PLACEMENT,
      auth: true,
      metrics: metricsOf(OPERATOR),
    });
    expect(c.monitoring?.podMonitors.map((p) => p.manifest.metadata.name)).toEqual(["vc-members"]);
    expectScrapes(c.monitoring?.podMonitors[0]?.manifest as PodMonitor, c.statefulSet, []);
    expect(c.monitoring?.rule.spec.groups.map((g) => g.name)).toEqual(["valkey-on-eks-cluster"]);
    expect(c.monitoring?.rule.spec).toEqual(ruleGroups(alertInputs(valkey)));
  });

  it("nothing without prometheusOperator, with metrics off, or without metrics", () => {
    expect(replicationFixture({ metrics: metricsOf({}) }).monitoring).toBeUndefined();
    expect(replicationFixture({ metrics: { ...metricsOf(OPERATOR), enabled: false } }).monitoring).toBeUndefined();
    expect(replicationFixture({}).monitoring).toBeUndefined();
  });

  it("the PrometheusRule's groups pass the real `promtool check rules`, and a broken expression does not", () => {
    const promtool = debianBinary("promtool", "PROMTOOL");
    for (const mode of ["replication", "cluster"] as const) {
      const spec = buildClusterManifestsOrReplication(mode);
      const file = join(dir, `${mode}.yaml`);
      writeFileSync(file, stringify(spec));
      expect(execFileSync(promtool, ["check", "rules", file], { encoding: "utf8" })).toMatch(
        /SUCCESS: \d+ rules found/,
      );
      const broken = structuredClone(spec);
      const first = broken.groups[0]?.rules[0];
      if (first) first.expr = `${first.expr} )`;
      writeFileSync(file, stringify(broken));
      expect(() => execFileSync(promtool, ["check", "rules", file], { stdio: "pipe" })).toThrow();
    }
  });
});

function buildClusterManifestsOrReplication(mode: "replication" | "cluster") {
  const metrics = metricsOf(OPERATOR);
  const m =
    mode === "replication"
      ? replicationFixture({ metrics })
      : buildClusterManifests({
          namespace: "ns",
          release: "vc",
          valkey: valkeyConfig({ mode }),
          placement: PLACEMENT,
          auth: true,
          metrics,
        });
  const spec = m.monitoring?.rule.spec;
  if (spec === undefined) throw new Error(`${mode}: no PrometheusRule`);
  return spec;
}
