/**
 * The load generator (vload, loadgen/) on real valkey-server processes, through its Node side
 * (loadgen.ts): the tests it sends are exactly BENCHMARK_TESTS; a stale build is refused; a bad
 * spec, a refused password, an unreachable server and garbage output each fail with their exit
 * code and a message naming the fault; in a 3 × 1 cluster a manual failover mid-run is followed
 * through MOVED (no error, every request answered) and a slot in migration through ASK (the SETs
 * land on the importing node).
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveLoadgen } from "../../benchmarks/run/binaries.js";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import type { LoadgenError } from "../../benchmarks/run/loadgen.js";
import { runLoadgen, type LoadgenSpec } from "../../benchmarks/run/loadgen.js";
import { parseClusterNodes } from "../../core/topology/cluster-nodes-parser.js";
import { BENCHMARK_TESTS } from "../../vocabulary/workload.js";

const fleet = new LocalFleet();
const vload = resolveLoadgen().path;
let server: ValkeyProcess;
let locked: ValkeyProcess;
let cluster: LocalCluster;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "loadgen-"));
  [server, locked] = await Promise.all([
    fleet.start({ name: "loadgen" }),
    fleet.start({ name: "loadgen-auth", password: "loadgen-secret-1" }),
  ]);
  cluster = await startLocalCluster(fleet, {
    primaries: 3,
    replicasPerPrimary: 1,
    zones: ["a", "b", "c"],
    clusterNodeTimeoutMs: 2000,
  });
}, 60_000);
afterAll(async () => {
  await fleet.stopAll();
  rmSync(scratch, { recursive: true, force: true });
});

const spec = (target: { host: string; port: number }, more: Partial<LoadgenSpec> = {}): LoadgenSpec => ({
  mode: "standalone",
  target: `${target.host}:${target.port}`,
  connections: 4,
  pipeline: 8,
  schedule: ["set"],
  readTests: ["get"],
  keyspace: 10_000,
  dataSize: 32,
  durationSeconds: 1,
  ...more,
});

const failure = (p: Promise<unknown>): Promise<LoadgenError> =>
  p.then(
    () => {
      throw new Error("expected the generator to fail");
    },
    (e: unknown) => e as LoadgenError,
  );

describe("vload, the load generator", () => {
  it("sends exactly the tests of BENCHMARK_TESTS (one list each side, compared here)", () => {
    const listed = execFileSync(vload, ["tests"], { encoding: "utf8" }).trim().split("\n");
    expect(listed).toEqual([...BENCHMARK_TESTS].sort());
  });

  it("a build of other sources than loadgen/ is refused, naming the fix", () => {
    expect(() => resolveLoadgen({ ...process.env, VBENCH_LOADGEN: vload }, "000000000000")).toThrow(
      /built from other sources .* re-run \.ci\/setup/,
    );
    expect(() => resolveLoadgen({ PATH: "/nonexistent" }, undefined)).toThrow(
      /vload was not found: set VBENCH_LOADGEN or run through \.ci\/setup/,
    );
  });

  it("fails with its exit code and a message naming the fault: bad spec 2, refused password 3, unreachable 4, garbage output", async () => {
    const bad = await failure(runLoadgen(vload, { ...spec(server), rate: 10, pace: 10 }));
    expect([bad.exitCode, bad.message]).toEqual([
      2,
      expect.stringMatching(/rate \(open loop\) and pace \(closed loop\) exclude each other/),
    ]);
    const refused = await failure(runLoadgen(vload, { ...spec(locked), password: "wrong-password-2" }));
    expect(refused.exitCode).toBe(3);
    expect(refused.message).toMatch(/refused the password/);
    expect(refused.message).not.toContain("wrong-password-2");
    const down = await failure(runLoadgen(vload, spec({ host: "127.0.0.1", port: 1 })));
    expect([down.exitCode, down.message]).toEqual([4, expect.stringMatching(/cannot connect to 127\.0\.0\.1:1/)]);
    const liar = join(scratch, "liar.sh");
    writeFileSync(
      liar,
      '#!/bin/sh\ncat >/dev/null\necho \'{"type":"ready","connections":1,"startUnixMs":1,"version":"x"}\'\necho "42 requests per second"\n',
    );
    chmodSync(liar, 0o755);
    const garbage = await failure(runLoadgen(liar, spec(server)));
    expect(garbage.message).toMatch(/printed an output line it should not print .*42 requests per second/);
    const silent = join(scratch, "silent.sh");
    writeFileSync(silent, "#!/bin/sh\ncat >/dev/null\n");
    chmodSync(silent, 0o755);
    expect((await failure(runLoadgen(silent, spec(server)))).message).toMatch(/exited without a result/);
  }, 30_000);

  it("authenticates with the password from its spec (stdin, never argv) and counts every request once", async () => {
    const r = await runLoadgen(vload, { ...spec(locked), password: "loadgen-secret-1", schedule: ["set", "get"] });
    const c = new Redis({ host: locked.host, port: locked.port, password: "loadgen-secret-1" });
    const stats = String(await c.info("commandstats"));
    c.disconnect();
    const calls = (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    expect(r.errors.size).toBe(0);
    expect(r.hist.get("set")?.count).toBe(calls("set"));
    expect(r.hist.get("get")?.count).toBe(calls("get"));
    expect(r.cpu.cpuSeconds).toBeGreaterThan(0);
    expect(r.bytes.written).toBeGreaterThan(0);
  }, 30_000);
});

describe("vload in a 3 × 1 cluster", () => {
  const primaryOf = async (n: ValkeyProcess) => {
    const c = new Redis({ host: n.host, port: n.port });
    try {
      return parseClusterNodes(String(await c.call("cluster", "nodes")));
    } finally {
      c.disconnect();
    }
  };

  it("a manual failover mid-run: MOVED is followed, the lanes follow the new primary, no request fails", async () => {
    const replica = cluster.replicasOf.get(cluster.primaries[0]?.address ?? "")?.[0] as ValkeyProcess;
    const run = runLoadgen(vload, {
      ...spec(cluster.seed, { mode: "cluster", durationSeconds: 6, schedule: ["set", "get"] }),
    });
    await new Promise((r) => setTimeout(r, 2000));
    const c = new Redis({ host: replica.host, port: replica.port });
    expect(await c.call("cluster", "failover")).toBe("OK");
    // The failover happened during the run (condition, not a fixed wait).
    for (let i = 0; i < 100; i++) {
      const me = (await primaryOf(replica)).nodes.find((n) => n.myself);
      if (me?.role === "primary") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    c.disconnect();
    const r = await run;
    console.log(
      `[loadgen] failover mid-run: ${r.hist.get("set")?.count} SET, ${r.hist.get("get")?.count} GET, MOVED ${r.redirects.moved}, errors ${r.errors.size}`,
    );
    expect((await primaryOf(replica)).nodes.find((n) => n.myself)?.role).toBe("primary");
    expect(r.redirects.moved).toBeGreaterThan(0);
    expect([...r.errors]).toEqual([]);
  }, 60_000);

  it("a slot in migration: SETs of its missing keys get ASK and land on the importing node", async () => {
    // The primaries now (the failover above swapped one pair).
    const nodes = (await primaryOf(cluster.seed)).nodes;
    const [a, b] = nodes
      .filter((n) => n.role === "primary" && !n.failed)
      .map((n) => ({ id: n.id, port: n.endpoint?.port as number, host: n.endpoint?.host as string }));
    if (a === undefined || b === undefined) throw new Error("fewer than two primaries");
    const ca = new Redis({ host: a.host, port: a.port });
    const cb = new Redis({ host: b.host, port: b.port });
    try {
      const idOf = (n: { id: string }) => n.id;
      // A slot of a's holding keys of the generator's keyspace (key:000000000000 … key:000000000199).
      const slots = await Promise.all(
        Array.from({ length: 200 }, (_, i) => ca.call("cluster", "keyslot", `key:${String(i).padStart(12, "0")}`)),
      );
      const mine = new Set<number>();
      for (const s of (await ca.call("cluster", "slots")) as [number, number, [string, number]][])
        if (s[2][1] === a.port) for (let x = s[0]; x <= s[1]; x++) mine.add(x);
      const slot = (slots as number[]).find((s) => mine.has(s)) as number;
      await ca.call("flushall");
      await cb.call("cluster", "setslot", String(slot), "importing", idOf(a));
      await ca.call("cluster", "setslot", String(slot), "migrating", idOf(b));
      const r = await runLoadgen(vload, spec(cluster.seed, { mode: "cluster", keyspace: 200, durationSeconds: 1 }));
      const moved = Number(await cb.call("cluster", "countkeysinslot", String(slot)));
      console.log(`[loadgen] slot ${slot} migrating a→b: ASK ${r.redirects.ask}, keys on b ${moved}`);
      expect([...r.errors]).toEqual([]);
      expect(r.redirects.ask).toBeGreaterThan(0);
      expect(moved).toBeGreaterThan(0);
      expect(Number(await ca.call("cluster", "countkeysinslot", String(slot)))).toBe(0);
      // Put the slot back as it was (the keys on b first).
      await cb.call("flushall");
      await cb.call("cluster", "setslot", String(slot), "node", idOf(a));
      await ca.call("cluster", "setslot", String(slot), "node", idOf(a));
    } finally {
      ca.disconnect();
      cb.disconnect();
    }
  }, 60_000);
});
