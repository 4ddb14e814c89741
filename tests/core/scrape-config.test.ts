/**
 * The scrape job for a Prometheus without the Operator (core/metrics/scrape-config.ts) reads
 * exactly what the rendered pods carry: every pod annotation and label its relabelling names is set
 * on the member, Sentinel and HAProxy pod templates, under Prometheus's `__meta_kubernetes_pod_*`
 * spelling; the labels it writes are the ones the alert rules group by; and docs/metrics.md shows
 * the generated job; the job, and AMP's managed collector configuration around it, pass the real
 * `promtool check config` (Kubernetes discovery swapped for a static target: Debian's Prometheus is
 * built without it), and a broken relabelling does not. Its relabelling running in a real
 * Prometheus is tests/harness/alerts-real.test.ts's.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify } from "yaml";
import { ampScrapeConfiguration } from "../../components/aws/managed-prometheus.js";
import { debianBinary } from "../../harness/metrics/process.js";
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
    expect([...written].sort()).toEqual([...TARGET_LABELS, "zone"].sort());
    const keeps = job.relabel_configs.filter((r) => r.action === "keep").map((r) => r.regex);
    expect(keeps).toEqual(["true", "valkey|sentinel|haproxy"]);
  });

  it(`is the generated block in ${SCRAPE_CONFIG_BLOCK.doc} (npx tsx core/metrics/scrape-config.ts --write)`, () => {
    const doc = readFileSync(SCRAPE_CONFIG_BLOCK.doc, "utf8");
    expect(replaceScrapeConfigBlock(doc, renderScrapeConfigBlock())).toBe(doc);
  });
});

/** promtool check config of `doc` with each job's discovery replaced by one static target: exit status and output. */
function promtoolCheck(doc: { scrape_configs: Array<Record<string, unknown>> }): { status: number; out: string } {
  const dir = mkdtempSync(join(tmpdir(), "scrape-config-"));
  try {
    const jobs = doc.scrape_configs.map(({ kubernetes_sd_configs: _sd, ...job }) => ({
      ...job,
      static_configs: [{ targets: ["10.0.1.7:9121"] }],
    }));
    writeFileSync(join(dir, "prometheus.yml"), stringify({ ...doc, scrape_configs: jobs }));
    try {
      const out = execFileSync(debianBinary("promtool", "PROMTOOL"), ["check", "config", join(dir, "prometheus.yml")], {
        encoding: "utf8",
        stdio: "pipe",
      });
      return { status: 0, out };
    } catch (err) {
      const e = err as { status: number; stdout: string; stderr: string };
      return { status: e.status, out: `${e.stderr}${e.stdout}` };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the scrape configurations through the real promtool", () => {
  const amp = parseYaml(ampScrapeConfiguration(["valkey"])) as {
    global: Record<string, string>;
    scrape_configs: Array<Record<string, unknown>>;
  };

  it("the annotation job and AMP's collector configuration pass promtool check config", () => {
    for (const doc of [{ scrape_configs: [annotationScrapeJob({ namespaces: ["valkey"] })] }, amp]) {
      const r = promtoolCheck(doc);
      expect(r.out).toContain("SUCCESS");
      expect(r.status).toBe(0);
    }
    expect(amp.global).toEqual({ scrape_interval: "15s" });
    expect(amp.scrape_configs.map((j) => j.kubernetes_sd_configs)).toEqual([
      [{ role: "pod", namespaces: { names: ["valkey"] }, attach_metadata: { node: true } }],
    ]);
  });

  it("a broken relabelling (an invalid regex) fails it", () => {
    const job = annotationScrapeJob({ namespaces: ["valkey"] }) as { relabel_configs: Relabel[] };
    const broken = {
      ...job,
      relabel_configs: [{ ...job.relabel_configs[0], regex: "(" }, ...job.relabel_configs.slice(1)],
    };
    const r = promtoolCheck({ scrape_configs: [broken] });
    expect(r.status).not.toBe(0);
    expect(r.out).toMatch(/regexp|FAILED/);
  });
});
