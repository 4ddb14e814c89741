/**
 * The zone-majority decision, one table, every implementation: the awk in the members' failback
 * loop (az-failback-script.ts, run by `awk` over a round's batched replies as valkey-cli prints them: its zone, a
 * settled cluster_state, its ID, then the CLUSTER SHARDS reply, each after the server's marker)
 * and the verifier's AZ_PRIMARY_MAJORITY (cluster-analysis.ts, run directly). Each case says what
 * each must answer; where they differ, the case says why that is intended:
 *  - the verifier reports a majority only with >= 3 zones in use (with 2, one zone always holds at
 *    least half, which placement cannot fix); the failback still evens out 3/1 over 2 zones,
 *    because 2/2 is better and it can;
 *  - the failback acts only when a synced, online replica in a zone that would not become the new
 *    majority can take over; the verifier reports the majority whether or not it can be fixed.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { synthesiseCluster, type SyntheticNode } from "../../core/verify/synthetic.js";
import { analyseCluster } from "../../core/verify/cluster-analysis.js";
import { failbackRoundAwk } from "../../pod/az-failback-script.js";

interface Replica {
  zone: string;
  /** Bytes behind its primary. @default 0 */
  lag?: number;
  /** @default "online" */
  health?: "online" | "fail" | "loading";
}
interface Case {
  name: string;
  /** Per shard: the primary's zone and its replicas. */
  shards: Array<{ primary: string; replicas: Replica[] }>;
  /** Does some member's failback act (CLUSTER FAILOVER)? */
  failback: boolean;
  /** Does the verifier report AZ_PRIMARY_MAJORITY? */
  verifier: boolean;
  /** Why the two differ, when they do. */
  differs?: string;
}

const MAX_LAG = 1024 * 1024;
const CASES: Case[] = [
  { name: "one primary per zone", shards: [s("a", "b"), s("b", "c"), s("c", "a")], failback: false, verifier: false },
  {
    name: "2 of 3 primaries in zone a, a's replica in c is synced",
    shards: [s("a", "b"), s("a", "c"), s("c", "a")],
    failback: true,
    verifier: true,
  },
  {
    name: "2 of 3 in zone a, the only way out (b) lags; c would become the majority",
    shards: [s("a", "c"), { primary: "a", replicas: [{ zone: "b", lag: MAX_LAG + 1 }] }, s("c", "a")],
    failback: false,
    verifier: true,
    differs: "the failback waits: no synced replica can fix it; the verifier reports it anyway",
  },
  {
    name: "2 of 3 in zone a, the only way out (b) is failed",
    shards: [s("a", "c"), { primary: "a", replicas: [{ zone: "b", health: "fail" }] }, s("c", "a")],
    failback: false,
    verifier: true,
    differs: "the failback waits: the replica that could fix it is not online",
  },
  {
    name: "2 of 3 in zone a, a's replicas only in zones that would become the majority",
    shards: [s("a", "c"), s("a", "c"), s("c", "b")],
    failback: false,
    verifier: true,
    differs: "moving either shard to c makes c hold 2 of 3: the failback cannot fix it",
  },
  {
    name: "3 of 5 in zone a",
    shards: [s("a", "b"), s("a", "c"), s("a", "b"), s("b", "c"), s("c", "a")],
    failback: true,
    verifier: true,
  },
  {
    name: "2 of 4 in zone a (half is not a majority)",
    shards: [s("a", "b"), s("a", "c"), s("b", "c"), s("c", "a")],
    failback: false,
    verifier: false,
  },
  {
    name: "3 of 4 over two zones",
    shards: [s("a", "b"), s("a", "b"), s("a", "b"), s("b", "a")],
    failback: true,
    verifier: false,
    differs: "the verifier checks the majority only with >= 3 zones in use; the failback evens 3/1 to 2/2",
  },
  { name: "2 of 3 over two zones", shards: [s("a", "b"), s("a", "b"), s("b", "a")], failback: false, verifier: false },
];

function s(primary: string, ...replicaZones: string[]): Case["shards"][number] {
  return { primary, replicas: replicaZones.map((zone) => ({ zone })) };
}

/** The case as a synthetic cluster: every node, its zone, and per replica its lag and health. */
function build(c: Case) {
  const m = Math.max(...c.shards.map((x) => x.replicas.length));
  const cluster = synthesiseCluster(c.shards.length, m, ["z"]);
  const zones = new Map<string, string>();
  const extra = new Map<string, Replica>();
  const primaries = cluster.nodes.filter((n) => n.role === "primary");
  const replicas = cluster.nodes.filter((n) => n.role === "replica");
  for (const [i, sh] of c.shards.entries()) {
    zones.set((primaries[i] as SyntheticNode).address, sh.primary);
    const mine = replicas.filter((r) => r.shard === i);
    for (const [k, r] of mine.entries()) {
      const spec = sh.replicas[k];
      if (spec === undefined)
        throw new Error(
          `${c.name}: shard ${i} has fewer replicas than the widest shard; give every shard the same count`,
        );
      zones.set(r.address, spec.zone);
      extra.set(r.id, spec);
    }
  }
  return { cluster, zones, extra, primaries, replicas };
}

/** CLUSTER SHARDS as valkey-cli prints it to a pipe: one reply element per line. */
function shardsReply(c: Case): { text: string; replicaIds: string[] } {
  const { cluster, zones, extra, primaries, replicas } = build(c);
  const slots = cluster.capture.seedClusterNodes!.split("\n").map((l) => l.split(" "));
  const lines: string[] = [];
  const OFFSET = 10_000_000;
  for (const [i, p] of primaries.entries()) {
    const range = (slots.find((l) => l[0] === p.id)?.[8] ?? "").split("-");
    lines.push("slots", range[0] ?? "", range[1] ?? "", "nodes");
    const node = (n: SyntheticNode, role: string, offset: number, health: string, zone: string): void => {
      const ip = n.address.split(":")[0] ?? "";
      lines.push(
        "id",
        n.id,
        "port",
        "6379",
        "ip",
        ip,
        "endpoint",
        ip,
        "role",
        role,
        "replication-offset",
        String(offset),
        "health",
        health,
        "availability-zone",
        zone,
      );
    };
    node(p, "master", OFFSET, "online", zones.get(p.address) ?? "");
    for (const r of replicas.filter((x) => x.shard === i)) {
      const e = extra.get(r.id) ?? { zone: "" };
      node(r, "replica", OFFSET - (e.lag ?? 0), e.health ?? "online", e.zone);
    }
  }
  return { text: lines.join("\n") + "\n", replicaIds: replicas.map((r) => r.id) };
}

function failbackActs(c: Case): boolean {
  const { text, replicaIds } = shardsReply(c);
  // The round's replies as the loop reads them (failback-round.awk); its last line is the decision.
  const decide = (me: string): string => {
    const round = `availability-zone\nz\nfailback-state\ncluster_state:ok\nfailback-myid\n${me}\nfailback-shards\n${text}failback-end\n`;
    const out = execFileSync("awk", ["-v", `maxlag=${MAX_LAG}`, failbackRoundAwk()], {
      input: round,
      encoding: "utf8",
    });
    const [zone, id, decision] = out.trimEnd().split("\n");
    expect([zone, id]).toEqual(["zone z", `me ${me}`]);
    return decision as string;
  };
  const answers = replicaIds.map(decide);
  for (const a of answers) expect(a, c.name).toMatch(/^(act|wait .+)$/);
  // At most one member acts at a time (the lowest qualifying node id).
  expect(answers.filter((a) => a === "act").length, c.name).toBeLessThanOrEqual(1);
  return answers.includes("act");
}

function verifierReportsMajority(c: Case): boolean {
  const { cluster, zones } = build(c);
  const r = analyseCluster(cluster.capture, { zones });
  return r.failures.some((f) => f.code === "AZ_PRIMARY_MAJORITY");
}

describe("zone-majority decision: one table, the failback awk and the verifier", () => {
  it.each(CASES)("$name", (c) => {
    expect({ failback: failbackActs(c), verifier: verifierReportsMajority(c) }).toEqual({
      failback: c.failback,
      verifier: c.verifier,
    });
    // They agree unless the case says why not.
    expect(
      c.failback === c.verifier || c.differs !== undefined,
      `${c.name}: the implementations differ without a reason`,
    ).toBe(true);
  });
});
