/**
 * AZ failback on real valkey-server processes: a 3 x 1 cluster over zones a/b/c (each node's
 * `availability-zone` set), the rendered failback.sh running beside every member. A primary is
 * killed, its replica in another zone takes over, so that zone holds 2 of 3 primaries
 * (AZ_PRIMARY_MAJORITY). The killed member comes back through the rendered pod entrypoint
 * (start.sh with VALKEY_AVAILABILITY_ZONE, heal.sh and failback.sh in the background) as a
 * replica; the failback loop hands its shard back, and the verifier passes again.
 */
import { clusterMemberPod } from "../../pod/cluster-member.js";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { trackChild } from "../../core/util/process-reaper.js";
import { countPrimariesPerZone } from "../../core/verify/analysis-common.js";
import { announcedZones, mergeZones } from "../../core/verify/announced-zones.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import { renderAzFailbackScript } from "../../pod/az-failback-script.js";
import { startPod, type PodProcess } from "../support/pod-process.js";
import { eventually } from "../support/processes.js";
import { PASSWORD, cli, cliPath, valkeyConfig } from "../support/valkey-fixtures.js";

const NODE_TIMEOUT_MS = 2000;
const fleet = new LocalFleet();
const dir = mkdtempSync(join(tmpdir(), "valkey-on-eks-failback-"));
const loops: { name: string; log: () => string; stop: () => void }[] = [];
let returned: PodProcess | undefined;
let c: LocalCluster;

const cliEnv = { VALKEY_CLI: cliPath(), REDISCLI_AUTH: PASSWORD, VALKEYCLI_AUTH: PASSWORD };
const failbackOptions = { intervalSeconds: 1, confirmRounds: 2, cooldownSeconds: 5 };

/** Runs the rendered failback.sh for a fleet process (the entrypoint does this in a pod). */
function startLoop(p: ValkeyProcess): void {
  const path = join(dir, `failback-${p.port}.sh`);
  writeFileSync(path, renderAzFailbackScript({ port: p.port, ...failbackOptions }));
  const child = spawn("sh", [path, String(p.pid)], {
    env: { ...process.env, ...cliEnv },
    stdio: ["ignore", "ignore", "pipe"],
  });
  trackChild(child);
  let log = "";
  child.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  loops.push({ name: p.address, log: () => log, stop: () => child.kill("SIGKILL") });
}

const connector = new DirectConnector({ password: PASSWORD, connectTimeoutMs: 1000, commandTimeoutMs: 1000 });
const verify = (): Promise<TopologyReport> =>
  verifyTopology({ mode: "cluster", seeds: [c.seed], connector, zones: new StaticZoneSource(c.zoneMap) });

async function primaryZones(): Promise<Record<string, number>> {
  return countPrimariesPerZone((await verify()).shards);
}

beforeAll(async () => {
  c = await startLocalCluster(fleet, {
    primaries: 3,
    replicasPerPrimary: 1,
    zones: ["a", "b", "c"],
    password: PASSWORD,
    clusterNodeTimeoutMs: NODE_TIMEOUT_MS,
  });
  for (const n of c.nodes)
    await cli(n.port, ["config", "set", "availability-zone", c.zoneMap[n.address] as string], PASSWORD);
  for (const n of c.nodes) startLoop(n);
}, 90_000);
afterAll(async () => {
  for (const l of loops) l.stop();
  await returned?.stop(2000);
  await fleet.stopAll();
  rmSync(dir, { recursive: true, force: true });
});

describe("AZ failback (rendered failback.sh beside every member of a real cluster)", () => {
  it("does nothing while every zone holds one primary", async () => {
    expect((await verify()).failures).toEqual([]);
    await new Promise((r) => setTimeout(r, 4000));
    expect(loops.map((l) => l.log()).join("")).not.toContain("CLUSTER FAILOVER");
    expect(await primaryZones()).toEqual({ a: 1, b: 1, c: 1 });
  }, 30_000);

  it("primary killed -> its replica's zone holds 2 of 3 primaries; after the member returns, failback restores one per zone and the verifier passes", async () => {
    const victim = c.primaries[2] as ValkeyProcess;
    const victimZone = c.zoneMap[victim.address] as string;
    const id = c.nodeIds[victim.address] as string;
    victim.signal("SIGKILL");
    const majority = await eventually("a zone holding 2 primaries after the failover", 30_000, async () => {
      const zones = await primaryZones();
      return Object.values(zones).some((n) => n >= 2) ? zones : undefined;
    });
    expect(majority[victimZone] ?? 0).toBe(0);
    expect((await verify()).failures.map((f) => f.code)).toContain("AZ_PRIMARY_MAJORITY");

    // The member comes back the way a pod does: same data dir and address, zone from the env.
    const podDir = join(dir, "returned");
    const runDir = join(podDir, "run");
    writeFileSync(join(dir, "password"), PASSWORD, { mode: 0o600 });
    const valkey = valkeyConfig({
      mode: "cluster",
      ioThreads: 1,
      maxmemoryBytes: 256 * 2 ** 20,
      cluster: { primaries: 3, replicasPerPrimary: 1, nodeTimeoutMs: NODE_TIMEOUT_MS },
    });
    const pod = clusterMemberPod({
      valkey,
      auth: true,
      configDir: podDir,
      runDir,
      dataDir: victim.dir,
      passwordFile: join(dir, "password"),
      port: victim.port,
      busPort: victim.clusterPort,
      bind: victim.host,
      background: ["heal", "failback"],
      heal: { intervalSeconds: 1, deadlineSeconds: 60 },
      failback: failbackOptions,
    });
    returned = await startPod("returned", podDir, victim.host, victim.port, pod, {
      ...cliEnv,
      POD_NAME: "returned",
      VALKEY_ANNOUNCE_HOST: victim.host,
      VALKEY_ANNOUNCE_IP: victim.host,
      VALKEY_AVAILABILITY_ZONE: victimZone,
    });
    expect(await cli(victim.port, ["cluster", "myid"], PASSWORD)).toBe(id);
    expect(await cli(victim.port, ["config", "get", "availability-zone"], PASSWORD)).toBe(
      `availability-zone\n${victimZone}`,
    );

    const t0 = Date.now();
    const report = await eventually(
      "failback to one primary per zone with a passing verifier",
      90_000,
      async () => {
        const r = await verify();
        return r.failures.length === 0 ? r : undefined;
      },
      500,
    );
    console.log(`[failback] verifier passes ${Date.now() - t0} ms after the member returned`);
    expect(countPrimariesPerZone(report.shards)).toEqual({ a: 1, b: 1, c: 1 });
    expect((await cli(victim.port, ["role"], PASSWORD)).split("\n")[0]).toBe("master");
    const log = returned.log();
    expect(log).toMatch(new RegExp(`failback: a zone held a primary majority; CLUSTER FAILOVER on ${id} answered: OK`));
    // Only the returned member failed back.
    expect(loops.map((l) => l.log()).join("")).not.toContain("CLUSTER FAILOVER");
  }, 150_000);

  it("the verifier prefers the zones the nodes announce (availability-zone) over the zone source", async () => {
    // A zone source that puts every node in one zone would mean AZ_PRIMARY_MAJORITY and
    // NO_CROSS_AZ_REPLICA; the announced zones win.
    const wrong = new StaticZoneSource(Object.fromEntries(c.nodes.map((n) => [n.address, "x"])));
    const r = await verifyTopology({ mode: "cluster", seeds: [c.seed], connector, zones: wrong });
    expect(r.failures).toEqual([]);
    expect(countPrimariesPerZone(r.shards)).toEqual({ a: 1, b: 1, c: 1 });
    // With no zone source at all, the announced zones still enable the zone checks.
    const announcedOnly = await verifyTopology({ mode: "cluster", seeds: [c.seed], connector });
    expect(countPrimariesPerZone(announcedOnly.shards)).toEqual({ a: 1, b: 1, c: 1 });
    expect(JSON.stringify(announcedOnly)).not.toContain("no zone source given");
  });
});

describe("announced zones", () => {
  it("maps ip:port to availability-zone; nodes without one fall back to the zone source", () => {
    const reply = [
      [
        "slots",
        [0, 16383],
        "nodes",
        [
          ["id", "n1", "port", 7000, "ip", "10.0.0.1", "availability-zone", "use1-az1"],
          ["id", "n2", "port", 7001, "ip", "10.0.0.2", "availability-zone", ""],
        ],
        "id",
        "s1",
      ],
    ];
    const announced = announcedZones(reply);
    expect([...announced]).toEqual([["10.0.0.1:7000", "use1-az1"]]);
    const merged = mergeZones(
      announced,
      new Map([
        ["10.0.0.1:7000", "label-a"],
        ["10.0.0.2:7001", "label-b"],
      ]),
    );
    expect(Object.fromEntries(merged ?? [])).toEqual({ "10.0.0.1:7000": "use1-az1", "10.0.0.2:7001": "label-b" });
    expect(mergeZones(new Map(), undefined)).toBeUndefined();
    expect(announcedZones("not an array").size).toBe(0);
  });
});
