/**
 * The shape of one alert, defined once: the rule (expression, hold time, severity, what it means
 * and what to do) and the cases that prove it, synthetic series under which it must fire (with the
 * labels it fires with) or stay quiet. rule-file.ts renders the rule files and promtool's unit
 * tests from the same list, so a rule and its test cannot drift apart.
 */
import type { ValkeyConfig } from "../../config/types.js";
import { seriesName, type Component, type TargetLabels } from "./targets.js";

export type AlertMode = ValkeyConfig["mode"];

/** The values of the deployed config the rules are drawn from (alertInputs derives them). */
export interface AlertInputs {
  mode: AlertMode;
  /** `valkey.replication.minReplicasMaxLag`: the lag past which a replica stops counting for fencing. */
  maxLagSeconds: number;
  /** `valkey.replication.sentinel.downAfterMilliseconds`, in whole seconds (rounded up). */
  downAfterSeconds: number;
  /** `valkey.cluster.nodeTimeoutMs`, in whole seconds (rounded up). */
  nodeTimeoutSeconds: number;
  /**
   * How often the targets are scraped. A rule with a hold time holds at least two of these
   * (rule-file.ts ruleOf): one failed scrape of the primary's exporter makes its series stale for
   * one interval, which must not fire ValkeyNoPrimary. @default 15
   */
  scrapeIntervalSeconds: number;
}

/** The scrape interval the rules assume unless told (Prometheus Operator's PodMonitor has none of its own). */
export const DEFAULT_SCRAPE_INTERVAL_SECONDS = 15;

/** The inputs of a parsed `valkey` config. */
export function alertInputs(
  valkey: ValkeyConfig,
  scrapeIntervalSeconds = DEFAULT_SCRAPE_INTERVAL_SECONDS,
): AlertInputs {
  return {
    mode: valkey.mode,
    maxLagSeconds: valkey.replication.minReplicasMaxLag,
    downAfterSeconds: Math.ceil(valkey.replication.sentinel.downAfterMilliseconds / 1000),
    nodeTimeoutSeconds: Math.ceil(valkey.cluster.nodeTimeoutMs / 1000),
    scrapeIntervalSeconds,
  };
}

/** One input series of a case: its name with labels, and its values in promtool's notation (`1+0x20`). */
export interface CaseSeries {
  series: string;
  values: string;
}

/** Synthetic series and what the alert must do under them at `at` (promtool's eval_time). */
export interface AlertCase {
  what: string;
  series: CaseSeries[];
  /** @default "10m" */
  at?: string;
  /** The label sets it fires with (its own `severity` is added); empty: it must stay quiet. */
  fires: Array<Record<string, string>>;
}

export interface AlertDefinition {
  alert: string;
  modes: readonly AlertMode[];
  /** `info`: an event worth seeing on a dashboard or in a channel, not a page. */
  severity: "critical" | "warning" | "info";
  expr: (i: AlertInputs) => string;
  /** How long the condition must hold, in seconds (0: at once); at least two scrape intervals when not 0. */
  forSeconds: (i: AlertInputs) => number;
  /** What it means, one sentence. */
  summary: string;
  /** What to do. */
  action: string;
  cases: (i: AlertInputs) => AlertCase[];
}

/** The samples one case's series are spaced by (promtool's `interval`). */
export const CASE_INTERVAL = "15s";

/** A target of the cases' one release (`valkey` in namespace `db`). */
export function target(component: Component, pod: string): TargetLabels {
  return { namespace: "db", release: "valkey", component, pod };
}

/** The labels of the cases' release as a whole (a rule grouped `by (namespace, release)`). */
export const RELEASE = { namespace: "db", release: "valkey" } as const;

/** One case series: `metric` of `labels` (plus `extra`) with `values`. */
export function series(
  metric: string,
  labels: Record<string, string>,
  values: string,
  extra: Record<string, string> = {},
): CaseSeries {
  return { series: seriesName(metric, { ...labels, ...extra }), values };
}

/** A value held for the whole case (`v` for 30 samples, 7.5 min at the case interval). */
export const steady = (v: number): string => `${v}+0x30`;
