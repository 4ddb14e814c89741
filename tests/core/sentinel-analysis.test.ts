/**
 * The replication verifier's Sentinel analysis, pure (core/verify/sentinel-analysis.ts): captures
 * as collectSentinels builds them from real replies, each failure code at its edge and just inside
 * it. The same analysis over real Sentinel processes is tests/core/verify-topology-sentinel.test.ts's;
 * this table is what `npm run mutate` runs over the file (seconds per mutant, not a topology).
 */
import { describe, expect, it } from "vitest";
import {
  analyseSentinels,
  chosenPrimary,
  replicaEntry,
  type ReplicaView,
  type SentinelCapture,
} from "../../core/verify/sentinel-analysis.js";

const P = "10.0.0.1:6379";
const R1 = "10.0.0.2:6379";
const R2 = "10.0.0.3:6379";
const up = (address: string, priority = 100): ReplicaView => ({ address, flags: "slave", priority });

/** A healthy Sentinel `i` naming `primary`, quorum 2, CKQUORUM ok, both replicas up at priority 100. */
function sentinel(i: number, over: Partial<SentinelCapture> = {}): SentinelCapture {
  return {
    address: `10.0.1.${i}:26379`,
    endpoint: { host: `10.0.1.${i}`, port: 26379 },
    primary: P,
    quorum: 2,
    flags: "master",
    ckquorum: { ok: true, text: "OK 3 usable Sentinels. Quorum and failover authorization can be reached" },
    replicas: [up(R1), up(R2)],
    tilt: false,
    ...over,
  };
}
const down = (i: number): SentinelCapture => ({
  address: `10.0.1.${i}:26379`,
  endpoint: { host: `10.0.1.${i}`, port: 26379 },
  error: "connect ECONNREFUSED",
});
const healthy = [sentinel(1), sentinel(2), sentinel(3)];
const codes = (captures: SentinelCapture[], live: string[] = [R1, R2], zones?: Map<string, string>) =>
  analyseSentinels(captures, "valkey", zones, live).failures.items.map((f) => `${f.code}${f.node ? ` ${f.node}` : ""}`);

describe("analyseSentinels", () => {
  it("healthy: no failure, the primary they name, every Sentinel agreeing and reachable", () => {
    const a = analyseSentinels(healthy, "valkey", undefined, [R1, R2]);
    expect(a.failures.items).toEqual([]);
    expect(a.primary).toBe(P);
    expect(a.sentinels.map((s) => [s.reachable, s.agrees, s.primary, s.quorum])).toEqual([
      [true, true, P, 2],
      [true, true, P, 2],
      [true, true, P, 2],
    ]);
    expect(a.sentinels[0]?.ckquorum).toMatch(/^OK 3 usable/);
  });

  it.each([
    // case, captures, live replicas, the failures (code and node)
    ["one of three down, quorum 2: still enough", [sentinel(1), sentinel(2), down(3)], [R1, R2], []],
    ["two of three down, quorum 2", [sentinel(1), down(2), down(3)], [R1, R2], ["SENTINEL_QUORUM"]],
    ["exactly the quorum reachable", [sentinel(1, { quorum: 1 }), down(2)], [R1, R2], []],
    [
      "a CKQUORUM failing",
      [sentinel(1), sentinel(2, { ckquorum: { ok: false, text: "NOQUORUM 1 usable Sentinels" } }), sentinel(3)],
      [R1, R2],
      ["SENTINEL_QUORUM 10.0.1.2:26379"],
    ],
    [
      "one names another primary",
      [sentinel(1), sentinel(2), sentinel(3, { primary: R1 })],
      [R1, R2],
      ["SENTINEL_DISAGREE"],
    ],
    [
      "one does not monitor the set",
      [sentinel(1), sentinel(2), sentinel(3, { primary: null })],
      [R1, R2],
      ["SENTINEL_DISAGREE 10.0.1.3:26379"],
    ],
    [
      "a replica unknown to one",
      [sentinel(1), sentinel(2, { replicas: [up(R1)] }), sentinel(3)],
      [R1, R2],
      ["SENTINEL_REPLICA_DOWN 10.0.1.2:26379"],
    ],
    [
      "a replica s_down",
      [sentinel(1, { replicas: [up(R1), { address: R2, flags: "s_down,slave", priority: 100 }] }), sentinel(2)],
      [R1, R2],
      ["SENTINEL_REPLICA_DOWN 10.0.1.1:26379"],
    ],
    [
      "a replica disconnected",
      [sentinel(1, { replicas: [up(R1), { address: R2, flags: "slave,disconnected", priority: 100 }] }), sentinel(2)],
      [R1, R2],
      ["SENTINEL_REPLICA_DOWN 10.0.1.1:26379"],
    ],
    [
      "a replica at priority 0 (restarted, not synced)",
      [sentinel(1, { replicas: [up(R1), up(R2, 0)] }), sentinel(2)],
      [R1, R2],
      ["SENTINEL_REPLICA_DOWN 10.0.1.1:26379"],
    ],
    [
      "a replica not live is not asked for",
      [sentinel(1, { replicas: [up(R1)] }), sentinel(2, { replicas: [up(R1)] })],
      [R1],
      [],
    ],
    [
      "announced addresses compared without case",
      [
        sentinel(1, { replicas: [up("Valkey-1.X:6379"), up(R2)] }),
        sentinel(2, { replicas: [up("valkey-1.x:6379"), up(R2)] }),
      ],
      ["valkey-1.x:6379", R2],
      [],
    ],
    [
      "a disagreeing Sentinel's replica view is not judged",
      [sentinel(1), sentinel(2), sentinel(3, { primary: R1, replicas: [] })],
      [R1, R2],
      ["SENTINEL_DISAGREE"],
    ],
    [
      "unequal priorities: the lowest named once",
      [sentinel(1, { replicas: [up(R1, 1), up(R2, 100)] }), sentinel(2, { replicas: [up(R1, 1), up(R2, 100)] })],
      [R1, R2],
      [`SENTINEL_REPLICA_PRIORITY ${R1}`],
    ],
    [
      "unequal, but the other is not promotable: no priority failure",
      [sentinel(1, { quorum: 1, replicas: [up(R1, 1), { address: R2, flags: "s_down,slave", priority: 100 }] })],
      [R1],
      [],
    ],
  ] as const)("%s", (_what, captures, live, want) => {
    expect(codes([...captures], [...live])).toEqual([...want]);
  });

  it("the quorum failure names the unreachable Sentinels and the quorum; the report keeps each one's error", () => {
    const a = analyseSentinels([sentinel(1), down(2), down(3)], "valkey", undefined);
    expect(a.failures.items[0]?.message).toBe(
      "only 1 of 3 Sentinels reachable, quorum is 2 (unreachable: 10.0.1.2:26379, 10.0.1.3:26379)",
    );
    expect(a.sentinels.map((x) => [x.reachable, x.agrees, x.error])).toEqual([
      [true, true, undefined],
      [false, false, "connect ECONNREFUSED"],
      [false, false, "connect ECONNREFUSED"],
    ]);
    expect("error" in (a.sentinels[0] ?? {})).toBe(false);
  });

  it("a Sentinel in TILT says so in its replica failure, with the Sentinel's link view", () => {
    const seen = { address: R2, flags: "s_down,slave", priority: 100, link: "last ok ping reply 9000 ms ago" };
    const msg = analyseSentinels(
      [sentinel(1, { quorum: 1, tilt: true, replicas: [up(R1), seen] })],
      "valkey",
      undefined,
      [R1, R2],
    ).failures.items[0]?.message;
    expect(msg).toContain("flags it s_down,slave: replica 10.0.0.3:6379");
    expect(msg).toContain("; its view: last ok ping reply 9000 ms ago");
    expect(msg).toContain("in TILT");
  });

  it("zones: two Sentinels in one zone, and one outside the map", () => {
    const zones = new Map([
      ["10.0.1.1:26379", "a"],
      ["10.0.1.2:26379", "a"],
    ]);
    expect(codes(healthy, [R1, R2], zones)).toEqual([
      "ZONE_UNKNOWN 10.0.1.3:26379",
      "SENTINEL_SAME_ZONE 10.0.1.2:26379",
    ]);
    zones.set("10.0.1.2:26379", "b");
    zones.set("10.0.1.3:26379", "c");
    expect(codes(healthy, [R1, R2], zones)).toEqual([]);
  });
});

describe("chosenPrimary", () => {
  it("the most named; a tie goes to the earliest Sentinel's; unreachable and non-monitoring ones do not vote", () => {
    expect(chosenPrimary([sentinel(1, { primary: R1 }), sentinel(2), sentinel(3)])).toBe(P);
    expect(chosenPrimary([sentinel(1, { primary: R1 }), sentinel(2)])).toBe(R1);
    expect(chosenPrimary([sentinel(1, { primary: null }), down(2), sentinel(3, { primary: R2 })])).toBe(R2);
    expect(chosenPrimary([down(1), sentinel(2, { primary: null })])).toBeUndefined();
  });
});

describe("replicaEntry", () => {
  it("reads SENTINEL REPLICAS' flat list: address, flags, priority, the link view", () => {
    const flat = [
      "name",
      "10.0.0.2:6379",
      "ip",
      "10.0.0.2",
      "port",
      "6379",
      "flags",
      "slave",
      "slave-priority",
      "100",
      "last-ok-ping-reply",
      "150",
      "master-link-status",
      "ok",
    ];
    expect(replicaEntry(flat)).toEqual({
      address: "10.0.0.2:6379",
      flags: "slave",
      priority: 100,
      link: "last ok ping reply 150 ms ago, the replica last reported its link to the primary ok",
    });
    expect(replicaEntry(["ip", "h", "port", "1", "flags", "slave"])).toEqual({ address: "h:1", flags: "slave" });
  });
});
