/**
 * `lost-volume` on real processes, both modes: a member is SIGKILLed, its data dir deleted, and it
 * is started again empty with the same rendered start script (cluster: start.sh + heal.sh +
 * rejoin.sh + failback.sh; replication: the Sentinel-aware start decision).
 * Passes only when the topology heals by itself (verifier ok, zones included) within
 * RECOVERY_BOUND_MS, no WAIT-confirmed write is lost, and acknowledged loss stays within the stated
 * bound: a lost replica volume loses nothing; a lost primary volume loses at most the writes it
 * acknowledged that no replica had confirmed (acked minus WAIT-confirmed, counted per drill).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../benchmarks/drill/cluster-target.js";
import type { DrillResult } from "../../benchmarks/drill/run-drill.js";
import type { ReplicationTarget } from "../../benchmarks/drill/replication-target.js";
import { expectNoWaitedWriteLost, measuredDrill, startTestCluster, startTestReplication } from "./drill-faults.js";

function expectPrimaryLossBound(r: DrillResult): void {
  expectNoWaitedWriteLost(r);
  expect(r.lostAckedWrites, "acknowledged writes lost beyond the unconfirmed ones").toBeLessThanOrEqual(r.ackedWrites - r.waitedWrites);
}

describe("lost-volume, cluster mode (rendered pod scripts, real processes)", () => {
  let target: ClusterTarget;
  beforeAll(async () => {
    target = await startTestCluster("lost-volume-password", 200);
  }, 60_000);
  afterAll(async () => target?.stop());

  it("a replica restarted with an empty data dir is forgotten by the others and rejoins as the replica of the shard lacking one", async () => {
    target.lostVolumeOf = "replica";
    const r = await measuredDrill(target, "lost-volume", { detected: true });
    expect(r.lostAckedWrites).toBe(0);
  }, 150_000);

  it("a primary restarted with an empty data dir never serves its old slots empty: its replica takes over, it rejoins as that replica", async () => {
    target.lostVolumeOf = "primary";
    const r = await measuredDrill(target, "lost-volume", { detected: true });
    expectPrimaryLossBound(r);
  }, 150_000);
});

describe("lost-volume, replication mode (Sentinel-aware start script, real processes)", () => {
  let target: ReplicationTarget;
  beforeAll(async () => {
    target = await startTestReplication("lost-volume-password");
  }, 60_000);
  afterAll(async () => target?.stop());

  it("the primary restarted with an empty data dir comes back as a replica of the promoted one", async () => {
    const r = await measuredDrill(target, "lost-volume", { detected: true });
    expectPrimaryLossBound(r);
  }, 150_000);
});
