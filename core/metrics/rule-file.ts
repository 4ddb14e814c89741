/**
 * The alert rules of one mode as a Prometheus rule file, and promtool's unit tests of it, both
 * from the one list of definitions (alerts.ts): `promtool check rules` and `promtool test rules`
 * run on exactly what a stack deploys (tests/core/alert-rules.test.ts).
 */
import { stringify } from "yaml";
import type { ValkeyConfig } from "../../config/types.js";
import {
  alertInputs,
  CASE_INTERVAL,
  type AlertDefinition,
  type AlertInputs,
  type AlertMode,
} from "./alert-definition.js";
import { ALERTS } from "./alerts.js";

export interface PrometheusRule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; action: string };
}

export interface RuleGroups {
  groups: Array<{ name: string; rules: PrometheusRule[] }>;
}

/** The definitions that apply to `mode`. */
export function alertsFor(mode: AlertMode, alerts: readonly AlertDefinition[] = ALERTS): AlertDefinition[] {
  return alerts.filter((a) => a.modes.includes(mode));
}

/**
 * How long a definition's condition must hold at these inputs: its own hold time, and at least two
 * scrape intervals when it has one (a failed scrape leaves a target's series stale for an interval).
 */
export function holdSeconds(a: AlertDefinition, i: AlertInputs): number {
  const own = a.forSeconds(i);
  return own > 0 ? Math.max(own, 2 * i.scrapeIntervalSeconds) : 0;
}

/** One definition as a rule at these inputs. */
export function ruleOf(a: AlertDefinition, i: AlertInputs): PrometheusRule {
  const forSeconds = holdSeconds(a, i);
  return {
    alert: a.alert,
    expr: a.expr(i),
    ...(forSeconds > 0 ? { for: `${forSeconds}s` } : {}),
    labels: { severity: a.severity },
    annotations: { summary: a.summary, action: a.action },
  };
}

/** The rule groups of the inputs' mode (one group, named for the mode). */
export function ruleGroups(i: AlertInputs, alerts: readonly AlertDefinition[] = ALERTS): RuleGroups {
  return {
    groups: [{ name: `valkey-on-eks-${i.mode}`, rules: alertsFor(i.mode, alerts).map((a) => ruleOf(a, i)) }],
  };
}

/** promtool's unit-test file for the rule groups at `ruleFile`: every case of every alert of the mode. */
export function ruleTests(i: AlertInputs, ruleFile: string, alerts: readonly AlertDefinition[] = ALERTS): string {
  const tests = alertsFor(i.mode, alerts).flatMap((a) =>
    a.cases(i).map((c) => ({
      name: `${a.alert}: ${c.what}`,
      interval: CASE_INTERVAL,
      input_series: c.series,
      alert_rule_test: [
        {
          eval_time: c.at ?? "10m",
          alertname: a.alert,
          exp_alerts: c.fires.map((labels) => ({
            exp_labels: { ...labels, severity: a.severity },
            exp_annotations: { summary: a.summary, action: a.action },
          })),
        },
      ],
    })),
  );
  return stringify({ rule_files: [ruleFile], evaluation_interval: CASE_INTERVAL, tests }, { lineWidth: 0 });
}

/** The rule file's text. */
export function ruleFileText(groups: RuleGroups): string {
  return stringify(groups, { lineWidth: 0 });
}

/** A stack's rule file: its mode's rules at its bounds (report.metrics.rules, AMP's rule groups namespace). */
export function stackRuleFile(valkey: ValkeyConfig): string {
  return ruleFileText(ruleGroups(alertInputs(valkey)));
}

/**
 * The metrics the rules select, per component (`metric{component="x"` or `=~"x|y"` in an
 * expression): what the exporters must emit for the rules to mean anything.
 */
export function metricsByComponent(groups: RuleGroups): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const rule of groups.groups.flatMap((g) => g.rules)) {
    for (const m of rule.expr.matchAll(/([a-z_:][a-z0-9_:]*)\{component=~?"([^"]+)"/g)) {
      for (const component of (m[2] ?? "").split("|")) {
        const set = out.get(component) ?? new Set<string>();
        set.add(m[1] ?? "");
        out.set(component, set);
      }
    }
  }
  return out;
}
