/**
 * "Ready means synced" and "preStop fails over only to a synced replica", with the rendered
 * readiness.sh and prestop.sh against a real cluster: 1 primary + 2 replicas. A replica is cut off
 * from its primary the way a wrong password or a partition does it (masterauth set wrong, the
 * replication link killed: master_link_status stays down).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { renderPreStopScript } from "../../pod/prestop-script.js";
import { renderReadinessScript } from "../../pod/readiness-script.js";
import { eventually } from "../support/processes.js";
import { PASSWORD, cli, cliPath, run } from "../support/valkey-fixtures.js";

const fleet = new LocalFleet();
const dir = mkdtempSync(join(tmpdir(), "valkey-on-eks-synced-"));
let c: LocalCluster;
let primary: ValkeyProcess;
let synced: ValkeyProcess;
let cutOff: ValkeyProcess;

beforeAll(async () => {
  c = await startLocalCluster(fleet, {
    primaries: 1,
    replicasPerPrimary: 2,
    zones: ["a", "b"],
    password: PASSWORD,
    clusterNodeTimeoutMs: 3000,
  });
  primary = c.primaries[0] as ValkeyProcess;
  const replicas = c.replicasOf.get(primary.address) as ValkeyProcess[];
  // Cut off the replica listed first in the primary's CLUSTER NODES: the one a preStop that takes
  // "the first connected replica" (the hook before this check) would hand the slots to.
  const nodes = (await cli(primary.port, ["cluster", "nodes"], PASSWORD)).split("\n");
  const first = nodes.find((l) => l.split(" ")[3] === c.nodeIds[primary.address] && l.includes(" connected"));
  const firstPort = Number(/:(\d+)@/.exec(first ?? "")?.[1]);
  cutOff = replicas.find((r) => r.port === firstPort) as ValkeyProcess;
  synced = replicas.find((r) => r !== cutOff) as ValkeyProcess;
  expect(cutOff, `first replica in:\n${nodes.join("\n")}`).toBeDefined();
  for (let i = 0; i < 100; i++) await cli(primary.port, ["set", `synced:${i}`, String(i)], PASSWORD);
  expect(await cli(primary.port, ["wait", "2", "5000"], PASSWORD)).toBe("2");
}, 90_000);
afterAll(async () => {
  await fleet.stopAll();
  rmSync(dir, { recursive: true, force: true });
});

const env = (): NodeJS.ProcessEnv => ({
  ...process.env,
  VALKEY_CLI: cliPath(),
  REDISCLI_AUTH: PASSWORD,
  VALKEYCLI_AUTH: PASSWORD,
});

async function probe(p: ValkeyProcess, restore = false): Promise<{ ready: boolean; why: string }> {
  const path = join(dir, `readiness-${p.port}.sh`);
  writeFileSync(path, renderReadinessScript({ mode: "cluster", port: p.port, restore }));
  try {
    await run("sh", [path], { env: env() });
    return { ready: true, why: "" };
  } catch (e) {
    return { ready: false, why: String((e as { stderr?: string }).stderr ?? e) };
  }
}

async function preStop(p: ValkeyProcess): Promise<string> {
  const path = join(dir, `prestop-${p.port}.sh`);
  writeFileSync(path, renderPreStopScript({ port: p.port, timeoutSeconds: 20 }));
  return (await run("sh", [path], { env: env() })).stderr;
}

const role = async (p: ValkeyProcess): Promise<string> => (await cli(p.port, ["role"], PASSWORD)).split("\n")[0] ?? "";

/** Breaks p's replication link for good: a wrong masterauth, then the link killed. */
async function cutLink(p: ValkeyProcess): Promise<void> {
  await cli(p.port, ["config", "set", "masterauth", "not-the-password"], PASSWORD);
  await cli(p.port, ["client", "kill", "type", "master"], PASSWORD);
  await eventually(`${p.address} master_link_status:down`, 15_000, async () =>
    /master_link_status:down/.test(await cli(p.port, ["info", "replication"], PASSWORD)) ? true : undefined,
  );
}

describe("readiness means synced; preStop picks only a synced replica (real cluster, rendered scripts)", () => {
  it("every member of a healthy, synced cluster is ready", async () => {
    for (const p of [primary, synced, cutOff]) expect(await probe(p), p.address).toEqual({ ready: true, why: "" });
  });

  it("a replica whose link to its primary is down is not ready; a synced one is", async () => {
    await cutLink(cutOff);
    const r = await probe(cutOff);
    expect(r.ready).toBe(false);
    expect(r.why).toContain("link to its primary is down");
    expect((await probe(synced)).ready).toBe(true);
  });

  it("preStop hands the slots to the synced replica, never the cut-off one", async () => {
    const log = await preStop(primary);
    expect(log).toMatch(
      new RegExp(`replica 127\\.0\\.0\\.1:${cutOff.port} has master_link_status:down; not choosing it`),
    );
    expect(log).toContain(`to its synced replica 127.0.0.1:${synced.port}`);
    expect(log).toContain("failover done");
    expect(await role(synced)).toBe("master");
    expect(await role(primary)).toBe("slave");
    expect(await role(cutOff)).toBe("slave");
  }, 60_000);

  it("with no synced replica left, preStop stops without a failover", async () => {
    // Now `synced` is the primary; the old primary follows it. Cut that link too.
    await eventually(`${primary.address} synced to the new primary`, 20_000, async () =>
      /master_link_status:up/.test(await cli(primary.port, ["info", "replication"], PASSWORD)) ? true : undefined,
    );
    await cutLink(primary);
    const log = await preStop(synced);
    expect(log).toContain("no synced replica");
    expect(log).not.toContain("handing the slots");
    expect(await role(synced)).toBe("master");
  }, 60_000);

  it("a cut-off replica becomes ready again once its link is back up", async () => {
    await cli(cutOff.port, ["config", "set", "masterauth", PASSWORD], PASSWORD);
    const r = await eventually("the repaired replica ready", 20_000, async () => {
      const p = await probe(cutOff);
      return p.ready ? p : undefined;
    });
    expect(r.ready).toBe(true);
  }, 30_000);
});

describe("readiness of a member before the bootstrap", () => {
  it("a fresh cluster-enabled server (no slots assigned anywhere) is ready on PONG", async () => {
    const fresh = await fleet.start({ name: "fresh", clusterEnabled: true, password: PASSWORD });
    expect(await probe(fresh)).toEqual({ ready: true, why: "" });
  });

  it("with restore.from, a restored member that claimed its snapshot's slots but has met nobody is ready on PONG (without, it is not); once it knows another node, only cluster_state:ok is", async () => {
    const restored = await fleet.start({ name: "restored", clusterEnabled: true, password: PASSWORD });
    // What Valkey does at start-up with an RDB holding keys of unassigned slots: it claims them.
    await cli(restored.port, ["cluster", "addslotsrange", "0", "99"], PASSWORD);
    // Rendered for a stack with restore.from; without it, such a member waits for cluster_state:ok.
    expect(await probe(restored, true)).toEqual({ ready: true, why: "" });
    expect((await probe(restored)).ready).toBe(false);
    await cli(restored.port, ["cluster", "meet", primary.host, String(primary.port)], PASSWORD);
    await eventually("the member to know another node and stop being ready", 10_000, async () =>
      (await probe(restored, true)).ready ? undefined : true,
    );
  });
});
