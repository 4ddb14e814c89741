/**
 * Every fault on a local cluster whose members run the rendered pod scripts (start.sh with the
 * heal and AZ-failback loops), one 3 × 1 cluster drilled five times in a row. Load: ioredis'
 * Cluster client. The `all` fault brings every member back on a NEW address (heal.sh re-meets).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRESTOP_LOG_FILE } from "../../pod/paths.js";
import type { ClusterTarget } from "../../harness/drill/cluster-target.js";
import { expectNoWaitedWriteLost, itReplicaDrill, measuredDrill, startTestCluster, TIMINGS } from "./drill-faults.js";

let target: ClusterTarget;
beforeAll(async () => {
  target = await startTestCluster("drill-test-password");
}, 60_000);
afterAll(async () => target?.stop());

describe("cluster drills (rendered pod scripts, real processes)", () => {
  it("primary: SIGKILL → replica promoted, the killed shard's writes fail meanwhile; no WAIT-confirmed write lost", async () => {
    const r = await measuredDrill(target, "primary", { detected: true });
    expect(r.failedWrites).toBeGreaterThan(0);
    expectNoWaitedWriteLost(r);
  }, 120_000);

  itReplicaDrill(() => target);

  it("zone: every member of a primary's zone down → its shard fails over, zone back later, primaries rebalanced", async () => {
    const r = await measuredDrill(target, "zone", { detected: true });
    expect(r.failedWrites).toBeGreaterThan(0);
  }, 120_000);

  it("all: every member down, back on NEW addresses → healed (no survivor can detect: detection not observable)", async () => {
    const before = target.pods.map((p) => p.host);
    const r = await measuredDrill(target, "all", { detected: false });
    expect(target.pods.map((p) => p.host).every((h, i) => h !== before[i])).toBe(true);
    expect(r.detectionMs).toBeNull();
    expect(r.detectionNote).toMatch(/no survivor/);
    expect(r.writeOutageMs).toBeGreaterThanOrEqual(TIMINGS.restartDelayMs);
  }, 120_000);

  it("switchover: the rendered preStop (CLUSTER FAILOVER) → short outage, no WAIT-confirmed write lost; its log is on the member's data dir, timed", async () => {
    const r = await measuredDrill(target, "switchover", { detected: false });
    expect(r.detectionMs).toBeNull();
    expect(r.writeOutageMs).toBeLessThanOrEqual(10_000);
    expectNoWaitedWriteLost(r);
    // As on a pod's data volume: the old primary's preStop log, each line with its UTC ms time.
    const logs = target.pods
      .map((p) => join(p.dataDir, PRESTOP_LOG_FILE))
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f, "utf8"))
      .join("");
    expect(logs).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z prestop: handing the slots of \S+ to its synced replica/m,
    );
    expect(logs).toMatch(/^\S+ prestop: failover done: \S+ is primary$/m);
  }, 120_000);
});
