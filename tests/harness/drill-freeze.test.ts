/**
 * The freeze fault on real processes (SIGSTOP the primary past cluster-node-timeout, then
 * SIGCONT) and what the ledger makes of it:
 * - the confirmed ledger: a write counts as WAIT-confirmed only when the WAIT was answered on the
 *   same connection, by the node that acknowledged it, while it was still a primary. The resumed
 *   old primary acknowledges writes for a few ms before it learns it was demoted; they must not
 *   be confirmed (a WAIT sent later to the new primary confirmed them before);
 * - a drill that did not heal still reads back what it can: keys no node answers for are
 *   "unknown", never lost.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../harness/drill/cluster-target.js";
import { drillOn } from "../../harness/drill/run-drill.js";
import { sleep } from "../../core/util/poll-until.js";
import { expectNoWaitedWriteLost, log, startTestCluster, testOptions, TIMINGS } from "./drill-faults.js";

const PASSWORD = "drill-freeze-password";
let target: ClusterTarget | undefined;
afterEach(async () => {
  // A frozen member is thawed by its fault's own timer; give it the time before stopping.
  await sleep(TIMINGS.failureDetectionMs + TIMINGS.restartDelayMs);
  await target?.stop();
  target = undefined;
});

describe("freeze drill, cluster mode (real processes)", () => {
  it("frozen primary: healed, no write counted as WAIT-confirmed is lost, acknowledged loss reported against the bound", async () => {
    target = await startTestCluster(PASSWORD, 200);
    const r = await drillOn(target, { ...testOptions("cluster", "freeze"), rate: 100 });
    log(r);
    expect(r.healed).toBe(true);
    expect(r.faultDescription).toMatch(/SIGSTOP primary .* then SIGCONT/);
    expect(r.detectionMs).not.toBeNull();
    expect(r.waitedWrites).toBeGreaterThan(0);
    expectNoWaitedWriteLost(r);
    expect(r.ackedLossBound).not.toBeNull();
    expect(r.ackedLossBound!.reason).toMatch(/fenced|unfenced/);
    expect(r.unknownWrites).toBe(0);
    expect(r.ok).toBe(r.lostAckedOutsideBound === 0 && r.lostAckedWrites <= r.ackedLossBound!.writes);
  }, 150_000);

  it("not healed (recovery cut short while the primary is frozen): read back what answers, unknown for the rest, not every write lost", async () => {
    target = await startTestCluster(PASSWORD, 210);
    const r = await drillOn(target, {
      ...testOptions("cluster", "freeze"),
      rate: 50,
      recoveryTimeoutMs: 500,
      tailMs: 500,
    });
    log(r);
    expect(r.healed).toBe(false);
    expect(r.ok).toBe(false);
    expect(r.ackedWrites).toBeGreaterThan(50);
    // Two of the three shards answer: their keys are read back, not counted lost.
    expect(r.lostAckedWrites, JSON.stringify(r.streams[0]?.lostKeys)).toBeLessThan(r.ackedWrites / 2);
    expect(r.unknownWrites + r.lostAckedWrites).toBeLessThan(r.ackedWrites);
  }, 150_000);
});
