/**
 * The scrape job for a Prometheus without the Operator (core/metrics/scrape-config.ts) reads
 * exactly what the rendered pods carry: every pod annotation and label its relabelling names is set
 * on the member, Sentinel and HAProxy pod templates, under Prometheus's `__meta_kubernetes_pod_*`
 * spelling; the labels it writes are the ones the alert rules group by; and docs/metrics.md shows
 * the generated job. Its relabelling running in a real Prometheus is tests/harness/alerts-real.test.ts's.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import {
  annotationScrapeJob,
  meta,
  renderScrapeConfigBlock,
  replaceScrapeConfigBlock,
  SCRAPE_CONFIG_BLOCK,
} from "../../core/metrics/scrape-config.js";
import { TARGET_LABELS } from "../../core/metrics/targets.js";
import { replicationFixture } from "../support/valkey-fixtures.js";

interface Relabel {
  source_labels?: string[];
  target_label?: string;
  action?: string;
  regex?: string;
}
const job = annotationScrapeJob({ namespaces: ["valkey"] }) as { relabel_configs: Relabel[] };

describe("the annotation scrape job", () => {
  it("names, in Prometheus's meta spelling, exactly the annotations and labels the rendered pods carry", () => {
    const m = replicationFixture({ metrics: parseStackConfig({}).config.metrics });
    const templates = [m.statefulSet, m.sentinel.statefulSet, m.haproxy.deployment].map((w) => w.spec?.template);
    const read = job.relabel_configs
      .flatMap((r) => r.source_labels ?? [])
      .filter((l) => l.startsWith("__meta_kubernetes_pod_annotation_") || l.startsWith("__meta_kubernetes_pod_label_"));
    expect(read.length).toBeGreaterThanOrEqual(5);
    for (const t of templates) {
      const carried = new Set([
        ...Object.keys(t?.metadata?.annotations ?? {}).map((a) => meta("annotation", a)),
        ...Object.keys(t?.metadata?.labels ?? {}).map((l) => meta("label", l)),
      ]);
      expect(read.filter((l) => !carried.has(l))).toEqual([]);
    }
    expect(meta("annotation", "valkey-on-eks/metrics-component")).toBe(
      "__meta_kubernetes_pod_annotation_valkey_on_eks_metrics_component",
    );
  });

  it("writes the labels the alert rules group by, and keeps only annotated pods of the three components", () => {
    const written = job.relabel_configs
      .map((r) => r.target_label)
      .filter((l) => l !== undefined && !l.startsWith("__"));
    expect([...written].sort()).toEqual([...TARGET_LABELS].sort());
    const keeps = job.relabel_configs.filter((r) => r.action === "keep").map((r) => r.regex);
    expect(keeps).toEqual(["true", "valkey|sentinel|haproxy"]);
  });

  it(`is the generated block in ${SCRAPE_CONFIG_BLOCK.doc} (npx tsx core/metrics/scrape-config.ts --write)`, () => {
    const doc = readFileSync(SCRAPE_CONFIG_BLOCK.doc, "utf8");
    expect(replaceScrapeConfigBlock(doc, renderScrapeConfigBlock())).toBe(doc);
  });
});
