/**
 * `lost-volume` on real processes, both modes: a member is SIGKILLed, its data dir deleted, and it
 * is started again empty with the same rendered start script (cluster: start.sh + heal.sh +
 * rejoin.sh + failback.sh; replication: the Sentinel-aware start decision).
 * Passes only when the topology heals by itself (verifier ok, zones included) within
 * RECOVERY_BOUND_MS, no WAIT-confirmed write is lost, and acknowledged loss stays within the stated
 * bound: a lost replica volume loses nothing; a lost primary volume loses at most the writes it
 * acknowledged that no replica had confirmed (acked minus WAIT-confirmed, counted per drill).
 * Cluster mode also checks where the wiped member went, under its new node id: a wiped replica is
 * a working replica of the primary owning its old slots (the shard that lacked one); a wiped
 * primary is back in its shard (its replica, or its primary again after the zone failback) and
 * that shard has a working replica.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseInfo } from "../../core/topology/info.js";
import { ClusterTarget } from "../../harness/drill/cluster-target.js";
import type { DrillResult } from "../../core/drill/drill-result.js";
import type { ReplicationTarget } from "../../harness/drill/replication-target.js";
import {
  expectNoWaitedWriteLost,
  measuredDrill,
  startTestCluster,
  startTestReplication,
  TIMINGS,
  ZONES,
} from "./drill-faults.js";

/**
 * The member the drill will hit (as ClusterTarget.inject picks it: the first pod in that role) and its shard's slots.
 */
async function victimAndShard(
  target: ClusterTarget,
  role: "primary" | "replica",
): Promise<{ pod: ClusterTarget["pods"][number]; slots: string[] }> {
  const before = await target.verify();
  const primaryIds = new Set(before.shards.map((s) => s.primary.nodeId));
  const pod = target.pods.find((p) => primaryIds.has(p.nodeId) === (role === "primary"));
  const shard = before.shards.find(
    (s) => s.primary.nodeId === pod?.nodeId || s.replicas.some((x) => x.nodeId === pod?.nodeId),
  );
  if (pod === undefined || shard === undefined)
    throw new Error(`no ${role} with a shard in ${JSON.stringify(before.shards)}`);
  return { pod, slots: shard.primary.slotRanges };
}

/**
 * After the drill: the wiped member, under its new node id, is in its old shard (the primary that
 * owns its old slots, or that primary's replica), and that shard has a working replica. Returns
 * the role it holds there.
 */
async function expectBackInItsShard(
  target: ClusterTarget,
  v: { pod: ClusterTarget["pods"][number]; slots: string[] },
  oldId: string,
): Promise<"primary" | "replica"> {
  expect(v.pod.nodeId, "the restarted member has a new node id").not.toBe(oldId);
  const after = await target.verify();
  const shard = after.shards.find((s) => s.primary.slotRanges.join() === v.slots.join());
  const why = JSON.stringify(
    after.shards.map((s) => [s.primary.nodeId, s.primary.slotRanges, s.replicas.map((r) => [r.nodeId, r.linkUp])]),
  );
  expect(shard, `a shard owning ${v.slots.join()}: ${why}`).toBeDefined();
  const asReplica = shard!.replicas.find((x) => x.nodeId === v.pod.nodeId);
  expect(
    shard!.primary.nodeId === v.pod.nodeId || asReplica !== undefined,
    `${v.pod.name} (${v.pod.nodeId}) in that shard: ${why}`,
  ).toBe(true);
  expect(
    shard!.replicas.some((x) => x.linkUp),
    `the shard has a working replica: ${why}`,
  ).toBe(true);
  return asReplica === undefined ? "primary" : "replica";
}

function expectPrimaryLossBound(r: DrillResult): void {
  expectNoWaitedWriteLost(r);
  expect(r.lostAckedWrites, "acknowledged writes lost beyond the unconfirmed ones").toBeLessThanOrEqual(
    r.ackedWrites - r.waitedWrites,
  );
}

describe("lost-volume, cluster mode (rendered pod scripts, real processes)", () => {
  let target: ClusterTarget;
  beforeAll(async () => {
    target = await startTestCluster("lost-volume-password", 200);
  }, 60_000);
  afterAll(async () => target?.stop());

  it("a replica restarted with an empty data dir is forgotten by the others and rejoins as the replica of the shard lacking one", async () => {
    target.lostVolumeOf = "replica";
    const victim = await victimAndShard(target, "replica");
    const oldId = victim.pod.nodeId;
    const r = await measuredDrill(target, "lost-volume", { detected: true });
    expect(r.lostAckedWrites).toBe(0);
    expect(await expectBackInItsShard(target, victim, oldId)).toBe("replica");
  }, 150_000);

  it("a primary restarted with an empty data dir never serves its old slots empty: its replica takes over, it rejoins its shard (as its replica; the zone failback may make it primary again) and the shard has a working replica", async () => {
    target.lostVolumeOf = "primary";
    const victim = await victimAndShard(target, "primary");
    const oldId = victim.pod.nodeId;
    const r = await measuredDrill(target, "lost-volume", { detected: true });
    expectPrimaryLossBound(r);
    const role = await expectBackInItsShard(target, victim, oldId);
    console.log(`[lost-volume] the wiped primary is back in its shard as its ${role}`);
  }, 150_000);
});

describe("lost-volume, cluster mode, pods without a zone label (Kubernetes < 1.35: EKS 1.33/1.34, kube:local)", () => {
  let target: ClusterTarget;
  beforeAll(async () => {
    // The zone comes only from the bootstrap's CONFIG SET, kept on the data volume: the lost volume loses it.
    target = await ClusterTarget.start({
      ...TIMINGS,
      primaries: 3,
      replicasPerPrimary: 1,
      zones: ZONES,
      password: "lost-volume-password",
      hostBase: 230,
      zoneLabel: false,
    });
  }, 60_000);
  afterAll(async () => target?.stop());

  it("a wiped primary takes its old node id's zone back from a peer, so the zone failback can act: healed with one primary per zone", async () => {
    target.lostVolumeOf = "primary";
    const victim = await victimAndShard(target, "primary");
    const oldId = victim.pod.nodeId;
    const r = await measuredDrill(target, "lost-volume", { detected: true });
    expectPrimaryLossBound(r);
    await expectBackInItsShard(target, victim, oldId);
    const c = new Redis({ host: victim.pod.host, port: victim.pod.port, password: "lost-volume-password" });
    try {
      expect(await c.call("CONFIG", "GET", "availability-zone")).toEqual(["availability-zone", victim.pod.zone]);
    } finally {
      c.disconnect();
    }
    const after = await target.verify();
    expect(Object.values(after.primariesPerZone ?? {}), JSON.stringify(after.primariesPerZone)).toEqual([1, 1, 1]);
  }, 150_000);
});

describe("lost-volume, replication mode (Sentinel-aware start script, real processes)", () => {
  let target: ReplicationTarget;
  beforeAll(async () => {
    target = await startTestReplication("lost-volume-password");
  }, 60_000);
  afterAll(async () => target?.stop());

  it("the primary restarted with an empty data dir comes back as a replica of the promoted one", async () => {
    const wiped = target.t.member(await target.t.primaryFromSentinels());
    const r = await measuredDrill(target, "lost-volume", { detected: true });
    expectPrimaryLossBound(r);
    const promoted = await target.t.primaryFromSentinels();
    expect(promoted, "the Sentinels name another member primary").not.toBe(wiped.address);
    // The wiped member's own view: a replica of the promoted one, its link up.
    const c = new Redis({
      host: wiped.host,
      port: wiped.port,
      password: "lost-volume-password",
      maxRetriesPerRequest: 1,
    });
    try {
      const info = parseInfo(await c.info("replication"));
      expect([
        info.get("role"),
        `${info.get("master_host")}:${info.get("master_port")}`,
        info.get("master_link_status"),
      ]).toEqual(["slave", promoted, "up"]);
    } finally {
      c.disconnect();
    }
  }, 150_000);
});
