/**
 * The partition fault on the real Sentinel topology (members through the rendered start script,
 * 3 Sentinels, HAProxy; down-after 2 s, failover-timeout 6 s): the primary is cut off from the
 * Sentinels and replicas by iptables while clients and HAProxy still reach it, for 15 s so that
 * the failover surely happens meanwhile (an election lost to a split vote is retried only after
 * 2 × failover-timeout); and for 1 s, shorter than detection: nothing fails over, nothing is lost.
 * Counted against ACKNOWLEDGED writes, read back after heal. The bound (bounds.ts partitionWindow): with the deployed
 * fencing
 * (min-replicas-to-write 1, max-lag 3 s) the old primary refuses writes within max-lag + 2 s of
 * the cut, so writes acknowledged in [cut − 4 s, cut + 5 s] may be lost, never a WAIT-confirmed one.
 */
import { afterEach, describe, expect, it } from "vitest";
import { chainName, partitionCapability, vbenchChains } from "../../harness/drill/partition.js";
import type { ReplicationTarget } from "../../harness/drill/replication-target.js";
import { drillOn } from "../../harness/drill/run-drill.js";
import { connects } from "../support/tcp-probe.js";
import {
  expectFencedByBoundEnd,
  expectNoWaitedWriteLost,
  log,
  startTestReplication,
  testOptions,
} from "./drill-faults.js";
import { rootSkipReason, titled } from "../support/root.js";

const NOT_ROOT = rootSkipReason("iptables rules on loopback");

const PASSWORD = "partition-replication-password";
let target: ReplicationTarget | undefined;
afterEach(async () => {
  await target?.stop();
  target = undefined;
});

describe.skipIf(NOT_ROOT !== "")(
  titled("partition drill, replication mode (real processes, iptables)", NOT_ROOT),
  () => {
    it("primary cut off from Sentinels and replicas, not from clients or HAProxy: failover, heal, back as a replica; acked loss within the fenced bound; no rule left", async () => {
      const cap = partitionCapability();
      if (!cap.ok) throw new Error(`this test needs root and a working iptables: ${cap.reason}`);
      target = await startTestReplication(PASSWORD, 2, { partitionMs: 15_000 });
      const t = target;
      const primary = t.t.member(await t.t.primaryFromSentinels());
      const replica = t.t.members.find((m) => m !== primary)!;
      const sentinel = t.t.sentinels[0]!;
      const proxy = t.t.proxy!.write.host;
      const during: Record<string, unknown> = {};
      const r = await drillOn(t, {
        ...testOptions("replication", "partition"),
        partitionMs: 15_000,
        rate: 100,
        afterFault: async () => {
          during.chains = vbenchChains(cap.iptables);
          during.fromReplica = await connects(replica.host, primary.host, primary.port);
          during.fromSentinel = await connects(sentinel.host, primary.host, primary.port);
          during.fromClient = await connects("127.0.0.1", primary.host, primary.port);
          during.fromProxy = await connects(proxy, primary.host, primary.port);
        },
      });
      log(r);
      const why = JSON.stringify({ ...r, timeline: undefined, after: undefined });
      expect(during).toEqual({
        chains: expect.arrayContaining([chainName()]) as unknown,
        fromReplica: false,
        fromSentinel: false,
        fromClient: true,
        fromProxy: true,
      });
      expect(vbenchChains(cap.iptables)).not.toContain(chainName());
      expect(r.healed, why).toBe(true);
      expect(await t.t.role(primary)).toBe("slave");
      expect(r.faultDescription).toMatch(/cut off from 2 replica\(s\) and 3 Sentinels for 15000 ms/);
      expect(r.timings.partitionMs).toBe(15_000);
      expect(r.detectionMs, why).not.toBeNull();
      expectNoWaitedWriteLost(r);
      expect(r.unknownWrites, why).toBe(0);
      expect(r.ackedLossBound?.reason, why).toMatch(/^fenced: NOREPLICAS within min-replicas-max-lag 3 s \+ 2 s/);
      expect(r.lostAckedOutsideBound, why).toBe(0);
      expect(r.lostAckedWrites, why).toBeLessThanOrEqual(r.ackedLossBound!.writes);
      expect(r.ok, why).toBe(true);
      // Measured, not defaulted: the old primary fenced itself within the bound's window, came back
      // as a replica after the heal, and the write endpoint's split was counted (whatever it was).
      expectFencedByBoundEnd(r, why);
      expect(r.oldPrimaryDemotedMs!, why).toBeGreaterThanOrEqual(15_000);
      expect(r.connectionsToOldPrimaryAfterFailover, why).toEqual(expect.any(Number));
    }, 180_000);

    it("a partition shorter than detection (1 s): nothing fails over, nothing acknowledged is lost, the primary stays primary", async () => {
      const cap = partitionCapability();
      if (!cap.ok) throw new Error(`this test needs root and a working iptables: ${cap.reason}`);
      target = await startTestReplication(PASSWORD, 2, { partitionMs: 1000 });
      const primary = target.t.member(await target.t.primaryFromSentinels());
      const r = await drillOn(target, { ...testOptions("replication", "partition"), partitionMs: 1000 });
      expect(r.faultDescription).toMatch(/for 1000 ms/);
      log(r);
      const why = JSON.stringify({ ...r, timeline: undefined, after: undefined });
      expect(vbenchChains(cap.iptables)).not.toContain(chainName());
      expect(r.healed, why).toBe(true);
      expect(await target.t.primaryFromSentinels()).toBe(primary.address);
      expect(r.connectionsToOldPrimaryAfterFailover, why).toBeNull();
      expect(r.oldPrimaryDemotedMs, why).toBeNull();
      expect(r.lostAckedWrites, why).toBe(0);
      expect(r.ok, why).toBe(true);
    }, 120_000);
  },
);
