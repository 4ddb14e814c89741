/**
 * PromQL read with Prometheus's own grammar (lezer-promql, the parser of Prometheus's web UI): a
 * query must parse without an error node, and the series selectors it holds are returned with
 * their label matchers, so a test can check every metric a dashboard or rule names against what the
 * real exporters emit.
 */
import { parser } from "@prometheus-io/lezer-promql";

/** One series selector: its metric name and its label matchers (`name -> value`, any match operator). */
export interface SeriesSelector {
  metric: string;
  labels: Record<string, string>;
}

/** Grafana's own variables as durations, so a dashboard query is plain PromQL. */
const GRAFANA_DURATIONS: Record<string, string> = {
  $__rate_interval: "1m",
  $__interval: "15s",
  $__range: "5m",
};

/** The query with Grafana's duration variables replaced (label variables stay: they are inside strings). */
export function grafanaToPromql(expr: string, durations: Record<string, string> = GRAFANA_DURATIONS): string {
  return Object.entries(durations).reduce((e, [name, d]) => e.replaceAll(`[${name}]`, `[${d}]`), expr);
}

/** The selectors of a PromQL query; throws naming the position of the first syntax error. */
export function selectorsOf(expr: string): SeriesSelector[] {
  const tree = parser.parse(expr);
  const out: SeriesSelector[] = [];
  let error: number | undefined;
  tree.iterate({
    enter: (n) => {
      if (n.type.isError && error === undefined) error = n.from;
      if (n.name !== "VectorSelector") return;
      const node = n.node;
      const metric = node.getChild("Identifier");
      const labels: Record<string, string> = {};
      for (const m of node.getChild("LabelMatchers")?.getChildren("UnquotedLabelMatcher") ?? []) {
        const name = m.getChild("LabelName");
        const value = m.getChild("StringLiteral");
        if (name !== null && value !== null)
          labels[expr.slice(name.from, name.to)] = expr.slice(value.from + 1, value.to - 1);
      }
      out.push({ metric: metric === null ? "" : expr.slice(metric.from, metric.to), labels });
    },
  });
  if (error !== undefined)
    throw new Error(`PromQL syntax error at ${error}: ${expr.slice(error, error + 40)} (in ${expr})`);
  return out;
}

/** The metrics the queries select per value of the `component` label (`=~"a|b"` counts for each). */
export function metricsPerComponent(exprs: readonly string[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const s of exprs.flatMap(selectorsOf)) {
    for (const component of (s.labels.component ?? "").split("|").filter((c) => c !== "")) {
      out.set(component, (out.get(component) ?? new Set()).add(s.metric));
    }
  }
  return out;
}
