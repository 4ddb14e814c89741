/**
 * The stack report's `metrics` part (stacks/metrics-output.ts) from the embedded default per mode:
 * the scrape targets match the pods the manifests render (selector, count, port, path), the rule
 * file it hands over is the mode's and passes the real `promtool check rules`, the scrape job is for
 * the stack's namespace; null with metrics off.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { alertsFor } from "../../core/metrics/rule-file.js";
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
    expect(m?.scrapeFrom).toEqual({ namespace: "monitoring", podLabels: {} });
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
});
