/**
 * After every member crashed, replicas that restarted before the old primary do not get its role
 * (real processes, the rendered start script, 3 Sentinels, down-after 2 s, failover-timeout 6 s).
 * Found on real pods under CPU load: in an `all` drill the replicas came back first, the old
 * primary's start script counted them as live replicas, handed over, and the Sentinels promoted one
 * whose AOF lacked the last writes: 24 WAIT-confirmed writes lost.
 *
 * Here (1 primary, replicas A and B): A is killed, keys are written to the primary (B acknowledges
 * them), then B and the primary are killed, as a sequence of crashes does. The Sentinels' own first
 * failover aborts (no replica up). A restarts and the Sentinels see it up; then the primary restarts. A replica that restarted and never linked reports
 * master-link-down-time -1000, so the start script does not count it: the old primary serves its
 * data, A syncs from it, every key is there. With the check removed (mutation) the old primary hands
 * over to A and the keys are gone.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openClient } from "../../core/topology/connector.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { waitForReplicaLinks } from "../../harness/local/local-replication.js";
import { killHard, SentinelTopology, type TopologyNode } from "../../harness/local/sentinel-topology.js";

const PASSWORD = "restarted-replicas-password";
const KEYS = 50;

let t: SentinelTopology | undefined;
afterEach(async () => {
  await t?.stopAll();
  t = undefined;
});

const client = (n: { host: string; port: number; address: string }) =>
  openClient(n.host, n.port, n.address, { password: PASSWORD, connectTimeoutMs: 1000 });

/** The flags SENTINEL MASTER reports for `master`. */
async function masterFlags(s: TopologyNode, master: string): Promise<string> {
  const c = await client(s);
  try {
    const fields = (await c.call("SENTINEL", "MASTER", master)) as string[];
    return fields[fields.indexOf("flags") + 1] ?? "";
  } finally {
    c.disconnect();
  }
}

/** SENTINEL REPLICAS of the first Sentinel: address -> flags. */
async function replicaFlags(s: TopologyNode, master: string): Promise<Record<string, string>> {
  const c = await client(s);
  try {
    const reply = (await c.call("SENTINEL", "REPLICAS", master)) as string[][];
    return Object.fromEntries(
      reply.map((fields) => {
        const m = new Map<string, string>();
        for (let i = 0; i + 1 < fields.length; i += 2) m.set(fields[i] as string, fields[i + 1] as string);
        return [`${m.get("ip")}:${m.get("port")}`, m.get("flags") ?? ""];
      }),
    );
  } finally {
    c.disconnect();
  }
}

describe("a full restart with the replicas back first (real processes)", () => {
  it("the old primary keeps its role and its last writes: restarted, never-linked replicas are not handed the primary", async () => {
    t = await SentinelTopology.start({
      replicas: 2,
      zones: ["a", "b", "c"],
      downAfterMs: 2000,
      failoverTimeoutMs: 6000,
      password: PASSWORD,
      proxy: false,
      hostBase: 130,
    });
    const topology = t;
    const primary = topology.member(await topology.primaryFromSentinels());
    const [a, b] = topology.members.filter((m) => m !== primary);
    const sentinel = topology.sentinels[0];
    if (a === undefined || b === undefined || sentinel === undefined) throw new Error("no two replicas and a Sentinel");

    await killHard(a.proc);
    const c = await client(primary);
    try {
      for (let i = 0; i < KEYS; i++) await c.set(`only-on-primary:${i}`, String(i));
      expect(await c.call("WAIT", "1", "2000")).toBe(1);
    } finally {
      c.disconnect();
    }
    await killHard(b.proc);
    await killHard(primary.proc);
    // The Sentinels' own failover comes at o_down and aborts (no replica up); none tries again for
    // 2 × failover-timeout. Only then A restarts: what follows is the start script's decision alone.
    await pollUntil(
      async () => {
        const flags = await masterFlags(sentinel, topology.masterName);
        return flags.includes("o_down") && !flags.includes("failover_in_progress") ? true : flags;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: "the Sentinels' first failover to abort" },
    );

    await topology.startMember(a.ordinal);
    await pollUntil(
      async () => {
        const flags = (await replicaFlags(sentinel, topology.masterName))[a.address] ?? "";
        return flags === "slave" ? true : `A's flags: ${flags || "unknown"}`;
      },
      { timeoutMs: 20_000, intervalMs: 200, what: "the Sentinels to see the restarted replica up" },
    );
    await topology.startMember(primary.ordinal);

    // Handed over, A would be named instead (and the keys gone with the old primary's full resync).
    await pollUntil(
      async () => {
        const named = await topology.primaryFromSentinels();
        return named === primary.address ? true : `they name ${named} (A is ${a.address})`;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: `the Sentinels to name the old primary ${primary.address}` },
    );
    await waitForReplicaLinks([a], PASSWORD, 60_000);
    expect(await topology.primaryFromSentinels()).toBe(primary.address);
    const after = await client(primary);
    try {
      const values = await Promise.all(Array.from({ length: KEYS }, (_, i) => after.get(`only-on-primary:${i}`)));
      expect(values.filter((v) => v === null).length).toBe(0);
    } finally {
      after.disconnect();
    }
    expect(primary.proc?.stderr()).toMatch(/starting as (primary|the primary)/);
  }, 180_000);
});
