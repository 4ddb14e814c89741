/**
 * The verifier against a real replication set (1 primary + 3 replicas, password set):
 * healthy through the library and the CLI, each replication failure code from a really
 * broken set, and the CLI's usage / connection errors (exit 2).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startLocalReplication,
  waitForReplicaLinks,
  type LocalReplication,
} from "../../harness/local/local-replication.js";
import { freePort } from "../../harness/local/ports.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { ConnectionError, DirectConnector, openClient } from "../../core/topology/connector.js";
import { StaticZoneSource } from "../../core/topology/zones.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import { failureCodes, runVbench, zoneFile } from "../support/verify-helpers.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const env = { VERIFY_TEST_PW: password };

describe("verify: replication mode on real valkey-server processes", () => {
  const fleet = new LocalFleet();
  let set: LocalReplication;
  const connector = new DirectConnector({ password, connectTimeoutMs: 500, commandTimeoutMs: 500 });
  const verify = (
    o: {
      seeds?: { host: string; port: number }[];
      zones?: Record<string, string>;
      replicas?: number;
      lag?: number;
    } = {},
  ): Promise<TopologyReport> =>
    verifyTopology({
      mode: "replication",
      seeds: o.seeds ?? [set.primary],
      connector,
      zones: new StaticZoneSource(o.zones ?? set.zoneMap),
      expect: o.replicas === undefined ? undefined : { replicas: o.replicas },
      replicaLagBytes: o.lag,
    });
  const run = (...args: string[]) => runVbench(["verify", "--mode", "replication", ...args], env);

  beforeAll(async () => {
    set = await startLocalReplication(fleet, { replicas: 3, zones: ["a", "b", "c"], password });
  });
  afterAll(() => fleet.stopAll());

  it("a healthy 1+3 set passes with every replica linked", async () => {
    const r = await verify({ replicas: 3 });
    expect(r.failures).toEqual([]);
    expect(r).toMatchObject({
      ok: true,
      mode: "replication",
      nodeCount: 4,
      primariesPerZone: { a: 1 },
      zoneCheck: "checked",
    });
    const replicas = r.shards[0]!.replicas;
    expect(replicas.map((x) => x.address).sort()).toEqual(set.replicas.map((x) => x.address).sort());
    expect(replicas.every((x) => x.linkUp && x.lagBytes !== undefined && x.lagBytes < 1024)).toBe(true);
    expect(replicas.filter((x) => x.crossAz)).toHaveLength(2); // zones a,b,c,a: one replica shares the primary's zone
  });

  it("CLI: exit 0 (table and --json)", async () => {
    const zones = zoneFile(set.zoneMap);
    const text = await run(
      "--seed",
      set.primary.address,
      "--zones",
      zones,
      "--password-env",
      "VERIFY_TEST_PW",
      "--expect-replicas",
      "3",
    );
    expect(text.stderr).toBe("");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`PRIMARY ${set.primary.address}  a`);
    expect(text.stdout).toContain("VERIFY: PASS");
    const json = await run(
      "--seed",
      set.primary.address,
      "--zones",
      zones,
      "--password-env",
      "VERIFY_TEST_PW",
      "--json",
    );
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, mode: "replication", failures: [] });
  });

  it("seed is a replica: NOT_PRIMARY naming the primary (exit 1)", async () => {
    const replica = set.replicas[0]!;
    const r = await verify({ seeds: [replica] });
    expect(r.failures).toEqual([expect.objectContaining({ code: "NOT_PRIMARY", node: replica.address })]);
    expect(r.failures[0]?.message).toContain(set.primary.address);
    expect((await run("--seed", replica.address, "--password-env", "VERIFY_TEST_PW")).code).toBe(1);
  });

  it("REPLICA_COUNT, NO_CROSS_AZ_REPLICA and ZONE_UNKNOWN", async () => {
    expect((await verify({ replicas: 2 })).failures).toEqual([
      expect.objectContaining({ code: "REPLICA_COUNT", node: set.primary.address }),
    ]);
    const allA = Object.fromEntries(Object.keys(set.zoneMap).map((k) => [k, "a"]));
    expect((await verify({ zones: allA })).failures).toEqual([
      expect.objectContaining({ code: "NO_CROSS_AZ_REPLICA", node: set.primary.address }),
    ]);
    const missing = { ...set.zoneMap };
    delete missing[set.replicas[1]!.address];
    expect((await verify({ zones: missing })).failures).toEqual([
      expect.objectContaining({ code: "ZONE_UNKNOWN", node: set.replicas[1]!.address }),
    ]);
    const cli = await run(
      "--seed",
      set.primary.address,
      "--password-env",
      "VERIFY_TEST_PW",
      "--expect-replicas",
      "5",
      "--json",
    );
    expect(cli.code).toBe(1);
    expect(failureCodes(JSON.parse(cli.stdout) as TopologyReport)).toEqual(["REPLICA_COUNT"]);
  });

  it("replica pointed at a dead port: REPLICA_LINK_DOWN (given as a seed) and REPLICA_COUNT", async () => {
    const replica = set.replicas[2]!;
    const c = await openClient(replica.host, replica.port, replica.address, { password });
    try {
      await c.call("REPLICAOF", "127.0.0.1", String(await freePort("127.0.0.1")));
      const r = await verify({ seeds: [set.primary, replica], replicas: 3 });
      expect(failureCodes(r)).toEqual(["REPLICA_COUNT", "REPLICA_LINK_DOWN"]);
      expect(r.failures.find((f) => f.code === "REPLICA_LINK_DOWN")).toMatchObject({
        node: replica.address,
        message: expect.stringContaining("master_link_status:down") as string,
      });
    } finally {
      await c.call("REPLICAOF", set.primary.host, String(set.primary.port));
      c.disconnect();
    }
    await waitForReplicaLinks([replica], password, 20_000);
    expect((await verify({ replicas: 3 })).ok).toBe(true);
  });

  it("frozen replica while the primary takes 4 MB: REPLICA_LINK_DOWN + REPLICA_LAG for that replica", async () => {
    const replica = set.replicas[1]!;
    replica.signal("SIGSTOP");
    try {
      const c = await openClient(set.primary.host, set.primary.port, set.primary.address, { password });
      const value = "x".repeat(64 * 1024);
      for (let i = 0; i < 64; i++) await c.set(`lag:${i}`, value);
      c.disconnect();
      const r = await verify();
      expect(r.failures.map((f) => [f.code, f.node])).toEqual([
        ["REPLICA_LINK_DOWN", replica.address],
        ["REPLICA_LAG", replica.address],
      ]);
      expect(r.shards[0]!.replicas.find((x) => x.address === replica.address)!.lagBytes).toBeGreaterThan(
        4 * 1024 * 1024,
      );
    } finally {
      replica.signal("SIGCONT");
    }
    await waitForReplicaLinks([replica], password, 20_000);
  });

  it("no seed reachable: ConnectionError from the library, exit 2 with one line from the CLI", async () => {
    const dead = await freePort("127.0.0.1");
    await expect(
      verifyTopology({ mode: "replication", seeds: [{ host: "127.0.0.1", port: dead }], connector }),
    ).rejects.toBeInstanceOf(ConnectionError);
    const cli = await run("--seed", `127.0.0.1:${dead}`);
    expect(cli.code).toBe(2);
    expect(cli.stdout).toBe("");
    expect(cli.stderr).toMatch(new RegExp(`^vbench: cannot reach 127\\.0\\.0\\.1:${dead}: .+\\n$`));
  });

  it("wrong password and unset password variable: exit 2, password never echoed", async () => {
    const wrong = await runVbench(
      ["verify", "--mode", "replication", "--seed", set.primary.address, "--password-env", "VERIFY_TEST_PW"],
      {
        VERIFY_TEST_PW: "not-it",
      },
    );
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^vbench: cannot reach .*authentication failed.*\n$/);
    expect(wrong.stderr).not.toContain("not-it");
    const unset = await runVbench(
      ["verify", "--mode", "replication", "--seed", set.primary.address, "--password-env", "VERIFY_NO_SUCH_VAR"],
      {
        VERIFY_NO_SUCH_VAR: undefined,
      },
    );
    expect(unset.code).toBe(2);
    expect(unset.stderr).toBe(
      "vbench: --password-env VERIFY_NO_SUCH_VAR: environment variable VERIFY_NO_SUCH_VAR is not set\n",
    );
  });
});

describe("verify CLI usage errors (exit 2, one clear line)", () => {
  const cases: [string, string[], RegExp][] = [
    ["missing --mode", ["--seed", "127.0.0.1:6379"], /--mode cluster\|replication is required/],
    ["missing --seed", ["--mode", "cluster"], /--seed HOST:PORT\[,HOST:PORT\.\.\.\] is required/],
    ["bad --mode", ["--mode", "sharded", "--seed", "127.0.0.1:6379"], /sharded/],
    ["bad --seed", ["--mode", "cluster", "--seed", "nohost"], /--seed: 'nohost' is not HOST:PORT/],
    [
      "bad --expect-primaries",
      ["--mode", "cluster", "--seed", "127.0.0.1:6379", "--expect-primaries", "zero"],
      /--expect-primaries must be a positive integer/,
    ],
    [
      "unreadable zones file",
      ["--mode", "cluster", "--seed", "127.0.0.1:6379", "--zones", "/nonexistent/zones.json"],
      /cannot read zone file \/nonexistent\/zones\.json/,
    ],
    [
      "password flag value",
      ["--mode", "cluster", "--seed", "127.0.0.1:6379", "--password", "x"],
      /unknown option '--password'/,
    ],
    [
      "expect-primaries in replication mode",
      ["--mode", "replication", "--seed", "127.0.0.1:6379", "--expect-primaries", "2"],
      /exactly one primary/,
    ],
  ];
  it.each(cases)("%s", async (_name, args, message) => {
    const r = await runVbench(["verify", ...args]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
