/**
 * The Sentinel-mode builders: sentinel.conf and the rendered start decision (haproxy.cfg:
 * haproxy-cfg.test.ts), including its no-Sentinel paths run for real under `sh`
 * with a real valkey-server (first start of ordinal 0, ordinal 1 refused, ordinal 0 with data
 * refused) and the password reaching the cli through REDISCLI_AUTH, never argv.
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_MASTER_NAME, replicationStartValues } from "../../pod/replication-start.js";
import { RESTORE_PENDING_MARKER } from "../../pod/restore-script.js";
import { renderSentinelConf } from "../../pod/sentinel-conf.js";
import { renderStartScript } from "../../pod/start-script.js";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { memberLaunch } from "../../harness/local/replication-launch.js";
import { freePort, freePortForFreshDir } from "../../harness/local/ports.js";
import { parseStackConfig } from "../../config/schema.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { openClient } from "../../core/topology/connector.js";
import { parseInfo } from "../../core/topology/info.js";
import { sleep } from "../../core/util/poll-until.js";
import { processesWithMarker } from "../support/processes.js";

const PASSWORD = `s3cr3t "with" spaces\\`;
const dir = mkdtempSync(join(tmpdir(), "sentinel-builders-"));
const run = (cmd: string, args: string[]): Promise<{ code: number; out: string }> =>
  new Promise((resolve) =>
    execFile(cmd, args, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : Number(err.code ?? -1), out: stdout + stderr }),
    ),
  );

describe("sentinel.conf", () => {
  const base = {
    port: 26379,
    dir: "/sentinel",
    primary: { host: "valkey-0.valkey-headless", port: 6379 },
    quorum: 2,
    downAfterMs: 5000,
    failoverTimeoutMs: 60_000,
    parallelSyncs: 1,
  };

  it("monitors the primary with the timings, authenticates everywhere, announces hostnames", () => {
    const text = renderSentinelConf({
      ...base,
      password: PASSWORD,
      hostnames: true,
      announce: { host: "sentinel-0.sentinel-headless" },
    });
    const lines = text.trim().split("\n");
    const name = DEFAULT_MASTER_NAME;
    expect(lines).toEqual(
      expect.arrayContaining([
        "sentinel resolve-hostnames yes",
        "sentinel announce-hostnames yes",
        'sentinel announce-ip "sentinel-0.sentinel-headless"',
        `sentinel monitor ${name} valkey-0.valkey-headless 6379 2`,
        `sentinel down-after-milliseconds ${name} 5000`,
        `sentinel failover-timeout ${name} 60000`,
        `sentinel parallel-syncs ${name} 1`,
        'requirepass "s3cr3t \\"with\\" spaces\\\\"',
        'sentinel sentinel-pass "s3cr3t \\"with\\" spaces\\\\"',
        `sentinel auth-pass ${name} "s3cr3t \\"with\\" spaces\\\\"`,
      ]),
    );
    // Hostname resolution must be on before the monitor line names a hostname.
    expect(lines.indexOf("sentinel resolve-hostnames yes")).toBeLessThan(
      lines.findIndex((l) => l.startsWith("sentinel monitor")),
    );
    expect(renderSentinelConf(base)).toContain("protected-mode no");
  });

  it("rejects bad input naming the key", () => {
    expect(() => renderSentinelConf({ ...base, quorum: 0 })).toThrow(/quorum must be a whole number ≥ 1/);
    expect(() => renderSentinelConf({ ...base, downAfterMs: 1.5 })).toThrow(/downAfterMs/);
    expect(() => renderSentinelConf({ ...base, masterName: "my master" })).toThrow(/masterName 'my master'/);
    expect(() => renderSentinelConf({ ...base, password: "a\nb" })).toThrow(/single line/);
  });
});

describe("start script with the Sentinel decision", () => {
  const script = renderStartScript({
    mode: "replication",
    auth: true,
    sentinel: { sentinels: ["sentinel-0.s:26379", "sentinel-1.s:26379"] },
  });

  it("is valid sh, hands the password to the cli by environment only, and is absent without Sentinel", async () => {
    const path = join(dir, "start.sh");
    writeFileSync(path, script);
    expect((await run("sh", ["-n", path])).code).toBe(0);
    expect(script).toContain(`REDISCLI_AUTH=$(cat "$password_file"); export REDISCLI_AUTH`);
    expect(script).toMatch(/^sentinels='sentinel-0.s:26379 sentinel-1.s:26379'$/m);
    expect(script).not.toMatch(/VALKEY_SENTINELS|VALKEY_ORDINAL|VALKEY_PORT/);
    expect(script).not.toMatch(/ -a |--pass|--askpass/);
    expect(script).toMatch(/exec valkey-server "\$conf"$/m);
    // Without Sentinel (or in cluster mode) the decision's include is empty, which skips it.
    expect(renderStartScript({ mode: "replication", auth: true })).toMatch(/^repl_include=''$/m);
    expect(renderStartScript({ mode: "cluster", auth: true, sentinel: {} })).toMatch(/^repl_include=''$/m);
    expect(script).toMatch(/^repl_include='\/run\/valkey\/replication\.conf'$/m);
  });

  it("fails with a clear message when a per-member value is missing (real sh)", async () => {
    const root = mkdtempSync(join(dir, "member-"));
    const path = join(root, "start.sh");
    writeFileSync(
      path,
      renderStartScript({
        mode: "replication",
        auth: false,
        runDir: join(root, "run"),
        dataDir: join(root, "data"),
        sentinel: { sentinels: ["127.0.0.1:1"] },
      }),
    );
    const sh = (env: Record<string, string>): Promise<{ code: number; out: string }> =>
      new Promise((resolve) =>
        execFile(
          "sh",
          [path, join(root, "valkey.conf")],
          { env: { PATH: process.env.PATH ?? "", ...env } },
          (err, stdout, stderr) => resolve({ code: err === null ? 0 : Number(err.code ?? -1), out: stdout + stderr }),
        ),
      );
    const base = { VALKEY_ANNOUNCE_HOST: "127.0.0.1" };
    expect(await sh({ ...base })).toEqual({
      code: 1,
      out: "start.sh: cannot tell this member's ordinal: set POD_NAME (<statefulset>-<n>)\n",
    });
    expect(await sh({ ...base, POD_NAME: "valkey" })).toEqual({
      code: 1,
      out: "start.sh: cannot tell this member's ordinal: set POD_NAME (<statefulset>-<n>)\n",
    });
    expect(await sh({ POD_NAME: "valkey-1" })).toEqual({
      code: 1,
      out: "start.sh: VALKEY_ANNOUNCE_HOST (this member's stable name) is not set\n",
    });
  });

  it("rejects bad options naming the key", () => {
    const b = { dataDir: "/data", includeFile: "/run/valkey/replication.conf", sentinels: ["s-0.s:26379"] };
    expect(() => replicationStartValues({ ...b, sentinels: [] })).toThrow(/sentinels is empty/);
    expect(() => replicationStartValues({ ...b, sentinels: ["no-port"] })).toThrow(
      /sentinel 'no-port' is not host:port/,
    );
    expect(() => replicationStartValues({ ...b, waitSeconds: 0 })).toThrow(/waitSeconds must be a whole number ≥ 1/);
    expect(() => replicationStartValues({ ...b, masterName: "a;b" })).toThrow(/masterName 'a;b'/);
  });
});

describe("start decision with no Sentinel answering (real sh, real valkey-server)", () => {
  const fleet = new LocalFleet();
  const silent: Socket[] = [];
  let mute: Server | undefined;
  afterAll(async () => {
    for (const s of silent) s.destroy();
    mute?.close();
    await fleet.stopAll();
  });
  const UNFENCED = parseStackConfig({
    valkey: { replication: { replicas: 0, minReplicasToWrite: 0 } },
    checks: { verify: false },
  }).config.valkey;
  const start = async (ordinal: number, port: number, sentinels: string[], marker: string, restore = false) =>
    fleet.start({
      name: `member-${ordinal}`,
      bind: "127.0.0.1",
      port,
      startTimeoutMs: 20_000,
      launch: (ctx) => {
        const cmd = memberLaunch({
          name: `member-${ordinal}`,
          host: "127.0.0.1",
          port,
          password: PASSWORD,
          sentinels,
          masterName: DEFAULT_MASTER_NAME,
          sentinel: { waitSeconds: 2, firstStartGraceSeconds: 1 },
          // A lone member: fencing off, or the deployed min-replicas-to-write 1 refuses its writes.
          valkey: UNFENCED,
          restore,
        })(ctx);
        return { ...cmd, env: { ...cmd.env, SENTINEL_TEST_MARKER: marker } };
      },
    });

  it("ordinal 1 waits, then fails with a clear message, the cli never carrying the password in argv", async () => {
    // A "Sentinel" that accepts and never answers: each cli call hangs until its timeout, so it can be inspected.
    mute = createServer((s) => silent.push(s));
    const mutePort = await freePort();
    await new Promise<void>((resolve) => mute!.listen(mutePort, "127.0.0.1", resolve));
    const marker = `run-${Math.random().toString(36).slice(2)}`;
    const starting = start(1, await freePort(), [`127.0.0.1:${mutePort}`], marker).then(
      () => "started",
      (err: Error) => err.message,
    );
    const seen: { cmdline: string; environ: string }[] = [];
    for (let i = 0; i < 40 && seen.length === 0; i++) {
      await sleep(100);
      for (const pid of processesWithMarker(`SENTINEL_TEST_MARKER=${marker}`)) {
        try {
          const cmdline = readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ");
          if (/redis-cli|valkey-cli/.test(cmdline))
            seen.push({ cmdline, environ: readFileSync(`/proc/${pid}/environ`, "latin1") });
        } catch {
          /* exited */
        }
      }
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]!.cmdline).toContain("SENTINEL GET-MASTER-ADDR-BY-NAME");
    expect(seen[0]!.cmdline).not.toContain("s3cr3t");
    expect(seen[0]!.environ.split("\0")).toContain(`REDISCLI_AUTH=${PASSWORD}`);
    const outcome = await starting;
    expect(outcome).toContain("exited during start-up");
    expect(outcome).toContain(
      `no Sentinel of [127.0.0.1:${mutePort}] named a primary for ${DEFAULT_MASTER_NAME} within 2s (0 reachable); only ordinal 0 with an empty data dir may become the first primary`,
    );
  }, 30_000);

  it("ordinal 0 with an empty data dir becomes the first primary; restarted WITH data and still no Sentinel, it refuses", async () => {
    const dead = `127.0.0.1:${await freePort()}`;
    const port = await freePort();
    const first = await start(0, port, [dead], "first");
    expect(first.stderr()).toContain("first start, becoming the primary");
    const c = await openClient("127.0.0.1", port, "member-0", { password: PASSWORD });
    try {
      await c.set("k", "v");
      expect(parseInfo(await c.info("replication")).get("role")).toBe("master");
    } finally {
      c.disconnect();
    }
    await first.stop();
    await expect(start(0, port, [dead], "second")).rejects.toThrow(
      /only ordinal 0 with an empty data dir may become the first primary/,
    );
    // The same data dir on a fresh port each time (a member's dir is `<name>-<port>`): another test
    // file may have taken the old port since it stopped.
    const withData = async (from: string): Promise<{ port: number; dir: string }> => {
      // Never a port an earlier member of this test had: its dir still holds that member's data and restore
      // marker (the CI of 53c3dbd started on them).
      const p = await freePortForFreshDir(dirname(from), "member-0");
      const dir = join(dirname(from), `member-0-${p}`);
      cpSync(join(from, "data"), join(dir, "data"), { recursive: true });
      return { port: p, dir };
    };
    // Rendered without restore, the marker changes nothing (a stack without restore.from keeps its scripts).
    writeFileSync(join(first.dir, "data", RESTORE_PENDING_MARKER), "");
    const plain = await withData(first.dir);
    await expect(start(0, plain.port, [dead], "marker-ignored")).rejects.toThrow(
      /only ordinal 0 with an empty data dir may become the first primary/,
    );
    // With restore.from: a new stack's member 0 whose data restore.sh placed (restore-pending): its first start, once.
    const again = await withData(first.dir);
    const restored = await start(0, again.port, [dead], "restored", true);
    expect(restored.stderr()).toContain("a new stack's restored one: first start, becoming the primary");
    expect(existsSync(join(again.dir, "data", RESTORE_PENDING_MARKER))).toBe(false);
    const c2 = await openClient("127.0.0.1", again.port, "member-0", { password: PASSWORD });
    try {
      expect(await c2.get("k")).toBe("v");
    } finally {
      c2.disconnect();
    }
    await restored.stop();
    const after = await withData(again.dir);
    await expect(start(0, after.port, [dead], "after-restore", true)).rejects.toThrow(
      /only ordinal 0 with an empty data dir may become the first primary/,
    );
  }, 60_000);

  it("ordinal 0 with an empty data dir does NOT take the primary role when a Sentinel answers with an error (wrong password)", async () => {
    const sentinel = await fleet.start({
      name: "sentinel-other-password",
      bind: "127.0.0.1",
      launch: ({ dir, port, logfile }) => {
        const conf = join(dir, "sentinel.conf");
        const text = renderSentinelConf({
          port,
          bind: "127.0.0.1",
          dir,
          logfile,
          primary: { host: "127.0.0.1", port: 1 },
          quorum: 1,
          downAfterMs: 1000,
          failoverTimeoutMs: 1000,
          parallelSyncs: 1,
          password: "another-password",
        });
        writeFileSync(conf, text, { mode: 0o600 });
        return { command: resolveBinaries().server.path, args: [conf, "--sentinel"] };
      },
    });
    await expect(start(0, await freePort(), [sentinel.address], "noauth")).rejects.toThrow(
      new RegExp(`1 reachable; errors: ${sentinel.address.replace(/\./g, "\\.")}: NOAUTH`),
    );
  }, 30_000);
});
