/**
 * The soak's event detector on hand-built series (pure): one event per AOF rewrite (whether a
 * sample caught it in progress or only its count), with its fork time and the windows' latency
 * spike; a full resync only on a primary; one link-down per spell; role changes; unreachable
 * spells; a restarted member's counters going down is no event; a steady series has none. Also
 * the INFO parser on a real reply's shape.
 */
import { describe, expect, it } from "vitest";
import { detectSoakEvents, describeSoakEvent } from "../../benchmarks/run/soak-events.js";
import { parseMemberInfo, unreachableMember } from "../../benchmarks/run/soak-info.js";
import type { MemberInfo, SoakSample } from "../../benchmarks/run/soak-sample.js";

const P = "127.0.0.1:7000";
const R = "127.0.0.1:7001";

const primary = (over: Partial<MemberInfo> = {}): MemberInfo => ({
  ...parseMemberInfo(P, ""),
  role: "master",
  used_memory: 1_000_000,
  mem_fragmentation_ratio: 1.1,
  aof_enabled: 1,
  aof_rewrite_in_progress: 0,
  aof_rewrites: 0,
  latest_fork_usec: 0,
  total_forks: 0,
  rdb_bgsave_in_progress: 0,
  connected_slaves: 1,
  sync_full: 1,
  sync_partial_ok: 0,
  sync_partial_err: 0,
  ...over,
});
const replica = (over: Partial<MemberInfo> = {}): MemberInfo => ({
  ...primary(),
  member: R,
  role: "slave",
  master_link_status: "up",
  connected_slaves: 0,
  sync_full: 0,
  ...over,
});

/** Sample i (t = i + 1 s) with a p99 and the members' INFO. */
const sample = (i: number, members: MemberInfo[], p99 = 1): SoakSample => ({
  t_s: i + 1,
  at: new Date(Date.UTC(2026, 10, 25, 12, 0, i + 1)).toISOString(),
  window_s: 1,
  requests: 1000,
  errors: 0,
  rps: 1000,
  p50_ms: 0.5,
  p99_ms: p99,
  p999_ms: p99 * 2,
  max_ms: p99 * 3,
  members,
});

describe("soak events from a series", () => {
  it("a steady series has none", () => {
    const base = [primary(), replica()];
    const s = Array.from({ length: 10 }, (_, i) =>
      sample(i, [primary({ used_memory: 1_000_000 + i * 1000 }), replica()]),
    );
    expect(detectSoakEvents(base, s)).toEqual([]);
  });

  it("a rewrite seen in progress over three samples is ONE event, at its first sample, with the fork time after it and the windows' p99 spike", () => {
    const base = [primary(), replica()];
    const p = [
      primary(),
      primary(),
      primary({ aof_rewrite_in_progress: 1, total_forks: 1, latest_fork_usec: 4200 }),
      primary({ aof_rewrite_in_progress: 1, total_forks: 1, latest_fork_usec: 4200 }),
      primary({ aof_rewrites: 1, total_forks: 1, latest_fork_usec: 4200, aof_last_bgrewrite_status: "ok" }),
      primary({ aof_rewrites: 1, total_forks: 1, latest_fork_usec: 4200 }),
    ];
    const p99 = [1, 1, 9, 3, 1, 1];
    const events = detectSoakEvents(
      base,
      p.map((m, i) => sample(i, [m, replica()], p99[i])),
    );
    expect(events).toEqual([
      {
        kind: "aof-rewrite",
        member: P,
        t_s: 3,
        at: "2026-11-25T12:00:03.000Z",
        evidence:
          "aof_rewrite_in_progress 0→1, total_forks 0→1; over by t=5 s (aof_last_bgrewrite_status ok, latest_fork_usec 4200)",
        fork_usec: 4200,
        latency_spike: { p99_ms: 9, median_p99_ms: 1 },
      },
    ]);
    expect(describeSoakEvent(events[0] as (typeof events)[number])).toBe(
      "t=3 s aof-rewrite on 127.0.0.1:7000: aof_rewrite_in_progress 0→1, total_forks 0→1; over by t=5 s (aof_last_bgrewrite_status ok, latest_fork_usec 4200); fork 4200 µs; window p99 9 ms vs median 1 ms",
    );
  });

  it("a rewrite that started and ended between two samples is caught by its count, without a spike when p99 stayed flat", () => {
    const s = [
      sample(0, [primary()]),
      sample(1, [primary({ aof_rewrites: 1, total_forks: 1, latest_fork_usec: 800 })]),
      sample(2, [primary({ aof_rewrites: 1 })]),
    ];
    const [e, ...rest] = detectSoakEvents([primary()], s);
    expect(rest).toEqual([]);
    expect([e?.kind, e?.t_s, e?.fork_usec, e?.latency_spike]).toEqual(["aof-rewrite", 2, 800, null]);
    expect(e?.evidence).toMatch(/^aof_rewrites 0→1, total_forks 0→1; over by t=2 s/);
  });

  it("two rewrites are two events; one still running at the end says so", () => {
    const seq = [0, 1, 1, 2].map((n, i) => primary({ aof_rewrites: n, aof_rewrite_in_progress: i === 3 ? 1 : 0 }));
    const events = detectSoakEvents(
      [primary()],
      seq.map((m, i) => sample(i, [m])),
    );
    expect(events.map((e) => [e.kind, e.t_s])).toEqual([
      ["aof-rewrite", 2],
      ["aof-rewrite", 4],
    ]);
    expect(events[1]?.evidence).toMatch(/still in progress at the last sample$/);
    expect(events[1]?.fork_usec).toBeNull();
  });

  it("a full resync is a sync_full rise on a primary; a replica's own counter or a restart's drop is not", () => {
    const s = [
      sample(0, [primary(), replica()]),
      sample(1, [primary({ sync_full: 2, sync_partial_err: 1, connected_slaves: 1 }), replica({ sync_full: 3 })]),
      // The primary restarted: its counters start again from 0, then rise to 1 (a sync after the restart).
      sample(2, [primary({ sync_full: 0 }), replica({ sync_full: 3 })]),
      sample(3, [primary({ sync_full: 1 }), replica({ sync_full: 3 })]),
    ];
    const events = detectSoakEvents([primary(), replica()], s);
    expect(events.map((e) => [e.kind, e.member, e.t_s, e.evidence])).toEqual([
      ["full-resync", P, 2, "sync_full 1→2, sync_partial_err 0→1"],
      ["full-resync", P, 4, "sync_full 0→1"],
    ]);
  });

  it("a replica's link down is one event per spell, with when it was up again; role changes are events", () => {
    const link = ["up", "down", "down", "up", "up"];
    const s = link.map((l, i) =>
      sample(i, [primary(), replica({ master_link_status: l, master_sync_in_progress: l === "up" ? 0 : 1 })]),
    );
    s.push(
      sample(5, [
        primary({ role: "slave", master_link_status: "down" }),
        replica({ role: "master", master_link_status: null }),
      ]),
    );
    const events = detectSoakEvents([primary(), replica()], s);
    expect(events.map((e) => [e.kind, e.member, e.t_s, e.evidence])).toEqual([
      ["link-down", R, 2, "master_link_status up→down, master_sync_in_progress 0→1; up again at t=4 s"],
      ["role-change", P, 6, "role master→slave, master_link_status null→down"],
      ["role-change", R, 6, "role slave→master, master_link_status up→null"],
    ]);
  });

  it("a member that stops answering is one unreachable event per spell; its figures are compared across the gap", () => {
    const s = [
      sample(0, [primary()]),
      sample(1, [unreachableMember(P, "Connection is closed.")]),
      sample(2, [unreachableMember(P, "Connection is closed.")]),
      sample(3, [primary({ aof_rewrites: 1 })]),
    ];
    const events = detectSoakEvents([primary()], s);
    expect(events.map((e) => [e.kind, e.t_s, e.evidence.replace(/; over.*/, "")])).toEqual([
      ["unreachable", 2, "INFO failed: Connection is closed.; answered again at t=4 s"],
      ["aof-rewrite", 4, "aof_rewrites 0→1"],
    ]);
  });
});

describe("INFO into a sample", () => {
  it("keeps the fields a sample declares, numbers as numbers, absent ones null", () => {
    const text = [
      "# Memory",
      "used_memory:1019008",
      "mem_fragmentation_ratio:6.47",
      "# Persistence",
      "aof_enabled:1",
      "aof_rewrite_in_progress:0",
      "aof_rewrites:3",
      "aof_last_bgrewrite_status:ok",
      "rdb_bgsave_in_progress:0",
      "# Stats",
      "sync_full:2",
      "sync_partial_ok:1",
      "sync_partial_err:0",
      "latest_fork_usec:812",
      "total_forks:5",
      "# Replication",
      "role:slave",
      "master_link_status:up",
      "master_sync_in_progress:0",
      "connected_slaves:0",
    ].join("\r\n");
    expect(parseMemberInfo(R, text)).toEqual({
      member: R,
      error: null,
      used_memory: 1019008,
      mem_fragmentation_ratio: 6.47,
      aof_enabled: 1,
      aof_rewrite_in_progress: 0,
      aof_rewrites: 3,
      latest_fork_usec: 812,
      total_forks: 5,
      rdb_bgsave_in_progress: 0,
      connected_slaves: 0,
      master_sync_in_progress: 0,
      sync_full: 2,
      sync_partial_ok: 1,
      sync_partial_err: 0,
      role: "slave",
      master_link_status: "up",
      aof_last_bgrewrite_status: "ok",
    });
    expect(parseMemberInfo(P, "role:master\r\n").aof_rewrites).toBeNull();
  });
});
