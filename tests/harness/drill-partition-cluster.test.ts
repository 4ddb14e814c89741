/**
 * The partition fault on a real 3 × 1 cluster (rendered start/heal/failback scripts,
 * cluster-node-timeout 2 s): one primary is cut off from every other member's client and bus
 * ports by iptables for 5 s while clients still reach it. The cluster conf sets no min-replicas
 * lines, so the bound is Valkey's minority rule (bounds.ts partitionWindow): the isolated primary
 * answers CLUSTERDOWN within 1.5 × node-timeout + 200 ms of the cut; writes it acknowledged in
 * [cut − 1 s, cut + 3.2 s] may be lost, never a WAIT-confirmed one.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../harness/drill/cluster-target.js";
import { chainName, partitionCapability, vbenchChains } from "../../harness/drill/partition.js";
import { drillOn } from "../../harness/drill/run-drill.js";
import { connects } from "../support/tcp-probe.js";
import { expectFencedByBoundEnd, expectNoWaitedWriteLost, log, startTestCluster, testOptions } from "./drill-faults.js";
import { rootSkipReason, titled } from "../support/root.js";

const NOT_ROOT = rootSkipReason("iptables rules on loopback");

const PASSWORD = "partition-cluster-password";
let target: ClusterTarget | undefined;
afterEach(async () => {
  await target?.stop();
  target = undefined;
});

describe.skipIf(NOT_ROOT !== "")(titled("partition drill, cluster mode (real processes, iptables)", NOT_ROOT), () => {
  it("primary cut off from the other members' client and bus ports, not from clients: failover, heal, back as a replica; acked loss within the minority bound; no rule left", async () => {
    const cap = partitionCapability();
    if (!cap.ok) throw new Error(`this test needs root and a working iptables: ${cap.reason}`);
    target = await startTestCluster(PASSWORD, 186);
    const t = target;
    const during: Record<string, unknown> = {};
    const isolatedHost = (): string | undefined => t.partitioned?.partition.isolated?.host;
    const r = await drillOn(t, {
      ...testOptions("cluster", "partition"),
      rate: 100,
      afterFault: async () => {
        const isolated = t.pods.find((p) => p.host === isolatedHost())!;
        const other = t.pods.find((p) => p !== isolated)!;
        during.chains = vbenchChains(cap.iptables);
        during.busFromPeer = await connects(other.host, isolated.host, isolated.busPort);
        during.clientFromPeer = await connects(other.host, isolated.host, isolated.port);
        during.fromClient = await connects("127.0.0.1", isolated.host, isolated.port);
      },
    });
    log(r);
    const why = JSON.stringify({ ...r, timeline: undefined, after: undefined });
    expect(during).toEqual({
      chains: expect.arrayContaining([chainName()]) as unknown,
      busFromPeer: false,
      clientFromPeer: false,
      fromClient: true,
    });
    expect(vbenchChains(cap.iptables)).not.toContain(chainName());
    expect(r.healed, why).toBe(true);
    expect(r.faultDescription).toMatch(/cut off from the 5 other members for 5000 ms/);
    expect(r.detectionMs, why).not.toBeNull();
    expectNoWaitedWriteLost(r);
    expect(r.unknownWrites, why).toBe(0);
    expect(r.ackedLossBound?.reason, why).toMatch(
      /^cluster minority: CLUSTERDOWN within 1\.5 × cluster-node-timeout 2000 ms \+ 200 ms \(no min-replicas fencing/,
    );
    expect(r.lostAckedOutsideBound, why).toBe(0);
    expect(r.lostAckedWrites, why).toBeLessThanOrEqual(r.ackedLossBound!.writes);
    expect(r.ok, why).toBe(true);
    expectFencedByBoundEnd(r, why);
    // Back as a replica after the heal (the replica's election takes node-timeout + < 1.5 s, well
    // inside the 5 s; the AZ failback may make it primary again later: its zone lost its primary,
    // and the verifier waits for one primary per zone).
    expect(r.oldPrimaryDemotedMs, why).not.toBeNull();
    expect(r.oldPrimaryDemotedMs!, why).toBeGreaterThanOrEqual(5000);
    expect(r).not.toHaveProperty("connectionsToOldPrimaryAfterFailover");
  }, 180_000);
});
