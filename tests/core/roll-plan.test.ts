/**
 * The rolling-restart order (core/roll/roll-plan.ts) on reports shaped as the verifier
 * returns them: Sentinels first, then shard by shard the replicas, then the primary's hand-over;
 * a roll of the whole topology visits every member exactly once, in that order, even when roles
 * move under it.
 */
import { describe, expect, it } from "vitest";
import { gateOpen, nextRollStep, type RollStep } from "../../core/roll/roll-plan.js";
import { rollingRestart } from "../../core/roll/rolling-restart.js";
import type { ShardReport, TopologyReport } from "../../core/verify/verify-types.js";

type Shard = { primary: string; replicas: string[]; slots?: string };
const zoneOf = (a: string): string => `zone-${a.slice(-1)}`;

function report(mode: "cluster" | "replication", shards: Shard[], sentinels: string[] = []): TopologyReport {
  const shardReports: ShardReport[] = shards.map((s) => ({
    primary: {
      address: s.primary,
      zone: zoneOf(s.primary),
      slotRanges: s.slots === undefined ? [] : [s.slots],
      slotCount: 0,
      keys: undefined,
    },
    replicas: s.replicas.map((r) => ({ address: r, zone: zoneOf(r), crossAz: true, linkUp: true, lagBytes: 0 })),
  }));
  const primariesPerZone: Record<string, number> = {};
  for (const s of shards) primariesPerZone[zoneOf(s.primary)] = (primariesPerZone[zoneOf(s.primary)] ?? 0) + 1;
  return {
    ok: true,
    mode,
    failures: [],
    shards: shardReports,
    primariesPerZone,
    nodeCount: shards.reduce((n, s) => n + 1 + s.replicas.length, 0),
    ...(sentinels.length === 0
      ? {}
      : { sentinels: sentinels.map((address) => ({ address, zone: undefined, reachable: true, agrees: true })) }),
  };
}

/** Plays a whole roll: applies each step to the shards the way the servers would (a failover swaps roles). */
function playRoll(mode: "cluster" | "replication", shards: Shard[], sentinels: string[] = []): RollStep[] {
  const rolled = new Set<string>();
  const steps: RollStep[] = [];
  for (let i = 0; i < 100; i++) {
    const step = nextRollStep(report(mode, shards, sentinels), rolled);
    if (step === undefined) return steps;
    steps.push(step);
    if (step.kind === "failover") {
      const s = shards.find((x) => x.primary === step.from) as Shard;
      s.replicas = [...s.replicas.filter((r) => r !== step.to), s.primary];
      s.primary = step.to;
    } else rolled.add(step.address);
  }
  throw new Error(`the roll did not end: ${JSON.stringify(steps)}`);
}

describe("rolling restart order (live report → next step)", () => {
  it("replication: Sentinels one by one, then each replica, the primary last (its preStop switches over)", () => {
    const steps = playRoll("replication", [{ primary: "m0:1", replicas: ["m1:2", "m2:3"] }], ["s0:7", "s1:8", "s2:9"]);
    expect(steps.map((s) => `${s.kind} ${"address" in s ? s.address : ""}`)).toEqual([
      "sentinel s0:7",
      "sentinel s1:8",
      "sentinel s2:9",
      "replica m1:2",
      "replica m2:3",
      "primary m0:1",
    ]);
  });

  it("cluster: shard by shard (by slots, stable across failovers): replicas, CLUSTER FAILOVER to a restarted one, then the old primary", () => {
    const shards: Shard[] = [
      { primary: "b:2", replicas: ["c:3"], slots: "5461-10922" },
      { primary: "a:1", replicas: ["b:5"], slots: "0-5460" },
      { primary: "c:6", replicas: ["a:4"], slots: "10923-16383" },
    ];
    const text = playRoll("cluster", shards).map((s) =>
      s.kind === "failover" ? `failover ${s.from}→${s.to}` : `${s.kind} ${s.address}`,
    );
    expect(text).toEqual([
      "replica b:5",
      "failover a:1→b:5",
      "replica a:1",
      "replica c:3",
      "failover b:2→c:3",
      "replica b:2",
      "replica a:4",
      "failover c:6→a:4",
      "replica c:6",
    ]);
  });

  it("cluster: every member restarted exactly once, every shard failed over once (3 × 2)", () => {
    const shards: Shard[] = [0, 1, 2].map((i) => ({
      primary: `p${i}:${i}`,
      replicas: [`r${i}a:1${i}`, `r${i}b:2${i}`],
      slots: String(i * 6000),
    }));
    const steps = playRoll("cluster", shards);
    const restarted = steps.filter((s) => s.kind !== "failover").map((s) => ("address" in s ? s.address : ""));
    expect(new Set(restarted).size).toBe(9);
    expect(restarted).toHaveLength(9);
    expect(steps.filter((s) => s.kind === "failover")).toHaveLength(3);
  });

  it("cluster: the failover goes to the restarted replica in the zone with the fewest primaries", () => {
    // Shard 0's replicas are in zones 1 and 3; zone 1 already holds a primary (shard 1's).
    const r = report("cluster", [
      { primary: "p:0", replicas: ["x:1", "y:3"], slots: "0" },
      { primary: "q:1", replicas: ["z:2"], slots: "9000" },
    ]);
    const step = nextRollStep(r, new Set(["x:1", "y:3"]));
    expect(step).toMatchObject({ kind: "failover", from: "p:0", to: "y:3" });
  });

  it("cluster: a shard without replicas restarts its primary in place (its slots are down meanwhile)", () => {
    expect(
      nextRollStep(report("cluster", [{ primary: "p:0", replicas: [], slots: "0-16383" }]), new Set()),
    ).toMatchObject({ kind: "primary", address: "p:0" });
  });

  it("cluster: no linked restarted replica to fail over to is an error naming the shard", () => {
    const r = report("cluster", [{ primary: "p:0", replicas: ["x:1"], slots: "0-16383" }]);
    (r.shards[0] as ShardReport).replicas[0]!.linkUp = false;
    expect(() => nextRollStep(r, new Set(["x:1"]))).toThrow(
      /shard 0 \(primary p:0\): no restarted replica with its link up/,
    );
  });

  it("the gate tolerates a zone primary majority mid-roll and nothing else", () => {
    const r = report("cluster", [{ primary: "p:0", replicas: ["x:1"] }]);
    expect(gateOpen({ ...r, ok: false, failures: [{ code: "AZ_PRIMARY_MAJORITY", message: "" }] })).toBe(true);
    expect(gateOpen({ ...r, ok: false, failures: [{ code: "REPLICA_LAG", message: "" }] })).toBe(false);
  });

  it("a roll that never gets anywhere (restarts that leave the member unrolled) stops with an error instead of looping", async () => {
    const r = report("replication", [{ primary: "m0:1", replicas: ["m1:2"] }]);
    let restarts = 0;
    const ops = {
      verify: () => Promise.resolve(r),
      restart: () => Promise.resolve(void restarts++),
      failover: () => Promise.resolve(),
    };
    await expect(
      rollingRestart(ops, { pollMs: 1, rolledIn: () => Promise.resolve(new Set<string>()) }),
    ).rejects.toThrow(/no end after 7 steps \(last: restart replica m1:2/);
    expect(restarts).toBe(7);
  });

  it("a failover whose replica was promoted meanwhile (the AZ failback got there first) is done, not an error; any other refusal fails the roll", async () => {
    const shards: Shard[] = [{ primary: "p:0", replicas: ["x:1"], slots: "0-16383" }];
    const refused = new Error("ERR You should send CLUSTER FAILOVER to a replica");
    const ops = (promoteFirst: boolean) => ({
      verify: () => Promise.resolve(report("cluster", shards)),
      restart: () => Promise.resolve(),
      failover: (to: string) => {
        if (!promoteFirst) return Promise.reject(refused);
        shards[0] = { primary: to, replicas: ["p:0"], slots: "0-16383" };
        return Promise.reject(refused);
      },
    });
    const r = await rollingRestart(ops(true), { pollMs: 1 });
    expect(r.steps.map((s) => s.kind)).toEqual(["replica", "failover", "replica"]);
    shards[0] = { primary: "p:0", replicas: ["x:1"], slots: "0-16383" };
    await expect(rollingRestart(ops(false), { pollMs: 1 })).rejects.toThrow(/send CLUSTER FAILOVER to a replica/);
  });

  it("between steps the roll also waits for the endpoints to settle (every HAProxy counting every Sentinel), and names them when they never do", async () => {
    const r = report("replication", [{ primary: "m0:1", replicas: ["m1:2"] }], ["s0:3"]);
    let asked = 0;
    const ops = (settlesAfter: number) => ({
      verify: () => Promise.resolve(r),
      restart: () => Promise.resolve(),
      failover: () => Promise.resolve(),
      endpointsSettled: () =>
        Promise.resolve(
          ++asked > settlesAfter ? undefined : "HAProxy pod hp-0 does not count every Sentinel naming the primary yet",
        ),
    });
    const done = await rollingRestart(ops(3), { pollMs: 1 });
    expect(done.steps.map((s) => s.kind)).toEqual(["sentinel", "replica", "primary"]);
    expect(asked, "4 before the roll (3 unsettled), one after each of the 3 steps, one at the end").toBe(4 + 3 + 1);
    asked = 0;
    await expect(rollingRestart(ops(Infinity), { pollMs: 1, stepTimeoutMs: 50 })).rejects.toThrow(
      /before the roll not reached within 50 ms \(last verifier result: the verifier passes, but HAProxy pod hp-0 does not count every Sentinel/,
    );
  });
});
