/**
 * The pods tier's Prometheus (tests/pods/support/prometheus-on-pods.ts, live-metrics-checks.ts) off the cluster: its
 * configuration passes the real `promtool check config` and keeps the stack's annotation job as it is, discovery aside.
 * Reading its alert history is tests/core/alert-history.test.ts's.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { annotationScrapeJob } from "../../core/metrics/scrape-config.js";
import { debianBinary } from "../../harness/metrics/process.js";
import { podPrometheusConfig, POD_PROMETHEUS_SCRAPE_S } from "../pods/support/prometheus-on-pods.js";

describe("the pods tier's Prometheus", () => {
  it("its configuration passes promtool check config; the job is the stack's, over http_sd instead of Kubernetes discovery", () => {
    const dir = mkdtempSync(join(tmpdir(), "pod-prometheus-"));
    try {
      const text = podPrometheusConfig("valkey-x");
      // The rule file's path is the pod's; promtool reads it, so an empty group list stands in for it here.
      writeFileSync(join(dir, "prometheus.yml"), text.replace("/etc/prometheus/rules.yaml", join(dir, "rules.yaml")));
      writeFileSync(join(dir, "rules.yaml"), "groups: []\n");
      const out = execFileSync(debianBinary("promtool", "PROMTOOL"), ["check", "config", join(dir, "prometheus.yml")], {
        encoding: "utf8",
      });
      expect(out).toContain("SUCCESS");
      const job = (parse(text) as { scrape_configs: Array<Record<string, unknown>> }).scrape_configs[0]!;
      const { kubernetes_sd_configs: _sd, ...stack } = annotationScrapeJob({
        namespaces: ["valkey-x"],
        scrapeIntervalSeconds: POD_PROMETHEUS_SCRAPE_S,
      });
      const { http_sd_configs: httpSd, ...rest } = job;
      expect(rest).toEqual(stack);
      expect(httpSd).toEqual([{ url: "http://127.0.0.1:8080/", refresh_interval: `${POD_PROMETHEUS_SCRAPE_S}s` }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
