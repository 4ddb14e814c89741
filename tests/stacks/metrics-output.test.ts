/**
 * The stack report's `metrics` part (stacks/metrics-output.ts) from the embedded default per mode:
 * the scrape targets match the pods the manifests render (selector, count, port, path), the rule
 * file it hands over is the mode's and passes the real `promtool check rules`, the scrape job is for
 * the stack's namespace; the dashboard is the mode's, with the ConfigMap the stack creates for it
 * (none when turned off); null with metrics off.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { alertsFor } from "../../core/metrics/rule-file.js";
import { dashboardJson } from "../../core/metrics/dashboard.js";
import { debianBinary } from "../../harness/metrics/process.js";
import { metricsPart } from "../../stacks/metrics-output.js";
import { stackReport } from "../../stacks/outputs.js";

const configOf = (raw: Record<string, unknown>) => parseStackConfig(raw).config;

describe("the stack report's metrics part", () => {
  it("replication: members, Sentinels and HAProxy as the manifests render them; the mode's rules pass promtool", () => {
    const config = configOf({ valkey: { mode: "replication", namespace: "cache" } });
    const m = metricsPart(config);
    expect(m?.targets.map((t) => [t.component, t.pods, t.port, t.path])).toEqual([
      ["valkey", 4, 9121, "/metrics"],
      ["sentinel", 3, 9121, "/metrics"],
      ["haproxy", 2, 8404, "/metrics"],
    ]);
    expect(m?.targets[1]?.selector).toContain("app.kubernetes.io/name=valkey-sentinel");
    expect(m?.scrapeFrom).toEqual({ namespace: "monitoring", podLabels: {}, cidrs: [] });
    expect(m?.scrapeJob).toMatch(/names:\n\s+- cache\n/);
    for (const a of alertsFor("replication")) expect(m?.rules).toContain(`alert: ${a.alert}`);
    const dir = mkdtempSync(join(tmpdir(), "metrics-output-"));
    try {
      writeFileSync(join(dir, "rules.yml"), m?.rules ?? "");
      const out = execFileSync(debianBinary("promtool", "PROMTOOL"), ["check", "rules", join(dir, "rules.yml")], {
        encoding: "utf8",
      });
      expect(out).toContain(`SUCCESS: ${alertsFor("replication").length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // In the report itself, beside the rest.
    const endpoints = { namespace: "cache", write: "w", read: "r", port: 6379 };
    const report = stackReport("s", config, endpoints, undefined, undefined);
    expect(report.metrics).toEqual(m);
  });

  it("cluster: the members only, with the cluster rules; metrics off: null", () => {
    const m = metricsPart(configOf({ valkey: { mode: "cluster" } }));
    expect(m?.targets.map((t) => [t.component, t.pods])).toEqual([["valkey", 6]]);
    expect(m?.rules).toContain("alert: ValkeyClusterStateNotOk");
    expect(m?.rules).not.toContain("alert: ValkeyNoPrimary");
    expect(metricsPart(configOf({ metrics: { enabled: false } }))).toBeNull();
  });

  it("names the mode's dashboard and the ConfigMap that ships it, which the flag turns off", () => {
    const m = metricsPart(configOf({ valkey: { mode: "cluster", namespace: "cache" } }));
    expect(m?.dashboard).toEqual({
      uid: "valkey-on-eks-cluster",
      configMap: { name: "valkey-cluster-dashboard", namespace: "cache" },
      json: dashboardJson("cluster"),
    });
    const elsewhere = metricsPart(configOf({ metrics: { dashboard: { namespace: "grafana" } } }));
    expect(elsewhere?.dashboard.configMap).toEqual({ name: "valkey-dashboard", namespace: "grafana" });
    const off = metricsPart(configOf({ metrics: { dashboard: { enabled: false } } }));
    expect(off?.dashboard).toMatchObject({ uid: "valkey-on-eks-replication", configMap: null });
    expect(off?.dashboard.json).toBe(dashboardJson("replication"));
  });
});
