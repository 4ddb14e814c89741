/**
 * A drill watched by live metrics (`vbench drill --metrics`): redis_exporter beside every member and
 * Sentinel, HAProxy's own endpoint, a real Prometheus (Debian's) with the replication rules at the
 * drill's clocks (down-after 2 s, scraped every second). The primary killed and failed over: the row
 * records ValkeyPrimaryChanged firing on the promoted member after the Sentinels promoted it, and no
 * critical alert firing (a failover that heals within the rules' hold is not an outage). A cluster's
 * every member killed and started again on new addresses (`all`, as pods come back with new IPs): the
 * exporters follow them as each recreated pod's own does, and the row records ValkeyEveryMemberRestarted
 * firing once the new members are scraped: it needs every member's uptime to have gone down, which only the new
 * exporters at the new addresses report (the old ones are removed and their series marked stale).
 */
import { describe, expect, it } from "vitest";
import { runDrill } from "../../harness/drill/run-drill.js";
import { isSkipped } from "../../core/drill/drill-result.js";
import { DISCOVERY_UPDATE_MS } from "../../core/drill/alert-history.js";
import { log, testOptions, TIMINGS } from "./drill-faults.js";

describe("drill with live metrics (real exporters and Prometheus)", () => {
  it("replication primary: the row records ValkeyPrimaryChanged firing on the promoted member after the Sentinels promoted it, no critical alert firing, and each member's commands/s from Prometheus", async () => {
    const r = await runDrill({ ...testOptions("replication", "primary"), metrics: true, alertSettleMs: 20_000 });
    if (isSkipped(r)) throw new Error(`skipped: ${r.skipped.reason}`);
    log(r);
    const why = JSON.stringify({ alerts: r.alerts, steps: r.failoverSteps, fault: r.faultDescription });
    expect(r.healed, why).toBe(true);
    expect(r.alerts, why).toBeDefined();
    const changed = r.alerts?.find((a) => a.alert === "ValkeyPrimaryChanged" && a.firingMs !== null);
    expect(changed, why).toBeDefined();
    expect(changed?.severity, why).toBe("info");
    // The promoted member, not the one the fault killed ("SIGKILL primary member-0 (…)").
    expect(changed?.pod, why).toMatch(/^member-\d+$/);
    expect(r.faultDescription, why).not.toContain(`${changed?.pod} `);
    // Two readings of one event: the Sentinels sending REPLICAOF NO ONE, then the member's own role through its exporter.
    const promoted = r.failoverSteps?.promotionSentMs;
    expect(promoted, why).toEqual(expect.any(Number));
    expect(changed?.firingMs, why).toBeGreaterThanOrEqual(promoted ?? Infinity);
    // The healthy topology before the fault: nothing fired.
    expect(
      r.alerts?.filter((a) => a.firingMs !== null && a.firingMs < 0),
      why,
    ).toEqual([]);
    // The servers' own count of the load (their exporters through Prometheus): every member processed commands
    // before the fault (the primary the writes, the replicas its stream), and the promoted one after recovery.
    const live = new Map(r.liveMetrics?.series.map((x) => [x.pod, x.points]));
    expect([...live.keys()].sort(), why).toEqual(["member-0", "member-1", "member-2"]);
    for (const [pod, points] of live)
      expect(
        points.some(([t, ops]) => t < 0 && ops > 0),
        `${pod} before the fault: ${JSON.stringify(points)}`,
      ).toBe(true);
    const promotedPoints = live.get(changed?.pod ?? "") ?? [];
    expect(
      promotedPoints.some(([t, ops]) => t * 1000 > (r.recoveryMs ?? Infinity) && ops > 0),
      `the promoted member after recovery: ${JSON.stringify(promotedPoints)}`,
    ).toBe(true);
    const critical = r.alerts?.filter((a) => a.severity === "critical" && a.firingMs !== null) ?? [];
    expect(critical, why).toEqual([]);
  }, 240_000);

  it("cluster all: the exporters follow the members to their new addresses; the row records ValkeyEveryMemberRestarted firing after the restart, once Prometheus scrapes the new addresses", async () => {
    const r = await runDrill({ ...testOptions("cluster", "all"), metrics: true, alertSettleMs: 30_000 });
    if (isSkipped(r)) throw new Error(`skipped: ${r.skipped.reason}`);
    log(r);
    const why = JSON.stringify({ alerts: r.alerts, recoveryMs: r.recoveryMs, fault: r.faultDescription });
    expect(r.healed, why).toBe(true);
    const restarted = r.alerts?.find((a) => a.alert === "ValkeyEveryMemberRestarted" && a.firingMs !== null);
    expect(restarted, why).toBeDefined();
    expect(restarted?.severity, why).toBe("info");
    // Not before the fault; once every member answers at its new address and Prometheus scrapes it there: its
    // discovery applies a changed target set at most every 5 s (as Kubernetes discovery does with a new pod), so by
    // the later of the verifier's pass and the restart + 5 s, plus the exporters' start and two 1 s evaluations.
    expect(restarted?.firingMs ?? -1, why).toBeGreaterThanOrEqual(0);
    const scrapedBy = Math.max(r.recoveryMs ?? Infinity, TIMINGS.restartDelayMs + DISCOVERY_UPDATE_MS);
    expect(restarted?.firingMs ?? Infinity, why).toBeLessThanOrEqual(scrapedBy + 3000);
    expect(
      r.alerts?.filter((a) => a.firingMs !== null && a.firingMs < 0),
      why,
    ).toEqual([]);
  }, 300_000);
});
