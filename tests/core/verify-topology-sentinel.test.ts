/**
 * `vbench verify --sentinel` against real processes: 1 primary + 2 replicas started by the
 * rendered start script and 3 real Sentinels (quorum 2), password set. Healthy through the
 * library and the CLI; one Sentinel killed still passes; two killed fail SENTINEL_QUORUM;
 * SENTINEL_SAME_ZONE from a zone map; SENTINEL_DISAGREE from a Sentinel re-pointed at a
 * replica; SENTINEL_REPLICA_DOWN from each Sentinel's real SENTINEL REPLICAS (and stale views of it);
 * SENTINEL_REPLICA_PRIORITY from a replica set to replica-priority 1; usage /
 * connection errors exit 2.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killHard, SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { freePort } from "../../harness/local/ports.js";
import { DirectConnector, openClient } from "../../core/topology/connector.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { analyseSentinels, collectSentinels } from "../../core/verify/sentinel-analysis.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import { failureCodes, runVbench, zoneFile } from "../support/verify-helpers.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const env = { SENTINEL_TEST_PW: password };

describe("verify --sentinel on real valkey-server and Sentinel processes", () => {
  let t: SentinelTopology;
  const connector = new DirectConnector({ password, connectTimeoutMs: 1000, commandTimeoutMs: 1000 });
  const verify = (zones?: Record<string, string>): Promise<TopologyReport> =>
    verifyTopology({
      mode: "replication",
      seeds: [],
      connector,
      zones: zones === undefined ? undefined : new StaticZoneSource(zones),
      expect: { replicas: 2 },
      sentinel: { endpoints: t.sentinelEndpoints, masterName: t.masterName, connector },
    });
  const sentinelList = (): string => t.sentinels.map((s) => s.address).join(",");
  const cli = (...args: string[]) =>
    runVbench(
      ["verify", "--mode", "replication", "--sentinel", sentinelList(), "--password-env", "SENTINEL_TEST_PW", ...args],
      env,
    );

  beforeAll(async () => {
    t = await SentinelTopology.start({
      replicas: 2,
      zones: ["a", "b", "c"],
      password,
      downAfterMs: 1000,
      failoverTimeoutMs: 3000,
      proxy: false,
    });
  }, 120_000);
  afterAll(async () => t?.stopAll());

  it("healthy: the primary is discovered from the Sentinels, every Sentinel agrees, zone checks pass", async () => {
    const r = await verify(t.zoneMap);
    expect(r.failures).toEqual([]);
    expect(r).toMatchObject({
      ok: true,
      seed: t.members[0]!.address,
      masterName: t.masterName,
      nodeCount: 3,
      zoneCheck: "checked",
    });
    expect(r.sentinels).toEqual(
      t.sentinels.map((s): unknown =>
        expect.objectContaining({
          address: s.address,
          zone: s.zone,
          reachable: true,
          agrees: true,
          primary: t.members[0]!.address,
          quorum: 2,
        }),
      ),
    );
  });

  it("CLI: exit 0 with the Sentinels in the table and the JSON; the default master name is the stack's", async () => {
    const zones = zoneFile(t.zoneMap);
    const text = await cli("--zones", zones);
    expect(text.stderr).toBe("");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`=== Sentinels (master name ${t.masterName}) ===`);
    for (const s of t.sentinels) expect(text.stdout).toContain(`SENTINEL ${s.address}  ${s.zone}  agrees ✓`);
    const json = await cli("--zones", zones, "--json");
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as TopologyReport;
    expect(report.sentinels?.map((s) => [s.address, s.zone, s.agrees])).toEqual(
      t.sentinels.map((s) => [s.address, s.zone, true]),
    );
    expect((await runVbench(["verify", "--help"])).stdout).toContain(`(default: "${t.masterName}")`);
  });

  it("two Sentinels in one zone: SENTINEL_SAME_ZONE; a Sentinel missing from the map: ZONE_UNKNOWN", async () => {
    const [s0, s1, s2] = t.sentinels;
    const r = await verify({ ...t.zoneMap, [s1!.address]: s0!.zone });
    expect(r.failures).toEqual([expect.objectContaining({ code: "SENTINEL_SAME_ZONE", node: s1!.address })]);
    const missing = { ...t.zoneMap };
    delete missing[s2!.address];
    expect(failureCodes(await verify(missing))).toEqual(["ZONE_UNKNOWN"]);
  });

  it("one Sentinel killed: still passes (2 of 3 reachable, quorum 2); two killed: SENTINEL_QUORUM, exit 1", async () => {
    const [s0, s1] = t.sentinels;
    await killHard(s0!.proc);
    try {
      const one = await verify(t.zoneMap);
      expect(one.failures).toEqual([]);
      expect(one.sentinels!.find((s) => s.address === s0!.address)).toMatchObject({ reachable: false, agrees: false });
      expect(one.sentinels!.filter((s) => s.agrees)).toHaveLength(2);
      await killHard(s1!.proc);
      const two = await verify(t.zoneMap);
      expect(failureCodes(two)).toEqual(["SENTINEL_QUORUM"]);
      expect(two.failures[0]!.message).toContain("only 1 of 3 Sentinels reachable, quorum is 2");
      const c = await cli("--json");
      expect(c.code).toBe(1);
      expect(failureCodes(JSON.parse(c.stdout) as TopologyReport)).toEqual(["SENTINEL_QUORUM"]);
    } finally {
      for (const s of [s0!, s1!]) if (!s.proc?.alive()) await t.startSentinel(t.sentinels.indexOf(s));
    }
    await t.waitForSentinelViews();
    // Their state survived the restart: the file Sentinel rewrote (known replicas and peers) was kept, not re-rendered.
    const state = readFileSync(join(s0!.proc!.dir, "sentinel.conf"), "utf8");
    expect(state).toMatch(new RegExp(`sentinel known-replica ${t.masterName} `));
    expect(state).toMatch(new RegExp(`sentinel known-sentinel ${t.masterName} `));
    expect(statSync(join(s0!.proc!.dir, "sentinel.conf")).mode & 0o777).toBe(0o600);
    // Restarted Sentinels keep their state; their peers count them usable again within seconds.
    await pollUntil(
      async () => {
        const r = await verify(t.zoneMap);
        return r.ok ? true : r.failures.map((f) => f.message).join("; ");
      },
      { timeoutMs: 15_000, intervalMs: 250, what: "the verifier to pass again with 3 Sentinels" },
    );
  }, 60_000);

  it("every Sentinel's SENTINEL REPLICAS is read as announced host:port with flags; one that does not see a linked replica up is SENTINEL_REPLICA_DOWN", async () => {
    const caps = await collectSentinels(connector, t.sentinelEndpoints, t.masterName);
    const replicas = [t.members[1]!.address, t.members[2]!.address].sort();
    for (const c of caps) {
      expect((c.replicas ?? []).map((r) => r.address).sort(), c.address).toEqual(replicas);
      for (const r of c.replicas ?? []) {
        expect(r.flags, `${c.address} sees ${r.address}`).toBe("slave");
        expect(r.link, `${c.address}'s view of ${r.address}`).toMatch(
          /^last ok ping reply \d+ ms ago, \d+ commands pending on its link, the replica last reported its link to the primary ok$/,
        );
      }
    }
    expect(analyseSentinels(caps, t.masterName, undefined, replicas).failures.items).toEqual([]);
    // What a Sentinel shows while a replica's pod came back on an IP it has not resolved yet, and one it never learned.
    const stale = caps.map((c, i) =>
      i === 0
        ? {
            ...c,
            replicas: (c.replicas ?? []).map((r) =>
              r.address === replicas[0] ? { ...r, flags: "s_down,slave,disconnected" } : r,
            ),
          }
        : i === 1
          ? { ...c, replicas: [] }
          : c,
    );
    const failures = analyseSentinels(stale, t.masterName, undefined, replicas).failures.items;
    expect(failures[0]?.message).toContain(`; its view: last ok ping reply`);
    expect(failures.map((f) => [f.code, f.node, f.message.replace(/ \(a failover.*$/, "")])).toEqual([
      [
        "SENTINEL_REPLICA_DOWN",
        caps[0]!.address,
        `Sentinel ${caps[0]!.address} flags it s_down,slave,disconnected: replica ${replicas[0]}`,
      ],
      [
        "SENTINEL_REPLICA_DOWN",
        caps[1]!.address,
        `Sentinel ${caps[1]!.address} does not know it: replica ${replicas[0]}`,
      ],
      [
        "SENTINEL_REPLICA_DOWN",
        caps[1]!.address,
        `Sentinel ${caps[1]!.address} does not know it: replica ${replicas[1]}`,
      ],
    ]);
  });

  it("a replica left at replica-priority 1 (a switchover's steering not given back): SENTINEL_REPLICA_PRIORITY naming it and the CONFIG SET that mends it; given back, the verdict is clean again", async () => {
    const steered = t.members[1]!;
    const setPriority = (p: string): Promise<void> => t.configSet(steered, "replica-priority", p);
    const priorityFailures = async () =>
      (await verify()).failures.filter((f) => f.code === "SENTINEL_REPLICA_PRIORITY");
    await setPriority("1");
    try {
      // Each Sentinel learns it from its next INFO of the replica.
      await pollUntil(async () => ((await priorityFailures()).length > 0 ? true : "not flagged yet"), {
        timeoutMs: 15_000,
        what: "SENTINEL_REPLICA_PRIORITY",
      });
      const [f, ...more] = await priorityFailures();
      expect(more).toEqual([]);
      expect(f?.node).toBe(steered.address);
      expect(f?.message).toMatch(
        new RegExp(
          `sees replica ${steered.address.replace(/\./g, "\\.")} at replica-priority 1 and the other promotable replicas at 100: a failover picks it whatever its replication offset .*CONFIG SET replica-priority 100`,
        ),
      );
    } finally {
      await setPriority("100");
    }
    await pollUntil(async () => ((await priorityFailures()).length === 0 ? true : "still flagged"), {
      timeoutMs: 15_000,
      what: "SENTINEL_REPLICA_PRIORITY to clear",
    });
    expect((await verify()).ok).toBe(true);
  }, 60_000);

  it("wrong Sentinel password, or no Sentinel reachable: exit 2, one line, password never echoed", async () => {
    const wrong = await cli("--sentinel-password-env", "SENTINEL_OTHER_PW");
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toBe(
      "vbench: --sentinel-password-env SENTINEL_OTHER_PW: environment variable SENTINEL_OTHER_PW is not set\n",
    );
    const bad = await runVbench(
      [
        "verify",
        "--mode",
        "replication",
        "--sentinel",
        sentinelList(),
        "--password-env",
        "SENTINEL_TEST_PW",
        "--sentinel-password-env",
        "SENTINEL_OTHER_PW",
      ],
      { ...env, SENTINEL_OTHER_PW: "not-it" },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^vbench: cannot reach .*no Sentinel answered: .*authentication failed.*\n$/);
    expect(bad.stderr).not.toContain("not-it");
    const dead = await freePort();
    const none = await runVbench(["verify", "--mode", "replication", "--sentinel", `127.0.0.1:${dead}`], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      new RegExp(`^vbench: cannot reach 127\\.0\\.0\\.1:${dead}: no Sentinel answered: .+\\n$`),
    );
    const cluster = await runVbench(["verify", "--mode", "cluster", "--sentinel", sentinelList()]);
    expect([cluster.code, cluster.stderr]).toEqual([
      2,
      "vbench: verify: --sentinel works with --mode replication only\n",
    ]);
  });

  it("a Sentinel that names another primary: SENTINEL_DISAGREE (the majority's primary is checked)", async () => {
    const s2 = t.sentinels[2]!;
    const replica = t.members[1]!;
    const c = await openClient(s2.host, s2.port, s2.address, { password });
    try {
      await c.call("SENTINEL", "REMOVE", t.masterName);
      await c.call("SENTINEL", "MONITOR", t.masterName, replica.host, String(replica.port), "2");
    } finally {
      c.disconnect();
    }
    const r = await verify(t.zoneMap);
    const disagree = r.failures.filter((f) => f.code === "SENTINEL_DISAGREE");
    expect(disagree).toHaveLength(1);
    expect(disagree[0]!.message).toContain(`${s2.address} -> ${replica.address}`);
    // REMOVE also made it forget its peers: until it hears their hellos again its own CKQUORUM may fail.
    for (const f of r.failures.filter((x) => x.code !== "SENTINEL_DISAGREE"))
      expect([f.code, f.node]).toEqual(["SENTINEL_QUORUM", s2.address]);
    expect(r.seed).toBe(t.members[0]!.address);
    expect(r.sentinels!.find((s) => s.address === s2.address)).toMatchObject({
      agrees: false,
      primary: replica.address,
    });
  });
});
