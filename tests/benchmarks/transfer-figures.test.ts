/**
 * Data transfer, pure: the byte counters' parser (INFO stats, CLUSTER INFO), the members' zones
 * from a topology, the client zones of each placement, the crossing bytes of replication,
 * client traffic and the cluster bus, reads from a member in the client's zone, the price per
 * hour, the record and the row's columns. Every expected figure is worked out by hand.
 */
import { describe, expect, it } from "vitest";
import {
  clientZonesFor,
  crossingShare,
  placeMembers,
  transferFigures,
  transferUsdPerHour,
  type ZoneTopology,
} from "../../benchmarks/cost/transfer.js";
import { transferColumns, transferRate, transferRecord } from "../../benchmarks/cost/transfer-record.js";
import { loadPriceTable } from "../../benchmarks/cost/prices.js";
import { netDelta, parseNetCounters, type NetCounters } from "../../benchmarks/run/net-bytes.js";
import type { MemberDelta } from "../../benchmarks/run/mix-served.js";

const net = (o: Partial<NetCounters>): NetCounters => ({
  input: 0,
  output: 0,
  replInput: 0,
  replOutput: 0,
  busSent: null,
  busReceived: null,
  ...o,
});
const member = (
  address: string,
  primary: boolean,
  n: Partial<NetCounters>,
  extra: Partial<MemberDelta> = {},
): MemberDelta => ({
  member: address,
  primary,
  delta: new Map(),
  net: net(n),
  seconds: 2,
  ...extra,
});

/** Replication 1 + 3 over zones a, b, c (round-robin: a, b, c, a). */
const REPLICATION: ZoneTopology = {
  shards: [
    {
      primary: { address: "10.0.0.1:6379", zone: "a" },
      replicas: [
        { address: "10.0.0.2:6379", zone: "b" },
        { address: "10.0.0.3:6379", zone: "c" },
        { address: "10.0.0.4:6379", zone: "a" },
      ],
    },
  ],
};
/** Cluster 3 × 1: primaries a, b, c; their replicas b, c, a. */
const CLUSTER: ZoneTopology = {
  shards: [
    { primary: { address: "10.1.0.1:6379", zone: "a" }, replicas: [{ address: "10.1.0.4:6379", zone: "b" }] },
    { primary: { address: "10.1.0.2:6379", zone: "b" }, replicas: [{ address: "10.1.0.5:6379", zone: "c" }] },
    { primary: { address: "10.1.0.3:6379", zone: "c" }, replicas: [{ address: "10.1.0.6:6379", zone: "a" }] },
  ],
};
const ZONES = ["a", "b", "c"];

/** N SETs of `len` bytes each (RESP), "+OK\r\n" replies, the stream to every replica. */
function setTraffic(
  n: number,
  len: number,
  t: ZoneTopology,
  primaryAddress = t.shards[0]?.primary.address as string,
): MemberDelta[] {
  const shard = t.shards[0];
  if (!shard) throw new Error("no shard");
  return [
    member(primaryAddress, true, { input: n * len, output: n * 5 + 3 * n * len, replOutput: 3 * n * len }),
    ...shard.replicas.map((r) => member(r.address, false, { input: n * len, replInput: n * len })),
  ];
}

describe("the byte counters (INFO stats, CLUSTER INFO)", () => {
  const stats =
    "# Stats\r\ntotal_net_input_bytes:1000\r\ntotal_net_output_bytes:2000\r\ntotal_net_repl_input_bytes:300\r\ntotal_net_repl_output_bytes:400\r\n";
  it.each([
    [
      "replication mode: the four fields, no bus",
      stats,
      undefined,
      net({ input: 1000, output: 2000, replInput: 300, replOutput: 400 }),
    ],
    [
      "cluster mode: the bus from CLUSTER INFO",
      stats,
      "cluster_state:ok\r\ncluster_stats_bytes_sent:5000\r\ncluster_stats_bytes_received:4000\r\n",
      net({ input: 1000, output: 2000, replInput: 300, replOutput: 400, busSent: 5000, busReceived: 4000 }),
    ],
    [
      "a server that counts bus messages, not bytes",
      stats,
      "cluster_stats_messages_sent:20\r\n",
      net({ input: 1000, output: 2000, replInput: 300, replOutput: 400 }),
    ],
  ])("%s", (_what, info, cluster, want) => {
    expect(parseNetCounters(info, cluster)).toEqual(want);
  });
  it("a missing field is named, never read as 0", () => {
    expect(parseNetCounters(stats.replace(/total_net_repl_input_bytes:300\r\n/, ""))).toEqual({
      missing: "INFO stats has no total_net_repl_input_bytes",
    });
  });
  it("the delta keeps a bus counter only when both sides have it", () => {
    expect(netDelta(net({ input: 10, busSent: 5 }), net({ input: 25, busSent: 9 }))).toEqual(
      net({ input: 15, busSent: 4 }),
    );
    expect(netDelta(net({ busSent: null }), net({ busSent: 9 })).busSent).toBeNull();
  });
});

describe("zones of the members and of the clients", () => {
  it("members are placed by address; a primary reached through an endpoint is the one-shard topology's primary", () => {
    const r = placeMembers(setTraffic(1, 1, REPLICATION, "valkey-write.valkey.svc:6379"), REPLICATION);
    if (!("placed" in r)) throw new Error(r.missing);
    expect(r.placed.map((m) => [m.member, m.zone, m.primaryZone])).toEqual([
      ["valkey-write.valkey.svc:6379", "a", undefined],
      ["10.0.0.2:6379", "b", "a"],
      ["10.0.0.3:6379", "c", "a"],
      ["10.0.0.4:6379", "a", "a"],
    ]);
  });
  it.each([
    [
      "a member the topology does not list (cluster: no endpoint fallback)",
      [member("10.9.9.9:6379", true, {})],
      CLUSTER,
      "10.9.9.9:6379 is not in the topology report",
    ],
    [
      "a member without byte counters",
      [
        {
          member: "10.1.0.1:6379",
          primary: true,
          delta: new Map(),
          netMissing: "INFO stats has no total_net_input_bytes",
        },
      ],
      CLUSTER,
      "INFO stats has no total_net_input_bytes",
    ],
    [
      "a zone the topology does not know",
      [member("10.1.0.1:6379", true, {})],
      { shards: [{ primary: { address: "10.1.0.1:6379", zone: null }, replicas: [] }] },
      "zone unknown",
    ],
  ])("%s: why, never a guess", (_what, members, t, why) => {
    const r = placeMembers(members, t);
    expect("missing" in r ? r.missing : "placed").toContain(why);
  });
  it.each([
    ["spread", REPLICATION, ["a", "b", "c"]],
    ["primary (replication: the primary's zone)", REPLICATION, ["a"]],
    ["primary (cluster, one primary per zone: the first by name)", CLUSTER, ["a"]],
    [
      "primary (cluster: the zone holding the most primaries)",
      { shards: [...CLUSTER.shards, { primary: { address: "10.1.0.7:6379", zone: "c" }, replicas: [] }] },
      ["c"],
    ],
  ])("%s", (what, t, want) => {
    expect(clientZonesFor(what.startsWith("spread") ? "spread" : "primary", t, ZONES)).toEqual(want);
  });
  it.each([
    ["a", ["a", "b", "c"], 2 / 3],
    ["a", ["a"], 0],
    ["b", ["a"], 1],
    ["d", ["a", "b", "c"], 1],
  ])("crossing share of a member in %s, clients in %j", (zone, clients, share) => {
    expect(crossingShare(zone, clients)).toBeCloseTo(share, 12);
  });
});

describe("crossing bytes", () => {
  const N = 1000;
  const L = 150;
  const place = (deltas: MemberDelta[], t: ZoneTopology) => {
    const r = placeMembers(deltas, t);
    if (!("placed" in r)) throw new Error(r.missing);
    return r.placed;
  };
  /** The cluster's figures for `deltas`, one request at 1 rps over 2 s, clients spread. */
  const clusterFigures = (deltas: MemberDelta[]) =>
    transferFigures({
      members: place(deltas, CLUSTER),
      topology: CLUSTER,
      clientZones: ZONES,
      requests: 1,
      rps: 1,
      seconds: 2,
      cluster: true,
      read: false,
    });
  it("replication, N SETs, clients spread: 2/3 of the client bytes and the two replicas in other zones cross", () => {
    const f = transferFigures({
      members: place(setTraffic(N, L, REPLICATION), REPLICATION),
      topology: REPLICATION,
      clientZones: ZONES,
      requests: N,
      rps: 10_000,
      seconds: 2,
      cluster: false,
      read: false,
    });
    // client: (N·L in + N·5 out) · 2/3 per N requests, at 10,000 rps; replication: 2 replicas of 3 in other zones.
    expect(f.clientBytesPerOp).toBe(L + 5);
    expect(f.replicationBytesPerOp).toBe(3 * L);
    expect(f.crossZone.client).toBeCloseTo((((L + 5) * 2) / 3) * 10_000, 6);
    expect(f.crossZone.replication).toBe(2 * L * 10_000);
    expect(f.crossZone.bus).toBeNull();
    expect(f.bus).toBe("no cluster bus (replication mode)");
    expect(f.crossZone.total).toBeCloseTo(f.crossZone.client + f.crossZone.replication, 6);
    expect(f.readSaving).toBeNull();
  });
  it("replication, clients in the primary's zone: no client byte crosses, the replication still does", () => {
    const f = transferFigures({
      members: place(setTraffic(N, L, REPLICATION), REPLICATION),
      topology: REPLICATION,
      clientZones: ["a"],
      requests: N,
      rps: 10_000,
      seconds: 2,
      cluster: false,
      read: false,
    });
    expect(f.crossZone.client).toBe(0);
    expect(f.crossZone.replication).toBe(2 * L * 10_000);
  });
  it("cluster bus: each node's bytes sent × its share of peers in other zones, over the snapshots' seconds", () => {
    const deltas = CLUSTER.shards
      .flatMap((s) => [s.primary, ...s.replicas])
      .map((n, i) => member(n.address, i < 3, { busSent: 6000 }));
    const f = clusterFigures(deltas);
    // Six nodes, two per zone: each has 5 peers, 4 in other zones; 6 × 6000 × 4/5 over 2 s.
    expect(f.crossZone.bus).toBeCloseTo((6 * 6000 * 4) / 5 / 2, 9);
    expect(f.bus).toMatch(/share of peers in other zones/);
  });
  it("cluster bus on a server without byte counters: not measured, with the member named", () => {
    const deltas = [member("10.1.0.1:6379", true, { input: 10 })];
    const f = clusterFigures(deltas);
    expect(f.crossZone.bus).toBeNull();
    expect(f.bus).toBe(
      "not measured: 10.1.0.1:6379 has no CLUSTER INFO cluster_stats_bytes_sent (Valkey < 9.0 counts bus messages, not bytes)",
    );
  });
  it.each([
    ["replication 1 + 3 over 3 zones, spread: every crossing read stays in its zone", REPLICATION, ZONES, 2 / 3],
    ["cluster 3 × 1, spread: each shard covers 2 of 3 zones, so 1/3 of the reads stay in-zone", CLUSTER, ZONES, 1 / 3],
    ["clients in the primary's zone: nothing crossed, nothing to save", REPLICATION, ["a"], 0],
  ])("reads from a member in the client's zone: %s", (_what, t, clients, share) => {
    const deltas = t.shards.map((s) => member(s.primary.address, true, { input: 100, output: 300 }));
    const f = transferFigures({
      members: place(deltas, t),
      topology: t,
      clientZones: clients,
      requests: 10,
      rps: 1000,
      seconds: 1,
      cluster: t === CLUSTER,
      read: true,
    });
    expect(f.readSaving).toBeCloseTo((t.shards.length * 400 * share * 1000) / 10, 9);
  });
  it("no requests is an error, not a rate of 0", () => {
    expect(() =>
      transferFigures({
        members: [],
        topology: REPLICATION,
        clientZones: ZONES,
        requests: 0,
        rps: 1,
        seconds: 1,
        cluster: false,
        read: false,
      }),
    ).toThrow(/requests/);
  });
});

describe("the price, the record and the row's columns", () => {
  it.each([
    [1e6, 0.01, 0.072],
    [60e6, 0.01, 4.32],
    [0, 0.01, 0],
  ])("%d bytes/s crossing at $%d/GB each way is $%d/h", (bytesPerS, rate, usd) => {
    expect(transferUsdPerHour(bytesPerS, rate)).toBeCloseTo(usd, 9);
  });
  it("the shipped table prices inter-AZ transfer at $0.01/GB each way, with its source and date", () => {
    expect(transferRate(loadPriceTable(), "us-east-1")).toEqual({
      region: "us-east-1",
      usdPerGBEachDirection: 0.01,
      source: "basavytix-cross-az-transfer, read 2026-11-25",
    });
    expect(transferRate(loadPriceTable(), "ap-nowhere-1")).toMatchObject({
      usdPerGBEachDirection: null,
      missing: "inter-AZ data transfer in ap-nowhere-1: not in the price table",
    });
  });
  const rate = { region: "us-east-1", usdPerGBEachDirection: 0.01, source: "t" };
  it("a record prices the total; its row gets the bytes per second and USD per hour", () => {
    const r = transferRecord({
      test: "SET",
      path: "",
      rps: 10_000,
      requests: 1000,
      deltas: setTraffic(1000, 150, REPLICATION),
      topology: REPLICATION,
      clientZones: ZONES,
      cluster: false,
      rate,
    });
    const total = ((155 * 2) / 3 + 300) * 10_000;
    expect(r.figures?.crossZone.total).toBeCloseTo(total, 6);
    expect(r.usdPerHour).toBe(transferUsdPerHour(total, 0.01));
    expect(transferColumns(r)).toEqual({
      cross_zone_bytes_per_s: Math.round(total),
      transfer_usd_per_hour: transferUsdPerHour(total, 0.01),
    });
    expect(r.members.map((m) => [m.zone, m.clientBytes, m.replInputBytes])).toEqual([
      ["a", 155_000, 0],
      ["b", 0, 150_000],
      ["c", 0, 150_000],
      ["a", 0, 150_000],
    ]);
  });
  it("a record without zones says why, and its columns are empty (not measured), never 0", () => {
    const r = transferRecord({
      test: "GET",
      path: "",
      rps: 1,
      requests: 1,
      deltas: [member("10.9.9.9:6379", true, {})],
      topology: CLUSTER,
      clientZones: ZONES,
      cluster: true,
      rate,
    });
    expect(r.missing).toMatch(/not in the topology report/);
    expect(transferColumns(r)).toEqual({ cross_zone_bytes_per_s: null, transfer_usd_per_hour: null });
    expect(transferColumns(undefined)).toEqual({ cross_zone_bytes_per_s: null, transfer_usd_per_hour: null });
  });
});
