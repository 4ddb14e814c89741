import { describe, expect, it } from "vitest";
import { clusterEventLines, clusterEvents } from "../pods/support/cluster-events.js";

// Lines as the kubelet returns them with timestamps=true: a member's server log and its scripts' stderr (the first
// from a kube:local `all` drill's new container, the election lines in Valkey's wording, cluster_legacy.c).
const FAULT = Date.parse("2026-12-03T22:11:00.000Z");
const primary = [
  "2026-12-03T22:10:57.000000000Z 1:M 03 Dec 2026 22:10:57.000 * Cluster state changed: ok",
  "2026-12-03T22:11:03.182577035Z 1:M 03 Dec 2026 22:11:03.182 * Cluster state changed: ok",
  "2026-12-03T22:11:03.200000000Z 1:M 03 Dec 2026 22:11:03.200 * DB loaded from append only file: 0.010 seconds",
  "2026-12-03T22:11:03.326925491Z heal: met valkey-cluster-0.h (2b91) at its new address 10.232.3.236:6379 (was 10.232.3.208)",
  "2026-12-03T22:11:09.500000000Z 1:S 03 Dec 2026 22:11:09.500 # Configuration change detected. Reconfiguring myself as a replica of 3a6a",
  "no timestamp: Cluster state changed: fail",
].join("\n");
const replica = [
  "2026-12-03T22:11:05.412259110Z 1:S 03 Dec 2026 22:11:05.412 * Address updated for node 3a6a (10.232.1.72:6379), now 10.232.1.72:6379",
  "2026-12-03T22:11:08.100000000Z 1:S 03 Dec 2026 22:11:08.100 # Starting a failover election for epoch 7.",
  "2026-12-03T22:11:08.300000000Z 1:M 03 Dec 2026 22:11:08.300 # Failover election won: I'm the new primary.",
  "2026-12-03T22:11:18.000000000Z failback: wait no zone holds a primary majority that a synced replica can fix",
].join("\n");

describe("the cluster's own account of a drill (tests/pods/support/cluster-events.ts)", () => {
  it.each([
    [
      "keeps events from 2 s before the fault on, the server's prefix cut",
      primary,
      [
        [3182, "Cluster state changed: ok"],
        [3326, "heal: met valkey-cluster-0.h (2b91) at its new address 10.232.3.236:6379 (was 10.232.3.208)"],
        [9500, "Configuration change detected. Reconfiguring myself as a replica of 3a6a"],
      ],
    ],
    [
      "elections, address changes and the failback loop's lines",
      replica,
      [
        [5412, "Address updated for node 3a6a (10.232.1.72:6379), now 10.232.1.72:6379"],
        [8100, "Starting a failover election for epoch 7."],
        [8300, "Failover election won: I'm the new primary."],
        [18000, "failback: wait no zone holds a primary majority that a synced replica can fix"],
      ],
    ],
  ])("%s", (_, log, want) => {
    expect(clusterEvents("p", log, FAULT).map((e) => [Math.round(e.t), e.text])).toEqual(want);
  });

  it("merges the pods in time order, one line each, and says how many it left out", () => {
    const logs = new Map([
      ["valkey-cluster-2", primary],
      ["valkey-cluster-5", replica],
    ]);
    expect(clusterEventLines(logs, FAULT)).toEqual([
      "+3.182 s valkey-cluster-2: Cluster state changed: ok",
      "+3.326 s valkey-cluster-2: heal: met valkey-cluster-0.h (2b91) at its new address 10.232.3.236:6379 (was 10.232.3.208)",
      "+5.412 s valkey-cluster-5: Address updated for node 3a6a (10.232.1.72:6379), now 10.232.1.72:6379",
      "+8.100 s valkey-cluster-5: Starting a failover election for epoch 7.",
      "+8.300 s valkey-cluster-5: Failover election won: I'm the new primary.",
      "+9.500 s valkey-cluster-2: Configuration change detected. Reconfiguring myself as a replica of 3a6a",
      "+18.000 s valkey-cluster-5: failback: wait no zone holds a primary majority that a synced replica can fix",
    ]);
    expect(clusterEventLines(logs, FAULT, 2).slice(-1)).toEqual(["(5 more)"]);
  });
});
