/**
 * One Grafana dashboard per mode, built as typed code with Grafana's foundation SDK from the one
 * panel list (dashboard-panels.ts). Three variables pick what it shows: the Prometheus data source,
 * the namespace and the release (from the targets' own labels, targets.ts). The stack ships it as
 * a ConfigMap the Grafana sidecar loads (components/valkey/monitoring.ts); local runs write it
 * beside their results.
 */
import * as sdk from "@grafana/grafana-foundation-sdk/dashboard";
import { DataqueryBuilder } from "@grafana/grafana-foundation-sdk/prometheus";
import { PanelBuilder as StatPanel } from "@grafana/grafana-foundation-sdk/stat";
import { PanelBuilder as StatePanel } from "@grafana/grafana-foundation-sdk/statetimeline";
import { PanelBuilder as TimeseriesPanel } from "@grafana/grafana-foundation-sdk/timeseries";
import type { AlertMode } from "./alert-definition.js";
import { DASHBOARD_ROWS, panelsFor, type PanelDefinition } from "./dashboard-panels.js";

/** The dashboard's uid for a mode (stable: Grafana keeps a dashboard's history by it). */
export const dashboardUid = (mode: AlertMode): string => `valkey-on-eks-${mode}`;

/** The dashboard's file name: its key in the ConfigMap, and its file in a local run's `dashboards/`. */
export const dashboardFileName = (mode: AlertMode): string => `${dashboardUid(mode)}.json`;

const DATASOURCE = { type: "prometheus", uid: "${datasource}" };
const PANEL_WIDTH = 12;
const PANEL_HEIGHT = 8;

/** A label's values among the members' `redis_up`, as a variable (the namespace or the release). */
function labelVariable(name: "namespace" | "release", filter: string): sdk.QueryVariableBuilder {
  const query = `label_values(redis_up{component="valkey"${filter}}, ${name})`;
  return new sdk.QueryVariableBuilder(name)
    .label(name)
    .datasource(DATASOURCE)
    .query({ query, refId: "PrometheusVariableQueryEditor-VariableQuery" })
    .definition(query)
    .refresh(sdk.VariableRefresh.OnTimeRangeChanged)
    .sort(sdk.VariableSort.AlphabeticalAsc);
}

function panelBuilder(p: PanelDefinition): TimeseriesPanel | StatPanel | StatePanel {
  const builder = p.kind === "stat" ? new StatPanel() : p.kind === "state" ? new StatePanel() : new TimeseriesPanel();
  builder
    .title(p.title)
    .description(p.description)
    .datasource(DATASOURCE)
    .unit(p.unit)
    .span(PANEL_WIDTH)
    .height(PANEL_HEIGHT);
  p.queries.forEach((q, i) =>
    builder.withTarget(
      new DataqueryBuilder()
        .expr(q.expr)
        .legendFormat(q.legend)
        .refId(String.fromCharCode(65 + i)),
    ),
  );
  return builder;
}

/** The dashboard of `mode`, as the JSON model Grafana imports. */
export function dashboardOf(mode: AlertMode): sdk.Dashboard {
  const builder = new sdk.DashboardBuilder(`Valkey on EKS: ${mode} mode`)
    .uid(dashboardUid(mode))
    .tags(["valkey", "valkey-on-eks", mode])
    .description(
      `Live metrics of a ${mode}-mode release (redis_exporter beside every member${mode === "replication" ? " and Sentinel, HAProxy's own endpoint" : ""}) and the figures valkey-on-eks measured for it.`,
    )
    .readonly()
    .refresh("30s")
    .time({ from: "now-1h", to: "now" })
    .tooltip(sdk.DashboardCursorSync.Crosshair)
    .withVariable(new sdk.DatasourceVariableBuilder("datasource").label("Prometheus").type("prometheus"))
    .withVariable(labelVariable("namespace", ""))
    .withVariable(labelVariable("release", ', namespace="$namespace"'));
  const panels = panelsFor(mode);
  for (const row of DASHBOARD_ROWS) {
    const inRow = panels.filter((p) => p.row === row);
    if (inRow.length === 0) continue;
    builder.withRow(new sdk.RowBuilder(row));
    for (const p of inRow) builder.withPanel(panelBuilder(p));
  }
  return builder.build();
}

/** The dashboard's JSON text, as the ConfigMap and the local results hold it. */
export function dashboardJson(mode: AlertMode): string {
  return `${JSON.stringify(dashboardOf(mode), null, 2)}\n`;
}
