/**
 * `metrics.prometheusOperator` in the whole program under Pulumi mocks: each mode's release registers
 * its PodMonitors and its PrometheusRule as children of the release component, with the manifests
 * monitoring.ts builds (the rule's groups at the stack's own bounds); without the flag, none. The
 * Grafana dashboard's ConfigMap (`metrics.dashboard`, on by default): a child of the release in the
 * namespace and with the labels asked, holding the mode's dashboard; none without it or without
 * metrics.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { awsMockInvokes, awsMockOutputs, installMocks, settle, valueOf } from "../support/pulumi-mocks.js";

const recorder = installMocks({ invokes: awsMockInvokes, outputs: awsMockOutputs });
const { parseStackConfig } = await import("../../config/schema.js");
const { runProgram } = await import("../../stacks/program.js");
const { alertInputs } = await import("../../core/metrics/alert-definition.js");
const { ruleGroups } = await import("../../core/metrics/rule-file.js");
const { dashboardJson } = await import("../../core/metrics/dashboard.js");

const dir = mkdtempSync(join(tmpdir(), "vbench-monitoring-program-"));
const kubeconfigPath = join(dir, "kubeconfig");
writeFileSync(kubeconfigPath, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");
beforeEach(() => recorder.reset());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function deploy(mode: "replication" | "cluster", metrics: Record<string, unknown>) {
  recorder.reset();
  const { config } = parseStackConfig({
    platform: "byo",
    byo: { kubeconfig: kubeconfigPath },
    valkey: { mode },
    benchmark: { enabled: false },
    metrics,
  });
  const out = runProgram({ stack: "byo", config, password: "pw-monitoring-mock" });
  await valueOf(out.report);
  await settle();
  const crs = recorder.resources.filter((r) => r.inputs.apiVersion === "monitoring.coreos.com/v1");
  const dashboards = recorder.resources.filter((r) => r.name.endsWith("-dashboard"));
  return { config, crs, dashboards };
}

describe("PodMonitors and the PrometheusRule in the program", () => {
  it.each([
    ["replication", ["valkey-podmonitor-valkey", "valkey-podmonitor-sentinel", "valkey-podmonitor-haproxy"]],
    ["cluster", ["valkey-cluster-podmonitor-valkey"]],
  ] as const)("%s: children of the release, the rule at the stack's bounds", async (mode, monitors) => {
    const { config, crs } = await deploy(mode, { prometheusOperator: true, monitorLabels: { release: "kps" } });
    const release = mode === "replication" ? "valkey" : "valkey-cluster";
    const rule = `${release}-alert-rules`;
    expect(crs.map((r) => r.name).sort()).toEqual([...monitors, rule].sort());
    for (const r of crs) {
      expect(r.type, r.name).toBe(`kubernetes:monitoring.coreos.com/v1:${String(r.inputs.kind)}`);
      expect(r.parent, r.name).toBe(release);
      expect((r.inputs.metadata as { labels: Record<string, string> }).labels.release, r.name).toBe("kps");
    }
    expect(crs.filter((r) => r.inputs.kind === "PodMonitor").map((r) => r.name)).toEqual([...monitors]);
    const spec = crs.find((r) => r.name === rule)?.inputs.spec;
    expect(spec).toEqual(JSON.parse(JSON.stringify(ruleGroups(alertInputs(config.valkey)))));
  });

  it("none without metrics.prometheusOperator", async () => {
    expect((await deploy("replication", {})).crs).toEqual([]);
    expect(recorder.resources.filter((r) => r.type.includes("monitoring.coreos.com"))).toEqual([]);
  });
});

describe("the Grafana dashboard's ConfigMap in the program", () => {
  it.each(["replication", "cluster"] as const)(
    "%s: by default a child of the release in its namespace, labelled for the sidecar, holding the mode's dashboard",
    async (mode) => {
      const { dashboards } = await deploy(mode, {});
      const release = mode === "replication" ? "valkey" : "valkey-cluster";
      expect(dashboards.map((r) => [r.name, r.type, r.parent])).toEqual([
        [`${release}-dashboard`, "kubernetes:core/v1:ConfigMap", release],
      ]);
      const inputs = dashboards[0]?.inputs as { metadata: Record<string, unknown>; data: Record<string, string> };
      expect(inputs.metadata).toMatchObject({
        name: `${release}-dashboard`,
        namespace: "valkey",
        labels: { "grafana_dashboard": "1", "app.kubernetes.io/instance": release },
      });
      expect(inputs.data).toEqual({ [`valkey-on-eks-${mode}.json`]: dashboardJson(mode) });
    },
  );

  it("in the namespace and with the labels asked; none when turned off or without metrics", async () => {
    const { dashboards } = await deploy("cluster", {
      dashboard: { namespace: "grafana", labels: { dashboards: "valkey" } },
    });
    const meta = (dashboards[0]?.inputs as { metadata: { namespace: string; labels: Record<string, string> } })
      .metadata;
    expect(meta.namespace).toBe("grafana");
    expect(meta.labels.dashboards).toBe("valkey");
    expect(meta.labels.grafana_dashboard).toBeUndefined();
    expect((await deploy("cluster", { dashboard: { enabled: false } })).dashboards).toEqual([]);
    expect((await deploy("replication", { enabled: false })).dashboards).toEqual([]);
  });
});
