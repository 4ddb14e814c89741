/**
 * After every member crashed, replicas that restarted before the old primary do not get its role
 * (real processes, the rendered start script, 3 Sentinels, down-after 2 s, failover-timeout 6 s).
 * Found on real pods under CPU load: in an `all` drill the replicas came back first, the old
 * primary's start script counted them as live replicas, handed over, and the Sentinels promoted one
 * whose AOF lacked the last writes: 24 WAIT-confirmed writes lost.
 *
 * Two cases (1 primary, replicas A and B; A killed, keys written and acknowledged by B, then B and
 * the primary gone, as a sequence of crashes leaves them):
 * 1. The Sentinels' first failover aborts (no replica up), A restarts and is seen up, then the
 *    primary restarts: A reports master-link-down-time -1000 (never linked since its start), so the
 *    start script does not count it as live and the old primary serves its data.
 * 2. B frozen (its connections stay open, as a dead pod's do: the Sentinels show it linked until
 *    down-after), the primary restarted at once: its start script begins by handing over to B, and
 *    once B is down and only the restarted A is up it serves its data instead of asking for a
 *    failover to A (the path of the real-pod failure).
 * 3. Two of the three Sentinels stalled ≥ 2 s (SIGSTOP), so they enter TILT as B freezes and the
 *    primary dies: for 30 s they change no flag and show B up and linked. The restarted A is seen
 *    up by the third, then the primary restarts: its start script leaves the Sentinels in TILT out,
 *    counts no live replica and serves its data; it does not ask the third Sentinel for a failover,
 *    which would promote A (what lost 13 WAIT-confirmed writes on real pods). The verifier reads the
 *    same TILT and names it in SENTINEL_REPLICA_DOWN (their frozen views still flag A down).
 * 4. Every member down and A back first, seen up (never linked) by the Sentinels: its start script
 *    gave it replica-priority 0, so their own failover at o_down aborts (no good replica) instead of
 *    selecting A; the old primary comes back; A syncs and takes priority 100 back.
 * Each time the Sentinels name the old primary, A syncs from it, every key is there. With a check
 * removed (mutations: the master-link-down-time rule, the re-check in the hand-over wait, the TILT
 * rule, the replica-priority 0 line) the Sentinels select or name A and the test fails.
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { DirectConnector, openClient } from "../../core/topology/connector.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { analyseSentinels, collectSentinels } from "../../core/verify/sentinel-analysis.js";
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

/** SENTINEL REPLICAS of `s`: address -> that replica's fields. */
async function sentinelReplicas(s: TopologyNode, master: string): Promise<Map<string, Map<string, string>>> {
  const c = await client(s);
  try {
    const reply = (await c.call("SENTINEL", "REPLICAS", master)) as string[][];
    return new Map(
      reply.map((fields) => {
        const m = new Map<string, string>();
        for (let i = 0; i + 1 < fields.length; i += 2) m.set(fields[i] as string, fields[i + 1] as string);
        return [`${m.get("ip")}:${m.get("port")}`, m];
      }),
    );
  } finally {
    c.disconnect();
  }
}

/** SENTINEL REPLICAS of `s`: address -> flags. */
async function replicaFlags(s: TopologyNode, master: string): Promise<Record<string, string>> {
  const replicas = await sentinelReplicas(s, master);
  return Object.fromEntries([...replicas].map(([address, m]) => [address, m.get("flags") ?? ""]));
}

/** SENTINEL REPLICAS of `s`: the fields of `replica` (empty when it does not know it). */
async function replicaFields(s: TopologyNode, master: string, replica: { address: string }) {
  return (await sentinelReplicas(s, master)).get(replica.address) ?? new Map<string, string>();
}

/** Every event the Sentinels publish from now on (channel, payload, when). */
async function sentinelEvents(topology: SentinelTopology) {
  const events: { at: number; channel: string; payload: string }[] = [];
  const subs = await Promise.all(
    topology.sentinels.map(async (s) => {
      const sub = new Redis({ host: s.host, port: s.port, password: PASSWORD, lazyConnect: true });
      sub.on("error", () => undefined);
      await sub.connect();
      sub.on("pmessage", (_p: string, channel: string, payload: string) =>
        events.push({ at: Date.now(), channel, payload }),
      );
      await sub.psubscribe("*");
      return sub;
    }),
  );
  return { events, close: () => subs.forEach((s) => s.disconnect()) };
}

/** Primary and replicas A, B; A killed, then KEYS written to the primary and acknowledged by B. */
async function keysOnlyBHas(topology: SentinelTopology) {
  const primary = topology.member(await topology.primaryFromSentinels());
  const [a, b] = topology.members.filter((m) => m !== primary);
  const sentinel = topology.sentinels[0];
  if (a === undefined || b === undefined || sentinel === undefined) throw new Error("no two replicas and a Sentinel");
  await killHard(a.proc);
  const c = await client(primary);
  try {
    for (let i = 0; i < KEYS; i++) await c.set(`only-on-primary:${i}`, String(i));
    expect(await c.call("WAIT", "1", "2000")).toBe(1);
    // The keys written to its AOF file before it is killed: behind a slow fsync (a loaded machine)
    // the server holds its AOF buffer up to 2 s and a SIGKILL loses it (aof-held-buffer.test.ts).
    // These tests are about the start decision, not that window, so they wait for the write.
    await pollUntil(
      async () => {
        const held = /aof_buffer_length:(\d+)/.exec(String(await c.info("persistence")))?.[1];
        return held === "0" ? true : `aof_buffer_length ${held ?? "absent"}`;
      },
      { timeoutMs: 10_000, intervalMs: 50, what: "the primary to write its AOF buffer" },
    );
  } finally {
    c.disconnect();
  }
  return { primary, a, b, sentinel };
}

/** The Sentinels' own first failover (at o_down) has aborted: none tries again for 2 × failover-timeout. */
async function firstFailoverAborted(sentinel: TopologyNode, master: string): Promise<void> {
  await pollUntil(
    async () => {
      const flags = await masterFlags(sentinel, master);
      return flags.includes("o_down") && !flags.includes("failover_in_progress") ? true : flags;
    },
    { timeoutMs: 20_000, intervalMs: 100, what: "the Sentinels' first failover to abort" },
  );
}

/** Polls until `sentinel`'s flags for `replica` are `slave` (up), or carry s_down (down). */
async function seenBy(
  sentinel: TopologyNode,
  master: string,
  replica: { address: string },
  state: "up" | "down",
): Promise<void> {
  await pollUntil(
    async () => {
      const flags = (await replicaFlags(sentinel, master))[replica.address] ?? "";
      const ok = state === "up" ? flags === "slave" : flags.includes("s_down");
      return ok ? true : `its flags: ${flags || "unknown"}`;
    },
    { timeoutMs: 20_000, intervalMs: 200, what: `${sentinel.address} to see ${replica.address} ${state}` },
  );
}
const upInSentinel = (sentinel: TopologyNode, master: string, replica: { address: string }) =>
  seenBy(sentinel, master, replica, "up");

/** The Sentinels name the old primary again, A is its replica, and every key is there. */
async function expectOldPrimaryKept(
  topology: SentinelTopology,
  primary: { address: string; host: string; port: number },
  a: { address: string; host: string; port: number },
) {
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
}

const start = () =>
  SentinelTopology.start({
    replicas: 2,
    zones: ["a", "b", "c"],
    downAfterMs: 2000,
    failoverTimeoutMs: 6000,
    password: PASSWORD,
    proxy: false,
    hostBase: 130,
  });

describe("a full restart with the replicas back first (real processes)", () => {
  it("the old primary keeps its role and its last writes when it began deciding while the Sentinels still showed a replica linked (a frozen one, as a dead pod's open connection looks)", async () => {
    t = await start();
    const topology = t;
    const { primary, a, b, sentinel } = await keysOnlyBHas(topology);
    // B frozen, not killed: its connections stay open, so the Sentinels show it linked until
    // down-after, as they show a pod whose node dropped it without a reset. The primary killed and
    // restarted at once: its start script begins by handing over to B.
    b.proc?.signal("SIGSTOP");
    await killHard(primary.proc);
    const restarting = topology.startMember(primary.ordinal);
    restarting.catch(() => undefined);
    await pollUntil(
      async () =>
        ((await replicaFlags(sentinel, topology.masterName))[b.address] ?? "").includes("s_down")
          ? true
          : "B not s_down yet",
      { timeoutMs: 20_000, intervalMs: 100, what: "the Sentinels to see the frozen replica down" },
    );
    await topology.startMember(a.ordinal);
    await restarting;
    await expectOldPrimaryKept(topology, primary, a);
    expect(primary.proc?.stderr()).toMatch(/the replicas restarted too/);
    b.proc?.signal("SIGCONT");
  }, 180_000);

  it("the old primary keeps its role and its last writes when two Sentinels in TILT still show a dead replica linked: their views are left out and the third is not asked for a failover", async () => {
    t = await start();
    const topology = t;
    const master = topology.masterName;
    const { primary, a, b } = await keysOnlyBHas(topology);
    const [s0, s1, s2] = topology.sentinels;
    if (s0 === undefined || s1 === undefined || s2 === undefined) throw new Error("three Sentinels expected");
    // Their views before the stall: A down (killed by keysOnlyBHas), B up and linked.
    for (const s of [s0, s1]) await seenBy(s, master, a, "down");
    const connector = new DirectConnector({ password: PASSWORD, connectTimeoutMs: 1000, commandTimeoutMs: 1000 });
    const tilts = async () =>
      (await collectSentinels(connector, topology.sentinelEndpoints, master)).map((c) => c.tilt === true);
    await pollUntil(
      async () => ((await tilts()).join() === "false,false,false" ? true : `TILT: ${(await tilts()).join()}`),
      {
        timeoutMs: 40_000,
        intervalMs: 500,
        what: "no Sentinel in TILT before the stall",
      },
    );
    // The stall: a Sentinel's timer that runs more than 2 s late enters TILT (sentinel.c,
    // sentinelCheckTiltCondition), so the hold is a duration by nature. B frozen keeps its links
    // open (as a dead pod's do); the primary dies.
    s0.proc?.signal("SIGSTOP");
    s1.proc?.signal("SIGSTOP");
    b.proc?.signal("SIGSTOP");
    await killHard(primary.proc);
    await new Promise((r) => setTimeout(r, 3000));
    s0.proc?.signal("SIGCONT");
    s1.proc?.signal("SIGCONT");
    await pollUntil(
      async () => ((await tilts()).join() === "true,true,false" ? true : `TILT: ${(await tilts()).join()}`),
      {
        timeoutMs: 10_000,
        intervalMs: 200,
        what: "the two stalled Sentinels to report sentinel_tilt:1",
      },
    );
    await seenBy(s2, master, b, "down");
    // A restarts (a replica of the old primary, never linked); the third Sentinel sees it up and,
    // from its INFO (read every second), unpromotable (replica-priority 0 until its first sync); the
    // two in TILT keep it s_down: the verifier names their TILT, and the third's reason is the priority.
    await topology.startMember(a.ordinal);
    await upInSentinel(s2, master, a);
    await pollUntil(
      async () => ((await replicaFields(s2, master, a)).get("slave-priority") === "0" ? true : "not re-read yet"),
      { timeoutMs: 10_000, intervalMs: 100, what: `${s2.address} to read the restarted A's replica-priority 0` },
    );
    const caps = await collectSentinels(connector, topology.sentinelEndpoints, master);
    const down = analyseSentinels(caps, master, undefined, [a.address]).failures.items;
    expect(down.map((f) => [f.code, f.node])).toEqual([
      ["SENTINEL_REPLICA_DOWN", s0.address],
      ["SENTINEL_REPLICA_DOWN", s1.address],
      ["SENTINEL_REPLICA_DOWN", s2.address],
    ]);
    for (const f of down.slice(0, 2))
      expect(f.message).toMatch(/; the Sentinel is in TILT \(its flags stay as they were/);
    expect(down[2]?.message).toMatch(/sees replica-priority 0/);
    expect(down[2]?.message).not.toMatch(/TILT/);
    expect((await replicaFlags(s0, master))[b.address]).toBe("slave");
    // Still inside their 30 s of TILT, the primary restarts.
    await topology.startMember(primary.ordinal);
    expect((await tilts()).slice(0, 2)).toEqual([true, true]);
    await expectOldPrimaryKept(topology, primary, a);
    expect(primary.proc?.stderr()).toMatch(/2 Sentinel\(s\) in TILT left out/);
    expect(primary.proc?.stderr()).not.toMatch(/SENTINEL FAILOVER via/);
    b.proc?.signal("SIGCONT");
  }, 180_000);

  it("the Sentinels' own failover at o_down does not promote a restarted replica before its first sync (replica-priority 0 until then), and it takes its priority back once synced", async () => {
    t = await start();
    const topology = t;
    const master = topology.masterName;
    const { primary, a, b, sentinel } = await keysOnlyBHas(topology);
    const watch = await sentinelEvents(topology);
    try {
      // Every member down; A comes back first, a replica of the old primary that is not there.
      await killHard(b.proc);
      await killHard(primary.proc);
      await topology.startMember(a.ordinal);
      // The Sentinels read A's INFO since its restart: up, never linked (-1000 ms).
      await pollUntil(
        async () => {
          const f = await replicaFields(sentinel, master, a);
          return f.get("flags") === "slave" && f.get("master-link-down-time") === "-1000"
            ? true
            : `flags ${f.get("flags")}, master-link-down-time ${f.get("master-link-down-time")}`;
        },
        { timeoutMs: 20_000, intervalMs: 100, what: "the Sentinels to read the restarted A's INFO" },
      );
      expect((await replicaFields(sentinel, master, a)).get("slave-priority")).toBe("0");
      // A failover attempt that selects a replica from now on: an abort (no good replica) is the
      // outcome wanted; a selection of A would hand it the primary role and lose the keys only B had.
      const from = Date.now();
      const outcome = () =>
        watch.events.find(
          (e) => e.at >= from && (e.channel === "-failover-abort-no-good-slave" || e.channel === "+selected-slave"),
        );
      await pollUntil(() => Promise.resolve(outcome() === undefined ? "no failover attempt has selected yet" : true), {
        timeoutMs: 40_000,
        intervalMs: 200,
        what: "the Sentinels' next failover attempt to select a replica or abort",
      });
      expect(outcome()?.channel, JSON.stringify(outcome())).toBe("-failover-abort-no-good-slave");
      await topology.startMember(primary.ordinal);
      await expectOldPrimaryKept(topology, primary, a);
      expect(watch.events.filter((e) => e.channel === "+selected-slave")).toEqual([]);
    } finally {
      watch.close();
    }
    // Synced, A takes its priority back, and the Sentinels read it.
    await pollUntil(
      async () => {
        const p = (await replicaFields(sentinel, master, a)).get("slave-priority");
        return p === "100" ? true : `slave-priority ${p}; A's log: ${a.proc?.stderr() ?? ""}`;
      },
      { timeoutMs: 20_000, intervalMs: 250, what: "the Sentinels to read A's released priority" },
    );
    expect(a.proc?.stderr()).toMatch(/first sync since this start done: CONFIG SET replica-priority 100 .*: OK/);
  }, 180_000);

  it("the old primary keeps its role and its last writes: restarted, never-linked replicas are not handed the primary", async () => {
    t = await start();
    const { primary, a, b, sentinel } = await keysOnlyBHas(t);
    await killHard(b.proc);
    await killHard(primary.proc);
    await firstFailoverAborted(sentinel, t.masterName);
    await t.startMember(a.ordinal);
    await upInSentinel(sentinel, t.masterName, a);
    await t.startMember(primary.ordinal);
    await expectOldPrimaryKept(t, primary, a);
    expect(primary.proc?.stderr()).toMatch(/starting as (primary|the primary)/);
  }, 180_000);
});
