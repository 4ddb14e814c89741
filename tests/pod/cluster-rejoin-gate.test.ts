/**
 * `rejoin.sh gate` (start.sh runs it before valkey-server when nodes.conf is missing) on a real
 * 3 x 1 cluster whose members announce hostnames: a member taking the hostname of a live primary
 * that still owns slots waits (an empty server on the old address would be taken for that primary
 * by its replica, which would full-sync from it and empty itself) until the gate's deadline; the
 * hostname of a replica, or one no peer lists, starts at once. Until 2026-12-01 the gate read its
 * own node id before the server had one: under `set -u` every lookup ended there, and the gate let
 * every member start at once (the first case failed).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleep } from "../../core/util/poll-until.js";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { renderClusterRejoinScript } from "../../pod/cluster-rejoin-script.js";
import { PASSWORD, callNode, cliPath, run } from "../support/valkey-fixtures.js";

const GATE_DEADLINE_S = 3;
const root = mkdtempSync(join(tmpdir(), "valkey-on-eks-gate-"));
let cluster: LocalCluster;
const hostname = (i: number): string => `member-${i}.gate-headless.test`;

beforeAll(async () => {
  cluster = await startLocalCluster(new LocalFleet(join(root, "fleet")), {
    primaries: 3,
    replicasPerPrimary: 1,
    zones: ["a", "b", "c"],
    password: PASSWORD,
  });
  for (const [i, n] of cluster.nodes.entries())
    await callNode(n.host, n.port, "CONFIG", "SET", "cluster-announce-hostname", hostname(i));
  // Every member lists every hostname (gossip) before a gate asks.
  const deadline = Date.now() + 20_000;
  for (const n of cluster.nodes) {
    for (;;) {
      const nodes = await callNode(n.host, n.port, "CLUSTER", "NODES");
      if (cluster.nodes.every((_, i) => nodes.includes(hostname(i)))) break;
      if (Date.now() > deadline) throw new Error(`hostnames did not reach ${n.host}:${n.port}:\n${nodes}`);
      await sleep(200);
    }
  }
  // The peers, as the headless Service would list them (lines `ip name port`).
  writeFileSync(
    join(root, "hosts"),
    cluster.nodes.map((n, i) => `${n.host} ${hostname(i)} ${n.port}`).join("\n") + "\n",
  );
  writeFileSync(
    join(root, "rejoin.sh"),
    renderClusterRejoinScript({ intervalSeconds: 1, gateDeadlineSeconds: GATE_DEADLINE_S }),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all((cluster?.nodes ?? []).map((n) => n.stop(2000)));
  rmSync(root, { recursive: true, force: true });
});

/** Runs the gate as start.sh does for a member announcing `name`; its stderr. */
async function gate(name: string): Promise<string> {
  const { stderr } = await run("sh", [join(root, "rejoin.sh"), "gate"], {
    env: {
      ...process.env,
      VALKEY_CLI: cliPath(),
      REDISCLI_AUTH: PASSWORD,
      VALKEYCLI_AUTH: PASSWORD,
      VALKEY_ANNOUNCE_HOST: name,
      VALKEY_HEAL_HOSTS_FILE: join(root, "hosts"),
    },
    timeout: (GATE_DEADLINE_S + 30) * 1000,
  });
  return stderr;
}

describe("rejoin.sh gate on a live cluster (real valkey-server)", () => {
  it("holds a member back while a peer lists its hostname as a primary owning slots, until the gate's deadline", async () => {
    const primary = cluster.nodes.findIndex((n) => cluster.primaries.includes(n));
    const log = await gate(hostname(primary));
    expect(log).not.toMatch(/parameter not set/);
    const id = cluster.nodeIds[`${cluster.nodes[primary]?.host}:${cluster.nodes[primary]?.port}`] as string;
    expect(log).toContain(`rejoin: my old node id ${id} still owns slots and is not marked fail yet; waiting`);
    expect(log).toContain(
      `rejoin: my old node id still owns slots after ${GATE_DEADLINE_S}s; starting the server anyway`,
    );
  }, 60_000);

  it.each([
    ["a replica's hostname (its old entry owns no slots)", "replica"],
    ["a hostname no peer lists (a first start)", "unknown"],
  ])(
    "lets %s start at once",
    async (_what, which) => {
      const i = cluster.nodes.findIndex((n) => !cluster.primaries.includes(n));
      const log = await gate(which === "replica" ? hostname(i) : "member-9.gate-headless.test");
      expect(log).not.toMatch(/parameter not set/);
      expect(log).not.toMatch(/waiting|starting the server anyway/);
    },
    60_000,
  );
});
