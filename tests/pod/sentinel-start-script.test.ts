/**
 * The Sentinel pod's entrypoint (sentinel-start-script.ts) run by sh against a REAL
 * `valkey-server --sentinel` monitoring a real valkey-server: first start writes the state file
 * from the template plus announce and auth lines (mode 0600, umask 077 also for Sentinel's own
 * rewrites), Sentinel requires the password, the password is in no argv, and a restart keeps
 * the state Sentinel wrote. At every start the script sets the Sentinel's INFO period
 * (SENTINEL_INFO_PERIOD_MS): a replica's priority change reaches the Sentinel's view within it,
 * where Valkey's own 10 s period would leave it stale (measured beside it, the mutation).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../harness/local/ports.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { openClient } from "../../core/topology/connector.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { renderSentinelConf } from "../../pod/sentinel-conf.js";
import { renderSentinelStartScript, SENTINEL_INFO_PERIOD_MS } from "../../pod/sentinel-start-script.js";
import { localPodEnv } from "../../harness/local/pod-files.js";

const password = `pw-${Math.random().toString(36).slice(2)}-"q\\`;
const HOST = "127.0.0.1";

/** The template a Sentinel on `port` starts from: monitoring "vk" on the primary's port, quorum 1. */
function sentinelTemplate(port: number, dir: string, primaryPort: number): string {
  return renderSentinelConf({
    port,
    bind: HOST,
    dir,
    masterName: "vk",
    primary: { host: HOST, port: primaryPort },
    quorum: 1,
    downAfterMs: 5000,
    failoverTimeoutMs: 10000,
    parallelSyncs: 1,
    hostnames: true,
  });
}

describe("the Sentinel entrypoint on a real Sentinel", () => {
  const fleet = new LocalFleet();
  let primary: ValkeyProcess;
  let dir: string;
  let port: number;
  let script: string;
  let proc: ChildProcess | undefined;
  let log = "";

  const start = async (): Promise<void> => {
    proc = spawn("sh", [script], {
      // The pod's environment: the CLI password variables its script's own calls use.
      env: { ...localPodEnv(password), VALKEY_ANNOUNCE_HOST: HOST },
      stdio: ["ignore", "pipe", "pipe"],
    });
    proc.stdout?.on("data", (d: Buffer) => (log += d.toString()));
    proc.stderr?.on("data", (d: Buffer) => (log += d.toString()));
    await pollUntil(
      async () => {
        const c = await openClient(HOST, port, "sentinel", { password }).catch(() => undefined);
        if (c === undefined) return "not answering";
        const pong = await c.ping().catch((e: Error) => e.message);
        c.disconnect();
        return pong === "PONG" ? true : pong;
      },
      { timeoutMs: 20_000, intervalMs: 200, what: `the Sentinel on ${port}; log: ${log}` },
    );
  };
  const stop = async (): Promise<void> => {
    const p = proc;
    if (p === undefined || p.exitCode !== null) return;
    await new Promise((resolve) => {
      p.once("exit", resolve);
      p.kill("SIGKILL");
    });
  };

  beforeAll(async () => {
    primary = await fleet.start({
      name: "p",
      bind: HOST,
      port: await freePort(HOST),
      password,
      appendonly: false,
      save: "",
    });
    dir = mkdtempSync(join(tmpdir(), "sentinel-start-"));
    port = await freePort(HOST);
    const template = join(dir, "sentinel.conf.template");
    writeFileSync(template, sentinelTemplate(port, dir, primary.port));
    writeFileSync(join(dir, "password"), password, { mode: 0o600 });
    script = join(dir, "sentinel-start.sh");
    writeFileSync(
      script,
      renderSentinelStartScript({
        templateFile: template,
        stateFile: join(dir, "state", "sentinel.conf"),
        masterName: "vk",
        passwordFile: join(dir, "password"),
        resolveWaitSeconds: 5,
        port,
        localHost: HOST,
      }),
    );
    await start();
  }, 60_000);
  afterAll(async () => {
    await stop();
    await fleet.stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes the state file 0600 with announce and auth lines, and Sentinel requires the password", async () => {
    const state = join(dir, "state", "sentinel.conf");
    expect(statSync(state).mode & 0o777).toBe(0o600);
    const text = readFileSync(state, "utf8");
    expect(text).toContain(`sentinel announce-ip "${HOST}"`);
    expect(text).toMatch(/^requirepass /m);
    expect(text).toMatch(/^sentinel auth-pass vk /m);
    await expect(openClient(HOST, port, "anon", {})).rejects.toThrow(/NOAUTH/);
    const c = await openClient(HOST, port, "auth", { password });
    expect(await c.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "vk")).toEqual([HOST, String(primary.port)]);
    // Sentinel reached the password-protected primary with auth-pass.
    await pollUntil(
      async () => {
        const m = (await c.call("SENTINEL", "MASTER", "vk")) as string[];
        const flags = m[m.indexOf("flags") + 1] ?? "";
        return flags === "master" ? true : flags;
      },
      { timeoutMs: 15_000, intervalMs: 200, what: "the primary seen healthy by Sentinel" },
    );
    c.disconnect();
    const cmdline = readFileSync(`/proc/${proc?.pid}/cmdline`, "utf8");
    expect(cmdline).toContain("sentinel");
    expect(cmdline).not.toContain(password);
    expect(log).not.toContain(password);
  }, 30_000);

  it("sets the Sentinel's INFO period at start: a replica's new priority is in its view within it, not 10 s later", async () => {
    const c = await openClient(HOST, port, "auth", { password });
    const debugInfo = async (): Promise<string> => {
      const d = (await c.call("SENTINEL", "DEBUG")) as string[];
      return d[d.indexOf("INFO-PERIOD") + 1] ?? "absent";
    };
    await pollUntil(async () => ((await debugInfo()) === String(SENTINEL_INFO_PERIOD_MS) ? true : await debugInfo()), {
      timeoutMs: 15_000,
      intervalMs: 200,
      what: `INFO-PERIOD ${SENTINEL_INFO_PERIOD_MS} in SENTINEL DEBUG; log: ${log}`,
    });
    expect(log).toContain(`SENTINEL DEBUG info-period ${SENTINEL_INFO_PERIOD_MS}: OK`);
    // A replica of the primary, linked and seen by the Sentinel, then its priority changed.
    const replica = await fleet.start({
      name: "r",
      bind: HOST,
      port: await freePort(HOST),
      password,
      appendonly: false,
      save: "",
      replicaOf: { host: HOST, port: primary.port },
    });
    const view = async (): Promise<Record<string, string> | undefined> => {
      const rows = (await c.call("SENTINEL", "REPLICAS", "vk")) as string[][];
      const row = rows.find((x) => x[x.indexOf("port") + 1] === String(replica.port));
      return row === undefined
        ? undefined
        : Object.fromEntries(row.flatMap((v, i) => (i % 2 === 0 ? [[v, row[i + 1]!]] : [])));
    };
    const describe = (v: Record<string, string> | undefined): string =>
      v === undefined
        ? "not known"
        : `priority ${v["slave-priority"]}, link ${v["master-link-status"]}, info-refresh ${v["info-refresh"]} ms`;
    // Linked (a replica whose link is down is read every second whatever the period), then right
    // after one of the Sentinel's reads, so the next one is a whole period away.
    await pollUntil(
      async () => {
        const v = await view();
        return v?.["slave-priority"] === "100" && v["master-link-status"] === "ok" ? true : describe(v);
      },
      { timeoutMs: 30_000, intervalMs: 200, what: "the replica known to the Sentinel, linked, priority 100" },
    );
    await pollUntil(async () => (Number((await view())?.["info-refresh"]) < 100 ? true : describe(await view())), {
      timeoutMs: 30_000,
      intervalMs: 20,
      what: "a fresh INFO read of the replica by the Sentinel",
    });
    const r = await openClient(HOST, replica.port, "replica", { password });
    expect(await r.call("CONFIG", "SET", "replica-priority", "7")).toBe("OK");
    r.disconnect();
    const changedAt = Date.now();
    await pollUntil(async () => ((await view())?.["slave-priority"] === "7" ? true : describe(await view())), {
      timeoutMs: 15_000,
      intervalMs: 50,
      what: "the replica's new priority in the Sentinel's view",
    });
    const lagMs = Date.now() - changedAt;
    console.log(`[sentinel-start] the Sentinel saw replica-priority 7 ${lagMs} ms after it was set`);
    // Within the period and a loaded machine's slack; Valkey's own period (10 s) fails this.
    expect(lagMs).toBeLessThan(SENTINEL_INFO_PERIOD_MS + 2500);
    await replica.stop();
    c.disconnect();
  }, 60_000);

  it("keeps Sentinel's own rewrite private and its state across a restart", async () => {
    const c = await openClient(HOST, port, "auth", { password });
    expect(await c.call("SENTINEL", "SET", "vk", "down-after-milliseconds", "4321")).toBe("OK");
    c.disconnect();
    const state = join(dir, "state", "sentinel.conf");
    expect(readFileSync(state, "utf8")).toContain("down-after-milliseconds vk 4321");
    expect(statSync(state).mode & 0o777).toBe(0o600);
    await stop();
    log = "";
    await start();
    expect(log).toContain("keeping the Sentinel state");
    const again = await openClient(HOST, port, "auth", { password });
    const m = (await again.call("SENTINEL", "MASTER", "vk")) as string[];
    expect(m[m.indexOf("down-after-milliseconds") + 1]).toBe("4321");
    again.disconnect();
  }, 60_000);

  it("without a password file: no auth line is written, and the Sentinel answers without AUTH", async () => {
    const open = mkdtempSync(join(tmpdir(), "sentinel-start-open-"));
    const openPort = await freePort(HOST);
    const template = join(open, "sentinel.conf.template");
    writeFileSync(template, sentinelTemplate(openPort, open, primary.port));
    const openScript = join(open, "sentinel-start.sh");
    const state = join(open, "state", "sentinel.conf");
    writeFileSync(
      openScript,
      renderSentinelStartScript({
        templateFile: template,
        stateFile: state,
        masterName: "vk",
        passwordFile: undefined,
        port: openPort,
        localHost: HOST,
      }),
    );
    const p = spawn("sh", [openScript], {
      env: { ...localPodEnv(undefined), VALKEY_ANNOUNCE_HOST: HOST },
      stdio: "ignore",
    });
    try {
      await pollUntil(
        async () => {
          const c = await openClient(HOST, openPort, "anon", {}).catch(() => undefined);
          if (c === undefined) return "not answering";
          const pong = await c.ping().catch((e: Error) => e.message);
          c.disconnect();
          return pong === "PONG" ? true : pong;
        },
        { timeoutMs: 20_000, intervalMs: 200, what: `the open Sentinel on ${openPort}` },
      );
      const text = readFileSync(state, "utf8");
      expect(text).toContain(`sentinel announce-ip "${HOST}"`);
      expect(text).not.toMatch(/^(requirepass|sentinel sentinel-pass|sentinel auth-pass) /m);
    } finally {
      p.kill("SIGKILL");
      rmSync(open, { recursive: true, force: true });
    }
  }, 60_000);
});
