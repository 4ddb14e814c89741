/** Pure verifier analysis from captured replies: parser edge cases and each failure code. */
import { describe, expect, it } from "vitest";
import { analyseCluster } from "../../core/verify/cluster-analysis.js";
import {
  digestClusterNodes,
  parseClusterNodeLine,
  parseClusterNodes,
  parseNodeAddress,
} from "../../core/topology/cluster-nodes-parser.js";
import { formatTopologyReport } from "../../core/verify/format-report.js";
import { analyseReplication, listedReplicas } from "../../core/verify/replication-analysis.js";
import {
  primaryReplicationInfo,
  replicaReplicationInfo,
  synthesiseCluster,
  synthesiseReplication,
  syntheticClusterInfo,
} from "../../core/verify/synthetic.js";

const zones = ["a", "b", "c"];
const codes = (r: { failures: { code: string }[] }): string[] => [...new Set(r.failures.map((f) => f.code))].sort();

const SAMPLE = `07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,replica-4 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922 [10923->-292f8b365bb7edb5e285caf0b7e6ddc7265a2f4f]
292f8b365bb7edb5e285caf0b7e6ddc7265a2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383 [10922-<-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]
6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005 slave,fail? 67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected
824fe116063bc5fcf9f4ffd895bc17aee7731ac3 127.0.0.1:30006@31006 slave,fail,nofailover 292f8b365bb7edb5e285caf0b7e6ddc7265a2f4f 0 1426238317741 6 disconnected
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460
this is not a cluster nodes line
abcdef :0@0 master,noaddr - 0 0 0 disconnected
`;

describe("CLUSTER NODES parser", () => {
  it("parses flags, roles, hostnames, slots, and skips migrating/importing entries", () => {
    const { nodes, invalid } = parseClusterNodes(SAMPLE);
    expect(nodes).toHaveLength(6);
    expect(invalid).toEqual(["this is not a cluster nodes line", "abcdef :0@0 master,noaddr - 0 0 0 disconnected"]);
    const [r4, p2, p3, r5, r6, self] = nodes;
    expect(r4).toMatchObject({
      role: "replica",
      hostname: "replica-4",
      endpoint: { host: "127.0.0.1", port: 30004 },
      busPort: 31004,
    });
    expect(p2?.slots).toEqual([{ start: 5461, end: 10922 }]);
    expect(p3?.slots).toEqual([{ start: 10923, end: 16383 }]);
    expect(r5).toMatchObject({ pfail: true, failed: false, primaryId: p2?.id });
    expect(r6).toMatchObject({ failed: true, pfail: false, linkState: "disconnected" });
    expect(r6?.flags).toContain("nofailover");
    expect(self).toMatchObject({ myself: true, role: "primary", slots: [{ start: 0, end: 5460 }] });
  });

  it("reads single slots, IPv6 and address-less nodes", () => {
    const id = "a".repeat(40);
    expect(parseClusterNodeLine(`${id} 127.0.0.1:7000@17000 master - 0 0 1 connected 42 100-101`)?.slots).toEqual([
      { start: 42, end: 42 },
      { start: 100, end: 101 },
    ]);
    expect(parseNodeAddress("::1:7000@17000")?.endpoint).toEqual({ host: "::1", port: 7000 });
    expect(parseNodeAddress(":0@0")?.endpoint).toBeUndefined();
    expect(parseClusterNodeLine(`${id} :7000@17000 myself,master - 0 0 1 connected`)?.endpoint).toBeUndefined();
    expect(parseClusterNodeLine(`${id} 127.0.0.1:7000@17000 master - 0 0 1 connected 99999`)).toBeUndefined();
    expect(parseClusterNodeLine(`${id} 127.0.0.1:7000@17000 master`)).toBeUndefined();
  });

  it("digests a view to its own line and the nodes it flags", () => {
    const d = digestClusterNodes(SAMPLE);
    expect(d.self).toMatch(/^e7d1eecce/);
    expect(d.flagged.map((l) => l.slice(0, 8))).toEqual(["6ec23923", "824fe116"]);
    expect(d.knownNodes).toBe(8);
  });
});

describe("cluster analysis", () => {
  it("passes a healthy 3x1 cluster and formats the seed's table", () => {
    const s = synthesiseCluster(3, 1, zones);
    const r = analyseCluster(s.capture, {
      zones: s.zones,
      expect: { primaries: 3, replicasPerPrimary: 1, replicas: 3 },
    });
    expect(r.failures).toEqual([]);
    expect(r).toMatchObject({
      ok: true,
      mode: "cluster",
      nodeCount: 6,
      clusterState: "ok",
      slotsAssigned: 16384,
      slotsOk: 16384,
      zoneCheck: "checked",
    });
    expect(r.primariesPerZone).toEqual({ a: 1, b: 1, c: 1 });
    expect(r.shards.map((x) => x.primary.slotRanges)).toEqual([["0-5460"], ["5461-10921"], ["10922-16383"]]);
    expect(r.shards.every((x) => x.replicas.length === 1 && x.replicas[0]?.crossAz && x.replicas[0].linkUp)).toBe(true);
    const text = formatTopologyReport(r);
    expect(text).toMatch(/PRIMARY 10\.0\.0\.1:6379 {2}a {2}slots 0-5460 \(5461\) {2}keys 1000/);
    expect(text).toContain("replica 10.0.0.4:6379  b  cross-AZ ✓");
    expect(text).toMatch(/VERIFY: PASS — cluster_state=ok/);
  });

  it("flags fail/fail? seen in any node's view as NODE_FAILED, and failed slot owners as SLOTS_NOT_OK", () => {
    const s = synthesiseCluster(3, 1, zones);
    const primary2 = s.nodes[1]!;
    const view = s.capture.nodes[4]!;
    view.clusterNodes = { ...view.clusterNodes!, flagged: [s.line(primary2, ["fail?"])] };
    const r = analyseCluster(s.capture, { zones: s.zones });
    expect(codes(r)).toEqual(["NODE_FAILED", "SLOTS_NOT_OK"]);
    expect(r.failures.find((f) => f.code === "NODE_FAILED")).toMatchObject({
      node: primary2.address,
      message: expect.stringContaining(`fail? by ${view.address}`) as string,
    });
  });

  it("ignores migrating/importing slot entries for ownership, counts a hole as SLOTS_UNASSIGNED", () => {
    const s = synthesiseCluster(3, 1, zones);
    const text = s.capture.seedClusterNodes!.replace(" 0-5460", " 0-5359 [5360->-" + s.nodes[1]!.id + "]");
    const r = analyseCluster({ ...s.capture, seedClusterNodes: text }, { zones: s.zones });
    expect(codes(r)).toEqual(["SLOTS_UNASSIGNED"]);
    expect(r.failures[0]?.message).toContain("101 of 16384 slots have no primary");
    expect(r.failures[0]?.message).toContain("5360-5460");
  });

  it("reports CLUSTER INFO trouble from any node, once per code, naming the node", () => {
    const s = synthesiseCluster(3, 1, zones);
    const n = s.capture.nodes[2]!;
    n.clusterInfo = syntheticClusterInfo("fail", 16284, 16284);
    const r = analyseCluster(s.capture, { zones: s.zones });
    expect(codes(r)).toEqual(["CLUSTER_STATE_NOT_OK", "SLOTS_UNASSIGNED"]);
    expect(r.failures.every((f) => f.node === n.address)).toBe(true);
  });

  it("PRIMARY_WITHOUT_REPLICA for a primary whose replica's link is down or that has none", () => {
    const s = synthesiseCluster(3, 1, zones);
    const replica = s.nodes[3]!;
    s.capture.nodes[3]!.replicationInfo = replicaReplicationInfo(s.nodes[0]!.address, 1, false);
    const r = analyseCluster(s.capture, { zones: s.zones });
    expect(r.failures).toEqual([
      expect.objectContaining({ code: "PRIMARY_WITHOUT_REPLICA", node: s.nodes[0]!.address }),
    ]);
    expect(r.shards[0]?.replicas[0]).toMatchObject({ address: replica.address, linkUp: false });
    const without = s.capture
      .seedClusterNodes!.split("\n")
      .filter((l) => !l.startsWith(replica.id))
      .join("\n");
    expect(codes(analyseCluster({ ...s.capture, seedClusterNodes: without }, { zones: s.zones }))).toEqual([
      "PRIMARY_WITHOUT_REPLICA",
    ]);
  });

  it("a replica the cluster flags fail is no working replica, even while its INFO still says the link is up", () => {
    // Its bus is cut (or it stopped answering pings) while its replication link stays up: the
    // cluster will not elect it, so its primary has no replica to fail over to.
    const s = synthesiseCluster(3, 1, zones);
    const replica = s.nodes[3]!;
    const view = s.capture.nodes[1]!;
    view.clusterNodes = { ...view.clusterNodes!, flagged: [s.line(replica, ["fail"])] };
    expect(s.capture.nodes[3]!.replicationInfo).toContain("master_link_status:up");
    const r = analyseCluster(s.capture, { zones: s.zones });
    expect(codes(r)).toEqual(["NODE_FAILED", "PRIMARY_WITHOUT_REPLICA"]);
    expect(r.failures.find((f) => f.code === "PRIMARY_WITHOUT_REPLICA")?.node).toBe(s.nodes[0]!.address);
    expect(r.shards[0]?.replicas[0]).toMatchObject({ address: replica.address, linkUp: false });
  });

  it("a primary the seed itself flags fail still owns its slots: its shard is reported, SLOTS_NOT_OK", () => {
    const s = synthesiseCluster(3, 1, zones);
    const p2 = s.nodes[1]!;
    const seedNodes = s.capture.seedClusterNodes!.replace(s.line(p2), s.line(p2, ["fail"]));
    const r = analyseCluster({ ...s.capture, seedClusterNodes: seedNodes }, { zones: s.zones });
    expect(codes(r)).toContain("SLOTS_NOT_OK");
    expect(r.shards.map((x) => x.primary.address)).toContain(p2.address);
  });

  it("an unreachable primary without slots is NODE_FAILED, not SLOTS_NOT_OK (it owns nothing)", () => {
    const s = synthesiseCluster(3, 1, zones);
    const empty = { id: "f".repeat(40), address: "10.0.0.7:6379" };
    const seedNodes = `${s.capture.seedClusterNodes!}${empty.id} 10.0.0.7:6379@16379 master - 0 1700000000000 7 connected\n`;
    const r = analyseCluster(
      {
        ...s.capture,
        seedClusterNodes: seedNodes,
        nodes: [...s.capture.nodes, { address: empty.address, error: "connect ETIMEDOUT" }],
      },
      { zones: new Map([...s.zones, [empty.address, "a"]]) },
    );
    expect(codes(r)).toContain("NODE_FAILED");
    expect(codes(r)).not.toContain("SLOTS_NOT_OK");
  });

  it("the seed's own line without an address is not a failed node (only a peer's is: noaddr)", () => {
    const s = synthesiseCluster(3, 1, zones);
    const seed = s.nodes[0]!;
    const seedNodes = s.capture.seedClusterNodes!.replace(`${seed.id} ${seed.address}@1`, `${seed.id} :6379@1`);
    expect(seedNodes).not.toBe(s.capture.seedClusterNodes);
    expect(codes(analyseCluster({ ...s.capture, seedClusterNodes: seedNodes }, { zones: s.zones }))).not.toContain(
      "NODE_FAILED",
    );
  });

  it("the notes and messages a user reads: none on a healthy cluster; each disagreement named once; 'seen by' only when several saw it", () => {
    const s = synthesiseCluster(3, 1, zones);
    const healthy = analyseCluster(s.capture, { zones: s.zones });
    expect(healthy.notes ?? []).toEqual([]);
    // A node that knows fewer nodes than the seed, and one that calls itself a primary the seed sees as a replica.
    const late = s.capture.nodes[2]!;
    late.clusterNodes = { ...late.clusterNodes!, knownNodes: 5 };
    const confused = s.capture.nodes[3]!;
    confused.clusterNodes = {
      ...confused.clusterNodes!,
      self: confused.clusterNodes!.self!.replace("myself,slave", "myself,master"),
    };
    const stranger = s.capture.nodes[4]!;
    stranger.clusterNodes = {
      ...stranger.clusterNodes!,
      self: stranger.clusterNodes!.self!.replace(/^[0-9a-f]{40}/, "e".repeat(40)),
    };
    expect(analyseCluster(s.capture, { zones: s.zones }).notes).toEqual([
      `${late.address} knows 5 nodes, the seed knows 6`,
      `${confused.address} calls itself primary, the seed sees it as replica`,
      `${stranger.address} (eeeeeeee…) is not in the seed's view`,
    ]);
    // CLUSTER INFO trouble: one node names itself; two add "(seen by 2 of 6 nodes: …)".
    const one = synthesiseCluster(3, 1, zones);
    one.capture.nodes[2]!.clusterInfo = syntheticClusterInfo("fail", 16384, 16384);
    expect(analyseCluster(one.capture, { zones: one.zones }).failures.map((f) => f.message)).toEqual([
      `${one.nodes[2]!.address}: cluster_state:fail`,
    ]);
    one.capture.nodes[4]!.clusterInfo = syntheticClusterInfo("fail", 16384, 16384);
    expect(analyseCluster(one.capture, { zones: one.zones }).failures.map((f) => f.message)).toEqual([
      `${one.nodes[2]!.address}: cluster_state:fail (seen by 2 of 6 nodes: ${one.nodes[2]!.address}, ${one.nodes[4]!.address})`,
    ]);
  });

  it("names why a node failed: 'fail by' or 'fail? by', never both for one flag; a primary without any replica vs without a working one", () => {
    const s = synthesiseCluster(3, 1, zones);
    const replica = s.nodes[3]!;
    const view = s.capture.nodes[1]!;
    view.clusterNodes = { ...view.clusterNodes!, flagged: [s.line(replica, ["fail"])] };
    const failed = analyseCluster(s.capture, { zones: s.zones }).failures;
    expect(failed.find((f) => f.code === "NODE_FAILED")?.message).toContain(`flagged fail by ${view.address}`);
    expect(failed.find((f) => f.code === "NODE_FAILED")?.message).not.toContain("fail?");
    expect(failed.find((f) => f.code === "PRIMARY_WITHOUT_REPLICA")?.message).toContain(
      `has no working replica (${replica.address}: link down or failed)`,
    );
    const none = synthesiseCluster(3, 1, zones);
    const without = none.capture
      .seedClusterNodes!.split("\n")
      .filter((l) => !l.startsWith(none.nodes[3]!.id))
      .join("\n");
    expect(
      analyseCluster({ ...none.capture, seedClusterNodes: without }, { zones: none.zones }).failures.map(
        (f) => f.message,
      ),
    ).toEqual([expect.stringContaining("has no replica")]);
  });

  it("a replica following a primary the seed does not know is noted, not counted in any shard", () => {
    const s = synthesiseCluster(3, 1, zones);
    const replica = s.nodes[3]!;
    const seedNodes = s.capture.seedClusterNodes!.replace(`slave ${s.nodes[0]!.id}`, `slave ${"d".repeat(40)}`);
    expect(seedNodes).not.toBe(s.capture.seedClusterNodes);
    const r = analyseCluster({ ...s.capture, seedClusterNodes: seedNodes }, { zones: s.zones });
    expect(r.notes).toContain(`replica ${replica.address} follows unknown primary dddddddd…`);
    expect(r.shards.flatMap((x) => x.replicas.map((y) => y.address))).not.toContain(replica.address);
  });

  it("a replica in an unknown zone is not called cross-AZ; a replica ahead of the captured primary offset lags 0, not less", () => {
    const s = synthesiseCluster(3, 1, zones);
    const replica = s.nodes[3]!;
    const unknownZone = new Map(s.zones);
    unknownZone.delete(replica.address);
    expect(analyseCluster(s.capture, { zones: unknownZone }).shards[0]?.replicas[0]).toMatchObject({
      address: replica.address,
      crossAz: false,
    });
    s.capture.nodes[3]!.replicationInfo = replicaReplicationInfo(s.nodes[0]!.address, 999_999_999);
    expect(analyseCluster(s.capture, { zones: s.zones }).shards[0]?.replicas[0]?.lagBytes).toBe(0);
  });

  it("zone checks: same-zone replica, primary majority, unknown zone, and skipped without zones", () => {
    const s = synthesiseCluster(3, 1, zones);
    const [p1, p2, , r1] = s.nodes;
    const sameZone = new Map(s.zones).set(r1!.address, "a");
    expect(analyseCluster(s.capture, { zones: sameZone }).failures).toEqual([
      expect.objectContaining({ code: "NO_CROSS_AZ_REPLICA", node: p1!.address }),
    ]);
    const majority = new Map(s.zones).set(p2!.address, "a");
    expect(codes(analyseCluster(s.capture, { zones: majority }))).toContain("AZ_PRIMARY_MAJORITY");
    const unknown = new Map(s.zones);
    unknown.delete(r1!.address);
    expect(analyseCluster(s.capture, { zones: unknown }).failures).toEqual([
      expect.objectContaining({ code: "ZONE_UNKNOWN", node: r1!.address }),
    ]);
    const skipped = analyseCluster(s.capture, { zones: undefined });
    expect(skipped.ok).toBe(true);
    expect(skipped.zoneCheck).toBe("skipped");
    expect(skipped.notes?.join()).toContain("zone checks skipped");
  });

  it("AZ_PRIMARY_MAJORITY only when ≥ 3 zones are in use", () => {
    const s = synthesiseCluster(3, 1, ["a", "b"]);
    const r = analyseCluster(s.capture, { zones: s.zones });
    expect(r.ok).toBe(true);
    expect(r.notes?.join()).toContain("primary-majority check skipped");
  });

  it("SHAPE_MISMATCH against expectations", () => {
    const s = synthesiseCluster(3, 1, zones);
    const r = analyseCluster(s.capture, { zones: s.zones, expect: { primaries: 4, replicasPerPrimary: 2 } });
    expect(codes(r)).toEqual(["SHAPE_MISMATCH"]);
    expect(r.failures).toHaveLength(4);
    // The total alone: 3 x 1 holds 3 replicas, not 4 (and 3 passes).
    const total = analyseCluster(s.capture, { zones: s.zones, expect: { replicas: 4 } });
    expect(total.failures.map((f) => [f.code, f.message])).toEqual([
      ["SHAPE_MISMATCH", "expected 4 replicas in total, found 3"],
    ]);
    expect(analyseCluster(s.capture, { zones: s.zones, expect: { replicas: 3 } }).ok).toBe(true);
  });

  it("a seed without cluster support fails CLUSTER_MODE_DISABLED; another seed error CLUSTER_STATE_NOT_OK with the reason", () => {
    const r = analyseCluster(
      { seed: "h:1", seedAddress: "h:1", seedError: "ERR This instance has cluster support disabled", nodes: [] },
      { zones: undefined },
    );
    expect(r.failures).toEqual([
      expect.objectContaining({
        code: "CLUSTER_MODE_DISABLED",
        node: "h:1",
        message: expect.stringContaining("has cluster mode off (cluster-enabled no)") as string,
      }),
    ]);
    const other = analyseCluster(
      { seed: "h:1", seedAddress: "h:1", seedError: "Command timed out", nodes: [] },
      { zones: undefined },
    );
    expect(other.failures).toEqual([
      expect.objectContaining({
        code: "CLUSTER_STATE_NOT_OK",
        node: "h:1",
        message: expect.stringContaining("Command timed out") as string,
      }),
    ]);
    // An error after a CLUSTER NODES reply still fails the seed: a half answer is no view.
    const s = synthesiseCluster(3, 1, zones);
    const half = analyseCluster({ ...s.capture, seedError: "Connection reset" }, { zones: s.zones });
    expect([codes(half), half.shards]).toEqual([["CLUSTER_STATE_NOT_OK"], []]);
  });

  // The 50 ms bar is a performance claim: `npm run bench:verify` measures it and prints the ratio.
  // Here only a generous ceiling (a 2-core CI machine under load), which still catches a
  // quadratic analysis (seconds at this size).
  it("analyses 1000 primaries + 1000 replicas, median of 7 runs under a generous 1 s ceiling", () => {
    const s = synthesiseCluster(1000, 1, zones);
    const times: number[] = [];
    for (let i = 0; i < 7; i++) {
      const t = performance.now();
      const r = analyseCluster(s.capture, { zones: s.zones });
      times.push(performance.now() - t);
      expect(r.ok).toBe(true);
      expect(r.shards).toHaveLength(1000);
    }
    times.sort((a, b) => a - b);
    expect(times[3]).toBeLessThan(1000);
  });
});

describe("replication analysis", () => {
  it("passes a healthy primary with 3 replicas", () => {
    const s = synthesiseReplication(3, zones);
    const r = analyseReplication(s.capture, { zones: s.zones, expect: { replicas: 3 } });
    expect(r).toMatchObject({ ok: true, mode: "replication", nodeCount: 4, primariesPerZone: { a: 1 } });
    expect(r.shards[0]?.replicas.map((x) => [x.address, x.crossAz, x.linkUp, x.lagBytes])).toEqual([
      [s.replicas[0], true, true, 0],
      [s.replicas[1], true, true, 0],
      [s.replicas[2], false, true, 0],
    ]);
  });

  it("NOT_PRIMARY names the primary the seed follows", () => {
    const r = analyseReplication(
      { seed: "10.0.1.1:6379", seedReplicationInfo: replicaReplicationInfo("10.0.0.1:6379", 1), replicas: [] },
      { zones: undefined },
    );
    expect(r.failures).toEqual([
      expect.objectContaining({
        code: "NOT_PRIMARY",
        node: "10.0.1.1:6379",
        message: expect.stringContaining("10.0.0.1:6379") as string,
      }),
    ]);
  });

  it("link down, lag, count, cross-AZ and unknown zone", () => {
    const s = synthesiseReplication(3, zones);
    const [r1, r2, r3] = s.capture.replicas;
    r1!.replicationInfo = replicaReplicationInfo("10.0.0.1:6379", 5000, false);
    r2!.replicationInfo = replicaReplicationInfo("10.0.0.1:6379", 100);
    r3!.error = "timeout";
    const r = analyseReplication(s.capture, { zones: s.zones, expect: { replicas: 2 }, replicaLagBytes: 1000 });
    expect(r.failures.map((f) => [f.code, f.node])).toEqual([
      ["REPLICA_LINK_DOWN", r1!.address],
      ["REPLICA_LAG", r2!.address],
      ["REPLICA_LINK_DOWN", r3!.address],
      ["REPLICA_COUNT", s.capture.seed],
    ]);
    const all = new Map([...s.zones].map(([k]) => [k, "a"]));
    all.delete(s.replicas[1]!);
    expect(codes(analyseReplication(synthesiseReplication(3, zones).capture, { zones: all }))).toEqual([
      "ZONE_UNKNOWN",
    ]);
    all.set(s.replicas[1]!, "a");
    expect(codes(analyseReplication(synthesiseReplication(3, zones).capture, { zones: all }))).toEqual([
      "NO_CROSS_AZ_REPLICA",
    ]);
  });

  it("seeds the primary does not list: each named with why, and counted as replicas with their link down unless they are primaries", () => {
    const s = synthesiseReplication(1, zones);
    const [gone, other, elsewhere] = ["10.0.2.1:6379", "10.0.2.2:6379", "10.0.2.3:6379"];
    s.capture.replicas.push(
      { address: gone, error: "connect ECONNREFUSED" },
      { address: other, replicationInfo: primaryReplicationInfo(10, []) },
      { address: elsewhere, replicationInfo: replicaReplicationInfo("10.0.9.9:6379", 10, false) },
    );
    // A seed the primary does list is no finding.
    s.capture.extraSeeds = [gone, other, elsewhere, s.replicas[0]!];
    const inZones = new Map([...s.zones, [gone, "b"], [other, "c"], [elsewhere, "a"]]);
    const r = analyseReplication(s.capture, { zones: inZones });
    expect(
      r.failures
        .filter((f) => f.code === "REPLICA_LINK_DOWN")
        .map((f) => [f.node, f.message.split(": ").slice(1).join(": ")]),
    ).toEqual([
      [gone, "not reachable from the verifier (connect ECONNREFUSED)"],
      [other, "is a primary itself, not a replica"],
      [elsewhere, "replicates from 10.0.9.9:6379 (master_link_status:down)"],
    ]);
    const reported = r.shards[0]!.replicas.filter((x) => [gone, other, elsewhere].includes(x.address));
    expect(r.shards[0]!.replicas.find((x) => x.address === s.replicas[0])).toMatchObject({ linkUp: true });
    expect(reported).toEqual([
      { address: gone, zone: "b", crossAz: true, linkUp: false },
      { address: elsewhere, zone: "a", crossAz: false, linkUp: false },
    ]);
  });

  it("NO_REPLICAS only when no replica count was expected; a note when more than one primary was expected", () => {
    const s = synthesiseReplication(0, zones);
    expect(codes(analyseReplication(s.capture, { zones: s.zones }))).toContain("NO_REPLICAS");
    // Zero replicas asked for: no NO_REPLICAS, no REPLICA_COUNT (only the zone rule still speaks).
    expect(codes(analyseReplication(s.capture, { zones: s.zones, expect: { replicas: 0 } }))).toEqual([
      "NO_CROSS_AZ_REPLICA",
    ]);
    const one = synthesiseReplication(1, zones);
    expect(analyseReplication(one.capture, { zones: one.zones, expect: { primaries: 1 } }).notes ?? []).toEqual([]);
    expect(analyseReplication(one.capture, { zones: one.zones, expect: { primaries: 3 } }).notes).toEqual([
      "expected 3 primaries, but a replication set has exactly one",
    ]);
  });

  it("no lag figure when an offset is unknown (never NaN)", () => {
    const s = synthesiseReplication(1, zones);
    s.capture.seedReplicationInfo = s.capture.seedReplicationInfo.replace(/,offset=\d+/, "");
    s.capture.replicas[0]!.replicationInfo = s.capture.replicas[0]!.replicationInfo!.replace(
      /\r\n(slave|master)_repl_offset:\d+/g,
      "",
    );
    const r = analyseReplication(s.capture, { zones: s.zones });
    expect(r.shards[0]!.replicas[0]!.lagBytes).toBeUndefined();
  });

  it("a slave line without a host or a whole port is skipped, not reported", () => {
    const info = new Map([
      ["slave0", "ip=10.0.1.1,port=6379,state=online,offset=5,lag=0"],
      ["slave1", "port=6380,state=online"],
      ["slave2", "ip=10.0.1.3,port=x,state=online"],
    ]);
    expect(listedReplicas(info).map((l) => l.address)).toEqual(["10.0.1.1:6379"]);
  });

  it("REPLICA_LAG only past the limit: a replica exactly at it passes, one byte more fails", () => {
    const s = synthesiseReplication(1, zones);
    s.capture.replicas[0]!.replicationInfo = replicaReplicationInfo("10.0.0.1:6379", 4000);
    const lag = (limit: number): [string[], number | undefined] => {
      const r = analyseReplication(s.capture, { zones: s.zones, replicaLagBytes: limit });
      return [r.failures.map((f) => f.code), r.shards[0]?.replicas[0]?.lagBytes];
    };
    expect(lag(1000)).toEqual([[], 1000]);
    expect(lag(999)).toEqual([["REPLICA_LAG"], 1000]);
  });
});
