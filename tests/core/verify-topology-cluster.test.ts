/**
 * The verifier against a real 3x1 cluster (password set): healthy through the library and
 * the CLI, then zone-map, expectation and reversible slot breakage, and last a real
 * re-pairing of every replica onto its own zone's primary.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { DirectConnector, openClient } from "../../core/topology/connector.js";
import { parseInfo } from "../../core/topology/info.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import { failureCodes, runVbench, zoneFile } from "../support/verify-helpers.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const zones = ["us-west-2a", "us-west-2b", "us-west-2c"];

describe("verify: cluster mode on real valkey-server processes", () => {
  const fleet = new LocalFleet();
  let cluster: LocalCluster;
  const connector = new DirectConnector({ password });
  const seedArg = (): string => cluster.seed.address;
  const verify = (
    zoneMap: Record<string, string> | undefined,
    expect?: { primaries?: number; replicasPerPrimary?: number },
  ): Promise<TopologyReport> =>
    verifyTopology({
      mode: "cluster",
      seeds: [cluster.seed],
      connector,
      zones: zoneMap && new StaticZoneSource(zoneMap),
      expect,
    });
  const run = (...args: string[]) =>
    runVbench(["verify", "--mode", "cluster", "--seed", seedArg(), "--password-env", "VERIFY_TEST_PW", ...args], {
      VERIFY_TEST_PW: password,
    });
  const client = (p: { host: string; port: number; address: string }) =>
    openClient(p.host, p.port, p.address, { password });

  beforeAll(async () => {
    cluster = await startLocalCluster(fleet, { primaries: 3, replicasPerPrimary: 1, zones, password });
    const c = await client(cluster.primaries[0]!);
    await c.set("{bar}k1", "v");
    await c.set("{bar}k2", "v");
    c.disconnect();
  });
  afterAll(() => fleet.stopAll());

  it("a healthy 3x1 cluster passes, with slots, keys and cross-AZ pairs", async () => {
    // A second, unreachable seed listed first: discovery moves on to the next.
    const r = await verifyTopology({
      mode: "cluster",
      seeds: [{ host: "127.0.0.1", port: 1 }, cluster.seed],
      connector,
      zones: new StaticZoneSource(cluster.zoneMap),
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
    expect(r.shards.map((s) => s.primary.address)).toEqual(cluster.primaries.map((p) => p.address));
    expect(r.shards.map((s) => s.primary.slotRanges)).toEqual([["0-5460"], ["5461-10921"], ["10922-16383"]]);
    expect(r.shards.map((s) => s.primary.keys)).toEqual([2, 0, 0]); // "bar" hashes to slot 5061
    expect(r.shards.reduce((n, s) => n + (s.primary.keys ?? 0), 0)).toBe(2);
    for (const s of r.shards) {
      expect(s.replicas.map((x) => x.address)).toEqual(
        cluster.replicasOf.get(s.primary.address)?.map((x) => x.address),
      );
      expect(s.replicas.every((x) => x.crossAz && x.linkUp && x.nodeId === cluster.nodeIds[x.address])).toBe(true);
    }
    expect(r.primariesPerZone).toEqual({ "us-west-2a": 1, "us-west-2b": 1, "us-west-2c": 1 });
  });

  it("CLI: exit 0 with the human table, and --json with the report shape", async () => {
    const zonesPath = zoneFile(cluster.zoneMap);
    const text = await run("--zones", zonesPath, "--expect-primaries", "3", "--expect-replicas-per-primary", "1");
    expect(text.stderr).toBe("");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("cluster_state:ok");
    expect(text.stdout).toMatch(/PRIMARY 127\.0\.0\.1:\d+ {2}us-west-2\w {2}slots 0-5460 \(5461\)/);
    expect(text.stdout).toContain("cross-AZ ✓");
    expect(text.stdout).toContain("VERIFY: PASS");
    const json = await run("--zones", zonesPath, "--json");
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout) as TopologyReport;
    expect(Object.keys(body).slice(0, 3)).toEqual(["ok", "mode", "failures"]);
    expect(body).toMatchObject({ ok: true, mode: "cluster", failures: [], nodeCount: 6 });
    expect(body.shards).toHaveLength(3);
  });

  it("without a zone source the zone checks are skipped, not failed", async () => {
    const r = await verify(undefined);
    expect(r.ok).toBe(true);
    expect(r.zoneCheck).toBe("skipped");
    expect(r.notes?.join("\n")).toContain("zone checks skipped");
    expect(r.shards[0]?.primary.zone).toBeUndefined();
  });

  it("zone map edits: same-zone replica, 2 of 3 primaries in one zone, missing zone", async () => {
    const [p1, p2] = cluster.primaries;
    const r1 = cluster.replicasOf.get(p1!.address)![0]!;
    const same = await verify({ ...cluster.zoneMap, [r1.address]: cluster.zoneMap[p1!.address]! });
    expect(same.failures).toEqual([expect.objectContaining({ code: "NO_CROSS_AZ_REPLICA", node: p1!.address })]);
    expect(same.shards[0]?.replicas[0]?.crossAz).toBe(false);

    const majority = await verify({ ...cluster.zoneMap, [p2!.address]: cluster.zoneMap[p1!.address]! });
    expect(failureCodes(majority)).toContain("AZ_PRIMARY_MAJORITY");
    expect(majority.failures.find((f) => f.code === "AZ_PRIMARY_MAJORITY")?.message).toMatch(/holds 2 of 3 primaries/);

    const missing: Record<string, string> = { ...cluster.zoneMap };
    delete missing[r1.address];
    const unknown = await verify(missing);
    expect(unknown.failures).toEqual([expect.objectContaining({ code: "ZONE_UNKNOWN", node: r1.address })]);

    const cli = await run("--zones", zoneFile(missing));
    expect(cli.code).toBe(1);
    expect(cli.stdout).toContain("ZONE_UNKNOWN");
    expect(cli.stderr).toMatch(/^vbench: topology verification failed: ZONE_UNKNOWN\n$/);
  });

  it("wrong expectations: SHAPE_MISMATCH (exit 1 through the CLI)", async () => {
    const r = await verify(cluster.zoneMap, { primaries: 4, replicasPerPrimary: 2 });
    expect(failureCodes(r)).toEqual(["SHAPE_MISMATCH"]);
    expect(r.failures.filter((f) => f.node !== undefined)).toHaveLength(3);
    const cli = await run("--expect-primaries", "2", "--json");
    expect(cli.code).toBe(1);
    const body = JSON.parse(cli.stdout) as TopologyReport;
    expect(body.ok).toBe(false);
    expect(body.failures).toEqual([{ code: "SHAPE_MISMATCH", message: "expected 2 primaries, found 3" }]);
  });

  it("100 slots deleted on their owner: SLOTS_UNASSIGNED + CLUSTER_STATE_NOT_OK; healthy again once re-added", async () => {
    const owner = cluster.primaries[1]!; // not the seed: the seed's own view still lists the slots
    const c = await client(owner);
    try {
      await c.call("CLUSTER", "DELSLOTSRANGE", "6000", "6099");
      await pollUntil(
        async () =>
          parseInfo((await c.call("CLUSTER", "INFO")) as string).get("cluster_state") === "fail" ? true : "state ok",
        {
          timeoutMs: 10_000,
          what: "cluster_state:fail on the owner",
        },
      );
      const r = await verify(cluster.zoneMap);
      expect(failureCodes(r)).toEqual(expect.arrayContaining(["CLUSTER_STATE_NOT_OK", "SLOTS_UNASSIGNED"]));
      const unassigned = r.failures.find((f) => f.code === "SLOTS_UNASSIGNED");
      expect(unassigned?.node).toBeDefined();
      expect(r.failures.find((f) => f.code === "CLUSTER_STATE_NOT_OK")?.message).toContain("cluster_state:fail");
      const cli = await run("--zones", zoneFile(cluster.zoneMap));
      expect(cli.code).toBe(1);
      expect(cli.stdout).toContain("VERIFY: FAIL");
    } finally {
      await c.call("CLUSTER", "ADDSLOTSRANGE", "6000", "6099");
      c.disconnect();
    }
    await pollUntil(async () => ((await verify(cluster.zoneMap)).ok ? true : "not yet healthy"), {
      timeoutMs: 20_000,
      what: "the cluster to heal",
    });
  });

  it("last: every replica re-paired (CLUSTER REPLICATE) onto its own zone's primary → NO_CROSS_AZ_REPLICA for every primary", async () => {
    const byZone = new Map(cluster.primaries.map((p) => [cluster.zoneMap[p.address], p]));
    const replicas = [...cluster.replicasOf.values()].flat();
    for (const r of replicas) {
      const target = byZone.get(cluster.zoneMap[r.address])!;
      const c = await client(r);
      await c.call("CLUSTER", "REPLICATE", cluster.nodeIds[target.address]!);
      c.disconnect();
    }
    await pollUntil(
      async () => {
        const r = await verify(cluster.zoneMap);
        return r.shards.every(
          (s) => s.replicas.length === 1 && s.replicas[0]!.linkUp && s.replicas[0]!.zone === s.primary.zone,
        )
          ? true
          : "re-pairing not visible yet";
      },
      { timeoutMs: 20_000, what: "the re-pairing to settle" },
    );
    const r = await verify(cluster.zoneMap);
    expect(r.failures.map((f) => [f.code, f.node])).toEqual(
      cluster.primaries.map((p) => ["NO_CROSS_AZ_REPLICA", p.address]),
    );
    expect((await run("--zones", zoneFile(cluster.zoneMap))).code).toBe(1);
  });
});
