/**
 * What the real Prometheus on the pods (prometheus-on-pods.ts) saw of a release: every target up, every live query of
 * the mode's dashboard answered with series, and per drill of the stack's first `up` the alerts that went pending,
 * fired and resolved, in ms from that drill's fault (the row's `faultAt`), read from Prometheus's own ALERTS history
 * with core/drill/alert-history.ts (the deployed drills' `drills.alertsFrom` reader). Printed for every drill; asserted where the rules promise
 * something of the fault: a replication primary killed fires ValkeyPrimaryChanged on the member promoted in its place,
 * and every member pod crashed (`all`, both modes) fires ValkeyEveryMemberRestarted, each within the drill's recovery
 * plus three scrape intervals (scraped, evaluated, read at this step).
 */
import { expect } from "vitest";
import { alertsSeen, renderAlertsSeen, type AlertSeen } from "../../../core/drill/alerts-seen.js";
import { alertSnapshots, alertsPerDrill } from "../../../core/drill/alert-history.js";
import { panelsFor } from "../../../core/metrics/dashboard-panels.js";
import { grafanaToPromql } from "../../support/promql.js";
import type { DrillRow } from "./drill-checks.js";
import { POD_PROMETHEUS_SCRAPE_S, type PodPrometheus } from "./prometheus-on-pods.js";

type Mode = "cluster" | "replication";
const S = POD_PROMETHEUS_SCRAPE_S;

/** The mode's live dashboard queries (the measured row reads `vbench report --prometheus`'s file) for one release. */
function dashboardQueries(mode: Mode, namespace: string, release: string): Array<{ title: string; expr: string }> {
  return panelsFor(mode)
    .filter((panel) => panel.row !== "Measured by valkey-on-eks")
    .flatMap((panel) =>
      panel.queries.map((q) => ({
        title: panel.title,
        expr: grafanaToPromql(q.expr, { $__rate_interval: `${5 * S}s`, $__interval: `${S}s`, $__range: "5m" })
          .replaceAll("$namespace", namespace)
          .replaceAll("$release", release),
      })),
    );
}

/** Every target of a release, by component, sorted: cluster 3 x (1 + 1) members; replication 4 members, 3 Sentinels, 2 HAProxy. */
function expectedComponents(mode: Mode): string[] {
  const n = (component: string, count: number): string[] => Array.from({ length: count }, () => component);
  return mode === "cluster" ? n("valkey", 6) : [...n("haproxy", 2), ...n("sentinel", 3), ...n("valkey", 4)];
}

export interface LiveMetricsCheck {
  prom: PodPrometheus;
  mode: Mode;
  ns: string;
  drills: DrillRow[];
  /** When the first `up` started and ended (Date.now()). */
  fromMs: number;
  toMs: number;
}

/** Targets, dashboard and the drills' alerts after the first `up`; returns each drill's alerts. */
export async function expectLiveMetricsOnRealPods(c: LiveMetricsCheck): Promise<AlertSeen[][]> {
  const first = await c.prom.ask({ targetsUp: { count: expectedComponents(c.mode).length, timeoutMs: 60_000 } });
  const health = first.targets.map(
    (t) => `${t.labels.pod}/${t.labels.component}=${t.health}${t.lastError ? ` (${t.lastError})` : ""}`,
  );
  expect(
    first.targets
      .filter((t) => t.health === "up")
      .map((t) => t.labels.component)
      .sort(),
    health.join(", "),
  ).toEqual(expectedComponents(c.mode));
  const release = first.targets[0]?.labels.release ?? "";
  const queries = dashboardQueries(c.mode, c.ns, release);
  const [startS, endS] = [Math.floor(c.fromMs / 1000), Math.ceil(c.toMs / 1000)];
  const a = await c.prom.ask({
    instant: queries.map((q) => q.expr),
    // At 1 s, as the drill step reads it: an episode shorter than a coarser step could fall between two of its steps.
    range: [{ expr: "ALERTS", startS, endS, stepS: 1 }],
  });
  const empty = queries.filter((q) => (a.instant[q.expr] ?? []).length === 0).map((q) => `${q.title}: ${q.expr}`);
  expect(empty, "dashboard queries without series").toEqual([]);
  console.log(
    `[pods] ${c.mode} live metrics: ${first.targets.length} targets up, ${queries.length} dashboard queries answered`,
  );
  const snapshots = alertSnapshots(a.range.ALERTS ?? [], startS, endS, 1);
  const faults = c.drills.map((d) => Date.parse(d.faultAt));
  const seen = alertsPerDrill(faults, snapshots, c.fromMs, c.toMs);
  const before = alertsSeen(
    snapshots.filter((s) => s.at < (faults[0] ?? c.toMs)),
    c.fromMs,
  );
  console.log(
    `[pods] ${c.mode} alerts from the up's start to the first drill (from the start): ${renderAlertsSeen(before)}`,
  );
  // A first deploy pages nobody: no critical alert fires before the first drill (the CI of ca11732: none on either
  // mode; a slow fork's warning did fire on the loaded cores, which is true, so warnings are printed, not refused).
  expect(
    before.filter((x) => x.severity === "critical" && x.firingMs !== null),
    renderAlertsSeen(before),
  ).toEqual([]);
  c.drills.forEach((d, i) =>
    console.log(
      `[pods] ${c.mode} ${d.fault} drill alerts, read after the up: ${renderAlertsSeen(seen[i] ?? [])}; in the row (drills.alertsFrom): ${d.alerts === undefined ? d.alertsNote : renderAlertsSeen(d.alerts)}`,
    ),
  );
  expectRowsAgree(c.drills, seen);
  c.drills.forEach((d, i) => {
    if (c.mode === "replication" && d.fault === "primary") expectPrimaryChanged(d, seen[i] ?? []);
    if (d.fault === "all") expectEveryMemberRestarted(d, seen[i] ?? []);
  });
  return seen;
}

/**
 * The drill step's own reading (drills.alertsFrom, right after the last drill's settle) against this one (after the
 * up): the same history at the same 1 s step, so every alert a row says fired is here too, on the same pod, first
 * firing within one rule evaluation (2 s).
 */
function expectRowsAgree(drills: readonly DrillRow[], seen: readonly AlertSeen[][]): void {
  drills.forEach((d, i) => {
    const why = JSON.stringify({ fault: d.fault, row: d.alerts, note: d.alertsNote, read: seen[i] });
    expect(d.alertsNote, why).toBeUndefined();
    expect(d.alerts, why).toBeDefined();
    for (const a of (d.alerts ?? []).filter((x) => x.firingMs !== null)) {
      const same = (seen[i] ?? []).filter((x) => x.alert === a.alert && x.pod === a.pod && x.firingMs !== null);
      if (a.activeAtStart && a.firingMs === a.pendingMs) {
        // Firing when the row's window opened (drills.preFaultS before the first fault; this reading starts at the
        // up's start): here it fired by then and was still active then.
        const at = a.firingMs ?? 0;
        const active = same.filter((x) => (x.firingMs ?? 0) <= at + 2 * S * 1000 && (x.resolvedMs ?? Infinity) > at);
        expect(active.length, `${a.alert} ${a.pod ?? ""} active at ${at}: ${why}`).toBeGreaterThan(0);
        continue;
      }
      // The same alert on the same pod may fire twice in one window (a failover, then the heal's): the nearest.
      const gaps = same.map((x) => Math.abs((x.firingMs ?? 0) - (a.firingMs ?? 0)));
      expect(Math.min(Infinity, ...gaps), `${a.alert} ${a.pod ?? ""} ${a.firingMs}: ${why}`).toBeLessThanOrEqual(
        2 * S * 1000,
      );
    }
  });
}

/**
 * A replication primary killed: ValkeyPrimaryChanged fires on the member promoted in its place (not a pod the fault
 * deleted), within the drill's recovery plus three scrape intervals, in both readings.
 */
function expectPrimaryChanged(d: DrillRow, seen: readonly AlertSeen[]): void {
  const why = JSON.stringify({
    read: seen,
    row: d.alerts,
    faultAt: d.faultAt,
    recoveryMs: d.recoveryMs,
    deleted: d.deletedPods,
  });
  for (const alerts of [seen, d.alerts ?? []]) {
    const changed = alerts.find((x) => x.alert === "ValkeyPrimaryChanged" && x.firingMs !== null && x.firingMs >= 0);
    expect(changed, `ValkeyPrimaryChanged after the primary drill: ${why}`).toBeDefined();
    expect(
      d.deletedPods.map((p) => p.name),
      why,
    ).not.toContain(changed?.pod);
    expect(changed?.firingMs ?? Infinity, why).toBeLessThanOrEqual((d.recoveryMs ?? 0) + 3 * S * 1000);
  }
}

/**
 * Every member pod crashed at once: ValkeyEveryMemberRestarted fires once the new pods' exporters are scraped, within
 * the drill's recovery (the verifier passing, every member back) plus three scrape intervals, in both readings. On
 * real pods this fault's outage ended before any state alert's hold (2026-12-01), so this is the rule that sees it.
 */
function expectEveryMemberRestarted(d: DrillRow, seen: readonly AlertSeen[]): void {
  const why = JSON.stringify({ read: seen, row: d.alerts, faultAt: d.faultAt, recoveryMs: d.recoveryMs });
  expect(d.recoveryMs, `the all drill healed: ${why}`).not.toBeNull();
  for (const alerts of [seen, d.alerts ?? []]) {
    const fired = alerts.find((x) => x.alert === "ValkeyEveryMemberRestarted" && x.firingMs !== null);
    expect(fired, `ValkeyEveryMemberRestarted after the all drill: ${why}`).toBeDefined();
    expect(fired?.firingMs ?? -1, why).toBeGreaterThanOrEqual(0);
    expect(fired?.firingMs ?? Infinity, why).toBeLessThanOrEqual((d.recoveryMs ?? 0) + 3 * S * 1000);
  }
}

/**
 * A healthy release fires nothing: no warning or critical alert fired in the last `quietMs` (Prometheus's ALERTS
 * history). Info ones (ValkeyPrimaryChanged after the lifecycle's failovers, 5 minutes each) are left out. While
 * something fired within the span, waits for the span to pass after it, up to `waitMs`.
 */
export async function expectQuiet(prom: PodPrometheus, mode: Mode, quietMs = 180_000, waitMs = 360_000): Promise<void> {
  const expr = 'ALERTS{alertstate="firing", severity!="info"}';
  const until = Date.now() + waitMs;
  for (;;) {
    const endS = Math.floor(Date.now() / 1000);
    const startS = endS - Math.round(quietMs / 1000);
    const fired = (await prom.ask({ range: [{ expr, startS, endS, stepS: S }] })).range[expr] ?? [];
    const last = Math.max(0, ...fired.flatMap((x) => x.values.map(([t]) => t * 1000)));
    const what = fired.map((x) => `${x.metric.alertname}${x.metric.pod ? ` (${x.metric.pod})` : ""}`);
    if (fired.length === 0) {
      console.log(`[pods] ${mode}: no warning or critical alert fired in the last ${quietMs / 1000} s`);
      return;
    }
    if (Date.now() > until)
      expect(what, `${mode}: alerts firing within ${quietMs / 1000} s on the healthy release`).toEqual([]);
    await new Promise((r) => setTimeout(r, Math.min(30_000, Math.max(5_000, last + quietMs - Date.now()))));
  }
}
