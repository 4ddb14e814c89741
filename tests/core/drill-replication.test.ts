/**
 * Every fault on the local Sentinel topology (real valkey-server members through the rendered
 * start script, 3 real Sentinels, real HAProxy), one topology drilled five times in a row (each
 * drill starts from a verified healthy topology). Load: ioredis' Sentinel-aware client AND the
 * write endpoint, concurrently. WAIT-confirmed writes lost in primary/switchover would be a
 * finding: the assertion stays.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReplicationTarget } from "../../benchmarks/drill/replication-target.js";
import { drillOn, type DrillResult } from "../../benchmarks/drill/run-drill.js";
import { expectMeasured, expectNoWaitedWriteLost, itReplicaDrill, log, measuredDrill, testOptions, TIMINGS } from "./drill-faults.js";

let target: ReplicationTarget;
beforeAll(async () => {
  target = await ReplicationTarget.start({ ...TIMINGS, replicas: 2, zones: ["zone-a", "zone-b", "zone-c"], password: "drill-test-password" });
}, 60_000);
afterAll(async () => target?.stop());

describe("replication drills (Sentinel topology, real processes)", () => {
  it("primary: SIGKILL → Sentinel failover; both load paths write again; no WAIT-confirmed write lost", async () => {
    const r = await measuredDrill(target, "primary", { detected: true });
    expect(r.streams.map((s) => s.stream)).toEqual(["sentinel-client", "write-endpoint"]);
    // Writes stop at least until the Sentinels see the primary down; bounded by the local timeouts.
    expect(r.writeOutageMs).toBeGreaterThanOrEqual(TIMINGS.failureDetectionMs / 2);
    expect(r.writeOutageMs).toBeLessThanOrEqual(30_000);
    expectNoWaitedWriteLost(r);
  }, 120_000);

  itReplicaDrill(() => target);

  it("zone: the primary's zone (member + Sentinel) down → failover by the 2 remaining Sentinels, zone back later", async () => {
    const r = await measuredDrill(target, "zone", { detected: true });
    expect(r.writeOutageMs).toBeLessThanOrEqual(30_000);
    expect(r.faultDescription).toMatch(/sentinel-/);
  }, 120_000);

  it("all: every member down at once → back with their data, one primary, verifier passes", async () => {
    const r = await measuredDrill(target, "all", { detected: true });
    expect(r.writeOutageMs).toBeGreaterThanOrEqual(TIMINGS.restartDelayMs);
  }, 120_000);

  let switchover: DrillResult | undefined;
  it("switchover: SENTINEL FAILOVER (the preStop path) → short outage, measured; the drill's verdict follows its ledger", async () => {
    const r = await drillOn(target, testOptions("replication", "switchover"));
    log(r);
    switchover = r;
    expectMeasured(r, "switchover");
    expect(r.detectionMs).toBeNull();
    expect(r.detectionNote).toMatch(/planned/);
    expect(r.writeOutageMs).toBeLessThanOrEqual(10_000);
    expect(r.ok).toBe(r.lostWaitedWrites === 0);
  }, 120_000);

  // FINDING (see the drills report): a bare SENTINEL FAILOVER does not pause writes on the old
  // primary; the replica not yet reconfigured still acknowledges WAIT for writes the promoted
  // replica never gets, and they are dropped when Sentinel repoints everyone. The strict
  // assertion stays; it.fails marks it known and turns red once the preStop pauses writes first.
  it.fails("switchover: no WAIT-confirmed write lost (KNOWN FINDING: fails with a bare SENTINEL FAILOVER)", () => {
    // Not run: pass here, which it.fails turns into a failure (nothing is masked).
    if (switchover === undefined) return;
    expect(switchover.lostWaitedWrites).toBe(0);
  });
});
