/**
 * The dashboards of both modes: built from the one panel list, every query parses with
 * Prometheus's own grammar, every live query selects one release's targets by component, and every
 * figure of the measured row is one `vbench report --prometheus` really writes. That the exporters
 * emit each live metric is tested on real exporters (tests/harness/exporter-metrics.test.ts), and
 * that a real Prometheus answers each query with series in tests/harness/alerts-real.test.ts.
 */
import { describe, expect, it } from "vitest";
import { dashboardOf, dashboardUid } from "../../core/metrics/dashboard.js";
import { DASHBOARD_ROWS, panelsFor } from "../../core/metrics/dashboard-panels.js";
import { VBENCH_METRIC_HELP } from "../../benchmarks/report/prometheus-export.js";
import { grafanaToPromql, selectorsOf } from "../support/promql.js";

const MODES = ["replication", "cluster"] as const;

interface BuiltPanel {
  type: string;
  title?: string;
  datasource?: { uid?: string };
  targets?: Array<{ expr?: string; refId?: string }>;
  gridPos?: { x: number; y: number; w: number; h: number };
}

const panelsOf = (mode: (typeof MODES)[number]) => (dashboardOf(mode).panels ?? []) as BuiltPanel[];
const exprsOf = (mode: (typeof MODES)[number]) => panelsFor(mode).flatMap((p) => p.queries.map((q) => q.expr));

describe.each(MODES)("the %s dashboard", (mode) => {
  it("holds every panel of the list, with its queries, under its rows in order, on the Prometheus variable", () => {
    const built = panelsOf(mode);
    const defined = panelsFor(mode);
    const rows = built.filter((p) => p.type === "row").map((p) => p.title);
    expect(rows).toEqual(DASHBOARD_ROWS.filter((r) => defined.some((p) => p.row === r)));
    const panels = built.filter((p) => p.type !== "row");
    expect(panels.map((p) => p.title)).toEqual(defined.map((p) => p.title));
    expect(panels.map((p) => p.targets?.map((t) => t.expr))).toEqual(defined.map((p) => p.queries.map((q) => q.expr)));
    for (const p of panels) {
      expect(p.datasource?.uid, p.title).toBe("${datasource}");
      expect(new Set(p.targets?.map((t) => t.refId)).size, p.title).toBe(p.targets?.length);
    }
    const d = dashboardOf(mode);
    expect(d.uid).toBe(dashboardUid(mode));
    expect(d.templating?.list?.map((v) => v.name)).toEqual(["datasource", "namespace", "release"]);
  });

  it("lays no two panels over each other", () => {
    const boxes = panelsOf(mode).map((p) => p.gridPos);
    const cells = new Set<string>();
    for (const b of boxes) {
      if (b === undefined) throw new Error("a panel without a position");
      for (let x = b.x; x < b.x + b.w; x++)
        for (let y = b.y; y < b.y + b.h; y++) {
          expect(cells.has(`${x},${y}`), `cell ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
    }
  });

  it("every query parses as PromQL", () => {
    for (const expr of exprsOf(mode)) expect(() => selectorsOf(grafanaToPromql(expr)), expr).not.toThrow();
  });

  it("every live selector picks one release's targets of one component; every measured one is a figure vbench exports", () => {
    const selectors = exprsOf(mode).flatMap((e) => selectorsOf(grafanaToPromql(e)));
    const live = selectors.filter((s) => !s.metric.startsWith("vbench_"));
    const measured = selectors.filter((s) => s.metric.startsWith("vbench_"));
    expect(live.length).toBeGreaterThan(20);
    for (const s of live) {
      expect(s.labels, s.metric).toMatchObject({ namespace: "$namespace", release: "$release" });
      expect(["valkey", "sentinel", "haproxy"], s.metric).toContain(s.labels.component);
    }
    expect(measured.length).toBeGreaterThan(3);
    for (const s of measured) {
      expect(Object.keys(VBENCH_METRIC_HELP), s.metric).toContain(s.metric);
      expect(s.labels.mode).toBe(mode);
    }
  });

  it("shows only what the mode has", () => {
    const components = new Set(
      exprsOf(mode).flatMap((e) => selectorsOf(grafanaToPromql(e)).map((s) => s.labels.component)),
    );
    const metrics = new Set(exprsOf(mode).flatMap((e) => selectorsOf(grafanaToPromql(e)).map((s) => s.metric)));
    if (mode === "replication") {
      expect([...components].filter((c) => c !== undefined).sort()).toEqual(["haproxy", "sentinel", "valkey"]);
      expect([...metrics].some((m) => m.startsWith("redis_cluster_"))).toBe(false);
    } else {
      expect([...components].filter((c) => c !== undefined)).toEqual(["valkey"]);
      expect(metrics).toContain("redis_cluster_state");
    }
  });
});

describe("the PromQL reader the dashboard tests rely on", () => {
  it("refuses a query that does not parse, naming where", () => {
    expect(() => selectorsOf('sum(rate(redis_commands_total{component="valkey"}[1m])')).toThrow(/syntax error/);
    expect(() => selectorsOf("rate(x[$__rate_interval])")).toThrow(/syntax error/);
  });

  it("returns each selector's metric and matchers", () => {
    expect(selectorsOf('max by (pod) (a{component="valkey", role="master"}) or 0 * b{component=~"x|y"}')).toEqual([
      { metric: "a", labels: { component: "valkey", role: "master" } },
      { metric: "b", labels: { component: "x|y" } },
    ]);
  });
});
