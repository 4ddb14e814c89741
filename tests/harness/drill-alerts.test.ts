/**
 * A drill watched by live metrics (`vbench drill --metrics`): redis_exporter beside every member and
 * Sentinel, HAProxy's own endpoint, a real Prometheus (Debian's) with the replication rules at the
 * drill's clocks (down-after 2 s, scraped every second). The primary killed and failed over: the row
 * records ValkeyPrimaryChanged firing on the promoted member after the Sentinels promoted it, and no
 * critical alert firing (a failover that heals within the rules' hold is not an outage).
 */
import { describe, expect, it } from "vitest";
import { runDrill } from "../../harness/drill/run-drill.js";
import { isSkipped } from "../../core/drill/drill-result.js";
import { log, testOptions } from "./drill-faults.js";

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
});
