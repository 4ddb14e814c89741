/**
 * The alert rules of both modes, rendered from the one definition list, through the real promtool
 * (Debian's prometheus 2.42; .ci/setup installs it): `promtool check rules` accepts them and
 * `promtool test rules` runs every alert's cases, synthetic series under which it must fire with
 * the stated labels, or stay quiet. Then the same tests against mutated rules (a threshold, a
 * comparison, a severity, a grouping label changed): each mutation must make promtool fail.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { debianBinary } from "../../harness/metrics/process.js";
import { parseStackConfig } from "../../config/schema.js";
import {
  alertInputs,
  type AlertDefinition,
  type AlertInputs,
  type AlertMode,
} from "../../core/metrics/alert-definition.js";
import { ALERTS } from "../../core/metrics/alerts.js";
import { ALERT_TABLE, renderAlertTable, replaceAlertTable } from "../../core/metrics/render-alert-table.js";
import { alertsFor, ruleFileText, ruleGroups, ruleTests, type RuleGroups } from "../../core/metrics/rule-file.js";

const dir = mkdtempSync(join(tmpdir(), "alert-rules-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** promtool's exit status and output for `args` (0 and stdout, or its non-zero status and stderr + stdout). */
function run(args: string[]): { status: number; out: string } {
  try {
    return {
      status: 0,
      out: execFileSync(debianBinary("promtool", "PROMTOOL"), args, { encoding: "utf8", stdio: "pipe" }),
    };
  } catch (err) {
    const e = err as { status?: number; stdout?: string; stderr?: string };
    return { status: e.status ?? -1, out: `${e.stderr ?? ""}${e.stdout ?? ""}` };
  }
}

const inputs = (mode: AlertMode): AlertInputs => alertInputs(parseStackConfig({ valkey: { mode } }).config.valkey);

/** Writes `groups` and the unit tests of `alerts` (the mode's); runs promtool test rules. */
function testRules(
  i: AlertInputs,
  groups: RuleGroups,
  tag: string,
  alerts: readonly AlertDefinition[] = ALERTS,
): { status: number; out: string } {
  const rules = join(dir, `${i.mode}-${tag}.rules.yaml`);
  const tests = join(dir, `${i.mode}-${tag}.tests.yaml`);
  writeFileSync(rules, ruleFileText(groups));
  writeFileSync(tests, ruleTests(i, rules, alerts));
  return run(["test", "rules", tests]);
}

/**
 * The one rule `alert`, changed by `change` when given, alone in its group: its cases are the only ones that read
 * it, and promtool evaluates every rule of the file for each case (the whole file took ~9 s per mutation).
 */
function alone(
  groups: RuleGroups,
  alert: string,
  change?: (r: RuleGroups["groups"][0]["rules"][0]) => void,
): RuleGroups {
  const copy = structuredClone(groups);
  const group = copy.groups[0];
  const rule = group?.rules.find((r) => r.alert === alert);
  if (group === undefined || rule === undefined) throw new Error(`no rule ${alert}`);
  const before = JSON.stringify(rule);
  change?.(rule);
  if (change !== undefined && JSON.stringify(rule) === before)
    throw new Error(`the mutation of ${alert} changed nothing`);
  group.rules = [rule];
  return copy;
}

describe("alert rules (promtool)", () => {
  it("every alert has a case that fires it and one that leaves it quiet, and applies to some mode", () => {
    for (const a of ALERTS) {
      const i = inputs(a.modes[0] ?? "replication");
      expect(
        a.cases(i).some((c) => c.fires.length > 0),
        a.alert,
      ).toBe(true);
      expect(
        a.cases(i).some((c) => c.fires.length === 0),
        a.alert,
      ).toBe(true);
      expect(a.modes.length, a.alert).toBeGreaterThan(0);
    }
    expect(new Set(ALERTS.map((a) => a.alert)).size).toBe(ALERTS.length);
  });

  it.each(["replication", "cluster"] as const)(
    "%s: the rule file passes promtool check rules and test rules",
    (mode) => {
      const groups = ruleGroups(inputs(mode));
      const file = join(dir, `${mode}.check.yaml`);
      writeFileSync(file, ruleFileText(groups));
      const check = run(["check", "rules", file]);
      expect(check.out).toContain(`SUCCESS: ${alertsFor(mode).length} rules found`);
      expect(check.status).toBe(0);
      const test = testRules(inputs(mode), groups, "ok");
      expect(test.out).toContain("SUCCESS");
      expect(test.status).toBe(0);
    },
  );

  it("replication: the lag rule follows valkey.replication.minReplicasMaxLag, and the Sentinel and endpoint rules are in", () => {
    const i = alertInputs(parseStackConfig({ valkey: { replication: { minReplicasMaxLag: 2 } } }).config.valkey);
    const rules = ruleGroups(i).groups[0]?.rules ?? [];
    expect(rules.find((r) => r.alert === "ValkeyReplicaLagOverFencingBound")?.expr).toMatch(/> 2$/);
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining(["ValkeyNoPrimary", "ValkeySentinelQuorumLost", "ValkeyWriteEndpointWithoutServer"]),
    );
    expect(rules.map((r) => r.alert)).not.toContain("ValkeyClusterStateNotOk");
    expect(testRules(i, ruleGroups(i), "lag2").status).toBe(0);
  });

  const mutations: Array<[AlertMode, string, string, (r: RuleGroups["groups"][0]["rules"][0]) => void]> = [
    [
      "replication",
      "ValkeyReplicaLagOverFencingBound",
      "> lag becomes >=",
      (r) => (r.expr = r.expr.replace(" > ", " >= ")),
    ],
    ["replication", "ValkeyNoPrimary", "severity critical becomes warning", (r) => (r.labels.severity = "warning")],
    [
      "replication",
      "ValkeyWriteEndpointWithoutServer",
      "a deploy over once its first primary is seen (offset 3m dropped)",
      (r) => (r.expr = r.expr.replace(" offset 3m", "")),
    ],
    [
      "replication",
      "ValkeyWriteEndpointWithoutServer",
      "an endpoint that routed once counts as deploying (the hour it remembers becomes one step)",
      (r) => (r.expr = r.expr.replace(/\[1h:(\d+s)\]/, "[$1:$1]")),
    ],
    [
      "replication",
      "ValkeyWriteEndpointWithoutServer",
      "a write server UP before its first check counts as routed (the check-status join dropped)",
      (r) =>
        (r.expr = r.expr.replace(
          / and on \(namespace, release, pod, proxy, server\) \(max by [^)]*\) \([^)]*\) == 1\)/,
          "",
        )),
    ],
    [
      "replication",
      "ValkeyWriteEndpointWithoutServer",
      "a release without members yet counts as deploying at any HAProxy age (the HAProxy age dropped)",
      (r) =>
        (r.expr = r.expr.replace(
          /\(max by \(namespace, release\) \(haproxy_process_uptime_seconds[^)]*\) < 600\)/,
          '(max by (namespace, release) (haproxy_process_uptime_seconds{component="haproxy"}))',
        )),
    ],
    [
      "replication",
      "ValkeyWriteEndpointWithoutServer",
      "a young HAProxy counts as deploying beside members seen (the members' hour dropped)",
      (r) =>
        (r.expr = r.expr.replace(
          / unless on \(namespace, release\) max by \(namespace, release\) \(max_over_time\(redis_uptime_in_seconds[^\]]*\]\)\)/,
          "",
        )),
    ],
    [
      "replication",
      "ValkeySentinelsDisagree",
      "grouped without master_address",
      (r) => (r.expr = r.expr.replace(", master_address", "")),
    ],
    ["cluster", "ValkeyMemoryNearMax", "0.9 becomes 0.99", (r) => (r.expr = r.expr.replace("> 0.9", "> 0.99"))],
    [
      "cluster",
      "ValkeyClusterSlotsNotOk",
      "< 16384 becomes < 16000",
      (r) => (r.expr = r.expr.replace("16384", "16000")),
    ],
    ["cluster", "ValkeyServerDown", "for 60s removed", (r) => delete r.for],
    [
      "replication",
      "ValkeyPrimaryChanged",
      "5 m window becomes 10 m",
      (r) => (r.expr = r.expr.replace("[5m]", "[10m]")),
    ],
    [
      "cluster",
      "ValkeyEveryMemberRestarted",
      "restarted together: 60 s becomes 600 s",
      (r) => (r.expr = r.expr.replace("< 60)", "< 600)")),
    ],
    [
      "replication",
      "ValkeyEveryMemberRestarted",
      "a restart read as any change of the uptime (resets becomes changes)",
      (r) => (r.expr = r.expr.replace("resets(", "changes(")),
    ],
    [
      "cluster",
      "ValkeyEveryMemberRestarted",
      "every member becomes any member (the count comparison dropped)",
      (r) =>
        (r.expr = r.expr.replace(
          /^\(count by \(namespace, release\) \((resets.*?> 0)\) == count by.*?\)\)\) and on/,
          "(count by (namespace, release) ($1)) and on",
        )),
    ],
    [
      "cluster",
      "ValkeyPrimaryWithoutReplicaInAnotherZone",
      "a same-zone replica counted (the zone dropped from the join)",
      (r) => (r.expr = r.expr.replaceAll(", peer, zone)", ", peer)")),
    ],
    [
      "replication",
      "ValkeyPrimaryWithoutReplicaInAnotherZone",
      "replicas matched by address only",
      (r) => (r.expr = r.expr.replace(/ or \(\(label_join\(label_replace.*$/, ")")),
    ],
  ];
  it.each(mutations)("%s: mutating %s (%s) makes promtool test rules fail", (mode, alert, _what, change) => {
    const own = ALERTS.filter((a) => a.alert === alert);
    // Alone and unmutated, the rule passes its own cases: what fails below is the mutation.
    expect(testRules(inputs(mode), alone(ruleGroups(inputs(mode)), alert), `own-${alert}`, own).status).toBe(0);
    const result = testRules(inputs(mode), alone(ruleGroups(inputs(mode)), alert, change), `mut-${alert}`, own);
    expect(result.status).not.toBe(0);
    expect(result.out).toContain(alert);
  });
});

describe(`the alert table in ${ALERT_TABLE.doc}`, () => {
  it("is the generated one (npx tsx core/metrics/render-alert-table.ts --write), one row per alert", () => {
    const doc = readFileSync(ALERT_TABLE.doc, "utf8");
    expect(replaceAlertTable(doc, renderAlertTable())).toBe(doc);
    expect(renderAlertTable().split("\n").slice(2)).toHaveLength(ALERTS.length);
  });
});
