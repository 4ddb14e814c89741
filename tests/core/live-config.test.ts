/**
 * core/roll/live-config.ts on REAL valkey-server processes running the deployed valkey.conf
 * (pod/valkey-conf.ts with a local process's lines, pod/local-conf.ts): a member started with
 * conf A takes conf B's LIVE directives by CONFIG SET without a restart (same pid, CONFIG GET shows
 * B); a RESTART directive is refused before any member is touched; a value the server refuses, or
 * reads back otherwise, or a member it cannot reach, fails naming each member and key.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { applyLiveConfig, LiveConfigError, type LiveMember } from "../../core/roll/live-config.js";
import { DirectConnector } from "../../core/topology/connector.js";
import type { ValkeyConfig } from "../../config/types.js";
import { liveDirectives } from "../../pod/conf-directives.js";
import { defaultValkeyConfig, renderDeployedLocalConf } from "../../pod/local-conf.js";

/** Conf A: the stack's defaults, small enough for a test machine. */
const A: ValkeyConfig = {
  ...defaultValkeyConfig(),
  maxmemoryBytes: 64 * 2 ** 20,
  maxmemoryPolicy: "noeviction",
  ioThreads: 1,
};
/** Conf B: only LIVE directives differ from A. */
const B: ValkeyConfig = {
  ...A,
  maxmemoryBytes: 96 * 2 ** 20,
  maxmemoryPolicy: "allkeys-lru",
  persistence: { ...A.persistence, appendfsync: "always", rdb: false },
  replication: { ...A.replication, minReplicasToWrite: 0, minReplicasMaxLag: 2 },
};

/** The deployed replication-member conf for a local process in `dir` (its includes written empty). */
function confFor(v: ValkeyConfig, dir: string, port: number): string {
  return renderDeployedLocalConf(
    v,
    { role: { kind: "replication-member" }, port, dataDir: dir, runDir: dir, bind: "127.0.0.1" },
    { logfile: join(dir, "valkey.log") },
  );
}

const fleet = new LocalFleet();
const members: ValkeyProcess[] = [];
const connector = new DirectConnector();
const asMembers = (): LiveMember[] =>
  members.map((m, i) => ({ name: `valkey-${i}`, endpoint: { host: m.host, port: m.port } }));

async function configGet(m: ValkeyProcess, keys: string[]): Promise<Record<string, string>> {
  const c = new Redis({ host: m.host, port: m.port, lazyConnect: true, maxRetriesPerRequest: 0 });
  await c.connect();
  try {
    const out: Record<string, string> = {};
    for (const k of keys) out[k] = ((await c.call("CONFIG", "GET", k)) as string[])[1] as string;
    out.process_id = /process_id:(\d+)/.exec(String(await c.call("INFO", "server")))?.[1] ?? "?";
    return out;
  } finally {
    c.disconnect();
  }
}

beforeAll(async () => {
  for (let i = 0; i < 2; i++)
    members.push(
      await fleet.start({
        name: `live-${i}`,
        launch: ({ dir, port }) => {
          for (const f of ["auth.conf", "announce.conf", "replication.conf"]) writeFileSync(join(dir, f), "");
          writeFileSync(join(dir, "valkey.conf"), confFor(A, dir, port));
          return { command: resolveBinaries().server.path, args: [join(dir, "valkey.conf")] };
        },
      }),
    );
}, 60_000);
afterAll(async () => fleet.stopAll());

describe("a conf change on running members (real processes)", () => {
  it("sets B's LIVE directives on every member without a restart: same pid, CONFIG GET answers B's values", async () => {
    const keys = Object.keys(liveDirectives(confFor(B, "/d", 1)));
    const before = await Promise.all(members.map((m) => configGet(m, keys)));
    expect(before[0]).toMatchObject({
      "maxmemory-policy": "noeviction",
      "appendfsync": "everysec",
      "save": "3600 1 300 100 60 10000",
    });
    const done = await applyLiveConfig(asMembers(), liveDirectives(confFor(B, "/d", 1)), connector);
    expect(done).toEqual({ keys: [...keys].sort(), members: ["valkey-0", "valkey-1"] });
    for (const [i, m] of members.entries()) {
      const after = await configGet(m, keys);
      expect(after, m.name).toMatchObject({
        "maxmemory-policy": "allkeys-lru",
        "maxmemory": String(96 * 2 ** 20),
        "appendfsync": "always",
        "save": "",
        "min-replicas-to-write": "0",
        "min-replicas-max-lag": "2",
      });
      expect(after.process_id, m.name).toBe(String(m.pid));
      expect(after.process_id, m.name).toBe(before[i]?.process_id);
      expect(m.alive()).toBe(true);
    }
    // Again: the same values change nothing and still confirm.
    await expect(applyLiveConfig(asMembers(), liveDirectives(confFor(B, "/d", 1)), connector)).resolves.toMatchObject({
      members: ["valkey-0", "valkey-1"],
    });
  });

  it("a value the server refuses fails naming each member and the key; the other keys are still set", async () => {
    const err = await applyLiveConfig(
      asMembers(),
      { "maxmemory-policy": "most-keys-lru", "appendfsync": "no" },
      connector,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LiveConfigError);
    const failures = (err as LiveConfigError).failures;
    expect(failures.map((f) => `${f.member} ${f.key}`)).toEqual([
      "valkey-0 maxmemory-policy",
      "valkey-1 maxmemory-policy",
    ]);
    expect((err as Error).message).toMatch(
      /valkey-0 maxmemory-policy: CONFIG SET maxmemory-policy 'most-keys-lru' refused/,
    );
    expect((await configGet(members[0]!, ["appendfsync"])).appendfsync).toBe("no");
  });

  it("a value the server takes but reads back otherwise (a unit instead of bytes) is reported, not taken as done", async () => {
    const err = (await applyLiveConfig(asMembers(), { maxmemory: "1gb" }, connector).catch(
      (e: unknown) => e,
    )) as LiveConfigError;
    expect(err).toBeInstanceOf(LiveConfigError);
    expect(err.failures.map((f) => [f.member, f.key, f.reason])).toEqual([
      ["valkey-0", "maxmemory", "CONFIG GET answers '1073741824', not '1gb'"],
      ["valkey-1", "maxmemory", "CONFIG GET answers '1073741824', not '1gb'"],
    ]);
    await applyLiveConfig(asMembers(), { maxmemory: String(96 * 2 ** 20) }, connector);
  });

  it("refuses a RESTART directive before touching any member, and names a member it cannot reach", async () => {
    await expect(applyLiveConfig(asMembers(), { "io-threads": "2", "maxmemory": "1" }, connector)).rejects.toThrow(
      /io-threads cannot be set live.*rolling restart/,
    );
    expect((await configGet(members[0]!, ["maxmemory"])).maxmemory).toBe(String(96 * 2 ** 20));
    const gone = [...asMembers(), { name: "valkey-9", endpoint: { host: "127.0.0.1", port: 1 } }];
    const err = (await applyLiveConfig(gone, { "maxmemory-policy": "allkeys-lru" }, connector).catch(
      (e: unknown) => e,
    )) as LiveConfigError;
    expect(err.failures).toEqual([
      { member: "valkey-9", reason: expect.stringMatching(/cannot reach 127\.0\.0\.1:1/) as unknown },
    ]);
  });
});
