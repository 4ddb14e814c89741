/**
 * Destructive cluster cases on their own small cluster (cluster-node-timeout 1000 ms so
 * failures are flagged fast): a killed replica, then forgotten, then its primary frozen.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { DirectConnector, openClient } from "../../core/topology/connector.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import { failureCodes, runVbench } from "../support/verify-helpers.js";

describe("verify: failed nodes in a real cluster", () => {
  const fleet = new LocalFleet();
  let cluster: LocalCluster;
  // Short timeouts: a frozen node accepts TCP but never answers.
  const connector = new DirectConnector({ connectTimeoutMs: 500, commandTimeoutMs: 500 });
  const verify = (): Promise<TopologyReport> =>
    verifyTopology({ mode: "cluster", seeds: [cluster.seed], connector, zones: new StaticZoneSource(cluster.zoneMap) });

  beforeAll(async () => {
    cluster = await startLocalCluster(fleet, {
      primaries: 3,
      replicasPerPrimary: 1,
      zones: ["a", "b", "c"],
      clusterNodeTimeoutMs: 1000,
    });
  });
  afterAll(() => fleet.stopAll());

  it("killed replica: NODE_FAILED for it and PRIMARY_WITHOUT_REPLICA for its primary; after CLUSTER FORGET only the latter", async () => {
    const primary = cluster.primaries[1]!;
    const replica = cluster.replicasOf.get(primary.address)![0]!;
    replica.signal("SIGKILL");
    await pollUntil(
      async () =>
        (await verify()).failures.some((f) => f.code === "NODE_FAILED" && /flagged fail by/.test(f.message))
          ? true
          : "not flagged fail yet",
      {
        timeoutMs: 15_000,
        what: `${replica.address} to be flagged fail`,
      },
    );
    const r = await verify();
    expect(failureCodes(r)).toEqual(["NODE_FAILED", "PRIMARY_WITHOUT_REPLICA"]);
    expect(r.failures.find((f) => f.code === "NODE_FAILED")?.node).toBe(replica.address);
    expect(r.failures.find((f) => f.code === "PRIMARY_WITHOUT_REPLICA")?.node).toBe(primary.address);
    const cli = await runVbench(["verify", "--mode", "cluster", "--seed", cluster.seed.address, "--json"]);
    expect(cli.code).toBe(1);
    expect(failureCodes(JSON.parse(cli.stdout) as TopologyReport)).toEqual(["NODE_FAILED", "PRIMARY_WITHOUT_REPLICA"]);

    const alive = cluster.nodes.filter((n) => n !== replica);
    await Promise.all(
      alive.map(async (n) => {
        const c = await openClient(n.host, n.port, n.address, {});
        await c.call("CLUSTER", "FORGET", cluster.nodeIds[replica.address]!);
        c.disconnect();
      }),
    );
    const forgotten = await verify();
    expect(forgotten.failures.map((f) => [f.code, f.node])).toEqual([["PRIMARY_WITHOUT_REPLICA", primary.address]]);
    expect(forgotten.nodeCount).toBe(5);
  });

  it("frozen primary with no replica to fail over to: NODE_FAILED + SLOTS_NOT_OK + CLUSTER_STATE_NOT_OK", async () => {
    const primary = cluster.primaries[1]!;
    primary.signal("SIGSTOP");
    try {
      await pollUntil(
        async () => (failureCodes(await verify()).includes("CLUSTER_STATE_NOT_OK") ? true : "cluster_state still ok"),
        {
          timeoutMs: 15_000,
          what: `the cluster to fail on ${primary.address}'s slots`,
        },
      );
      const r = await verify();
      expect(failureCodes(r)).toEqual(expect.arrayContaining(["CLUSTER_STATE_NOT_OK", "NODE_FAILED", "SLOTS_NOT_OK"]));
      const failed = r.failures.find((f) => f.code === "NODE_FAILED");
      expect(failed?.node).toBe(primary.address);
      expect(failed?.message).toMatch(/flagged fail by .*not reachable from the verifier/);
      expect(
        r.failures.some(
          (f) => f.code === "SLOTS_NOT_OK" && f.node === primary.address && f.message.includes("5461-10921"),
        ),
      ).toBe(true);
    } finally {
      primary.signal("SIGCONT");
    }
  });
});
