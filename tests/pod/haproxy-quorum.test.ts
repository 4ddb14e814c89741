/**
 * The write endpoint follows the Sentinel majority, on real processes: 1 primary + 2 replicas
 * started by the rendered start script, 3 Sentinels (quorum 2, down-after 1000 ms), HAProxy from
 * the same renderer the pods use (pod/haproxy-cfg.ts). Order matters (each test
 * starts from the topology the previous one left):
 * - a member that says role:master but is not the Sentinels' primary (a standalone valkey-server
 *   listed beside the members in a second HAProxy) gets no new connection;
 * - a primary frozen until a Sentinel majority names another member, then thawed, says
 *   role:master for seconds: no new connection reaches it once HAProxy has re-checked the
 *   Sentinels (the plain role:master check sent half of them there for the whole window:
 *   apps/perf/old-primary-perf.ts, 49 of 98 per run);
 * - readiness: `/ready` answers 200 while a member qualifies, 503 with every Sentinel down (and
 *   the write endpoint then refuses new connections and cuts the open ones), 200 again once the
 *   Sentinels are back;
 * - `/sentinels` (the rolling restart's gate): 200 only while EVERY Sentinel names the primary,
 *   503 with one of three down even though `/ready` (a majority) stays 200;
 * - a slow answer is not a wrong one: with every Sentinel answering 1.5 s late (a delaying proxy
 *   in front of each), a HAProxy with the pods' default check timeouts still counts them and
 *   routes writes to the primary; the same HAProxy with 1 s timeouts does not.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { which } from "../../benchmarks/run/binaries.js";
import { freezeUntilFailover, landing, type Landing } from "../../harness/local/endpoint-landing.js";
import { freePort } from "../../harness/local/ports.js";
import { killHard, SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { openClient } from "../../core/topology/connector.js";
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";
import { parseInfo } from "../../core/topology/info.js";
import { pollUntil, sleep } from "../../core/util/poll-until.js";
import { authCommandHex, renderHaproxyCfg, type HaproxyCfgOptions, type HaproxyServer } from "../../pod/haproxy-cfg.js";
import { SENTINELS_PATH } from "../../pod/haproxy-checks.js";

const password = `pw-${Math.random().toString(36).slice(2)} "q"`;
/** Three HAProxy check intervals (500 ms locally): how long HAProxy may act on a stale Sentinel answer. */
const LAG_MS = 1500;

async function httpStatus(e: NodeEndpoint, path: string): Promise<number> {
  const r = await fetch(`http://${e.host}:${e.port}${path}`, { signal: AbortSignal.timeout(3000) });
  await r.arrayBuffer();
  return r.status;
}

/** A raw client of the write endpoint that logs in and then idles; resolves `closed` when HAProxy closes it. */
async function idleSession(e: NodeEndpoint): Promise<{ closed: Promise<number>; end: () => void }> {
  const sock = connect({ host: e.host, port: e.port });
  const closed = new Promise<number>((resolve) => sock.on("close", () => resolve(Date.now())));
  sock.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => {
    sock.once("data", (b) =>
      b.toString().startsWith("+OK") ? resolve() : reject(new Error(`AUTH answered ${b.toString()}`)),
    );
    sock.once("close", () => reject(new Error("closed before AUTH was answered")));
    sock.write(Buffer.from(authCommandHex(password), "hex"));
  });
  return { closed, end: () => sock.destroy() };
}

/**
 * A TCP proxy on `host` in front of `target` whose replies on each connection wait until `delayMs`
 * after the connection opened (a server descheduled that long once): later data flows at once.
 */
async function lateAnswers(
  host: string,
  target: NodeEndpoint,
  delayMs: number,
): Promise<{ endpoint: NodeEndpoint; close: () => void }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const openedAt = Date.now();
    const upstream = connect({ host: target.host, port: target.port });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("close", () => (client.destroy(), upstream.destroy(), sockets.delete(s)));
    }
    client.on("data", (b) => upstream.write(b));
    upstream.on("data", (b) => {
      const wait = openedAt + delayMs - Date.now();
      if (wait <= 0) client.write(b);
      else setTimeout(() => client.write(b), wait);
    });
  });
  const port = await freePort(host);
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return { endpoint: { host, port }, close: () => (server.close(), sockets.forEach((s) => s.destroy())) };
}

describe("the HAProxy write endpoint follows the Sentinel majority (real members, Sentinels, HAProxy)", () => {
  let t: SentinelTopology;
  const primaryPort = async (): Promise<number> => t.member(await t.primaryFromSentinels()).port;

  /**
   * A second HAProxy on `host`, rendered by the pods' renderer over the given servers and
   * Sentinels; up once its status frontend answers (whatever it says), stopped after the file.
   */
  const extraHaproxy = async (
    o: { host: string; servers: HaproxyServer[]; sentinels: HaproxyServer[] } & Pick<
      HaproxyCfgOptions,
      "checkIntervalMs" | "checkTimeoutMs" | "sentinelCheckTimeoutMs"
    >,
  ): Promise<{ write: NodeEndpoint; status: NodeEndpoint }> => {
    const haproxy = process.env.HAPROXY ?? which("haproxy");
    expect(haproxy, "haproxy must be installed (.ci/setup does it)").toBeDefined();
    const { host, ...rest } = o;
    const write = { host, port: await freePort(host) };
    const status = { host, port: await freePort(host) };
    const cfg = join(mkdtempSync(join(t.fleet.baseDir, "haproxy-")), "haproxy.cfg");
    writeFileSync(cfg, renderHaproxyCfg({ ...rest, masterName: t.masterName, write, status, password }), {
      mode: 0o600,
    });
    const child = spawn(haproxy!, ["-f", cfg, "-db"], { stdio: "ignore" });
    extras.push(child);
    await pollUntil(
      async () => ((await httpStatus(status, "/ready").catch(() => 0)) > 0 ? true : "status frontend not answering"),
      {
        timeoutMs: 15_000,
        what: `the HAProxy on ${host} to start`,
      },
    );
    return { write, status };
  };
  const extras: ChildProcess[] = [];
  afterAll(() => extras.forEach((c) => c.kill("SIGKILL")));

  beforeAll(async () => {
    t = await SentinelTopology.start({
      replicas: 2,
      zones: ["a", "b", "c"],
      password,
      downAfterMs: 1000,
      failoverTimeoutMs: 3000,
    });
  }, 120_000);
  afterAll(async () => t?.stopAll());

  it("a member that says role:master but is not the Sentinels' primary gets no new connection", async () => {
    const rogue = await t.fleet.start({ name: "rogue", bind: "127.0.0.29", password });
    const rogueClient = await openClient(rogue.host, rogue.port, rogue.address, { password });
    try {
      expect(parseInfo(await rogueClient.info("replication")).get("role")).toBe("master");
    } finally {
      rogueClient.disconnect();
    }
    const { status, write } = await extraHaproxy({
      host: "127.0.0.121",
      servers: [
        ...t.members.map((m) => ({ name: m.name, host: m.host, port: m.port })),
        { name: "rogue", host: rogue.host, port: rogue.port },
      ],
      sentinels: t.sentinels.map((s) => ({ name: s.name, host: s.host, port: s.port })),
      checkIntervalMs: 500,
    });
    const primary = await primaryPort();
    const primaryName = t.members.find((m) => m.port === primary)!.name;
    // Both answer role:master; only the Sentinels' primary has their majority (every server
    // counts until its first check: wait for the rogue's to have run).
    await pollUntil(
      async () => ((await httpStatus(status, "/quorum/rogue")) === 503 ? true : "the rogue's quorum not checked yet"),
      {
        timeoutMs: 10_000,
        what: "the quorum backend of the rogue to go down",
      },
    );
    expect(await httpStatus(status, `/quorum/${primaryName}`)).toBe(200);
    expect(await httpStatus(status, "/ready")).toBe(200);
    const landed: Landing[] = [];
    for (let i = 0; i < 30; i++) landed.push(await landing(write, password));
    expect(landed.map((l) => l.port)).toEqual(Array(30).fill(primary));
  }, 90_000);

  it("a frozen primary thawed after the failover says role:master for seconds and gets no new connection once HAProxy has checked the Sentinels", async () => {
    await t.waitForSentinelViews();
    const { old, named, majorityAt } = await freezeUntilFailover(t, password);
    const landed: Landing[] = [];
    while (Date.now() - majorityAt < 30_000) {
      if ((await t.role(old).catch(() => undefined)) !== "master") break;
      landed.push(await landing(t.proxy!.write, password));
      await sleep(100);
    }
    const onOld = landed.filter((l) => l.port === old.port).map((l) => l.at - majorityAt);
    const onNamed = landed.filter((l) => l.port === named.port).length;
    process.stderr.write(
      `thawed old primary said role:master for ${Date.now() - majorityAt} ms: ${onOld.length}/${landed.length} new connections on it (at ${onOld.join(", ") || "-"} ms after the Sentinel majority switched), ${onNamed} on the Sentinels' primary\n`,
    );
    // HAProxy learns the switch at its next check of each Sentinel (every 500 ms here): allow
    // three intervals, then none. The window must be real for the test to mean anything.
    const settled = landed.filter((l) => l.at - majorityAt > LAG_MS);
    expect(settled.length).toBeGreaterThanOrEqual(10);
    expect(settled.filter((l) => l.port === old.port)).toEqual([]);
    expect(settled.filter((l) => l.port === named.port).length).toBeGreaterThanOrEqual(5);
  }, 120_000);

  it("/ready: 200 with a qualified primary, 503 with every Sentinel down (new connections refused, open ones cut), 200 once they are back", async () => {
    await t.waitForSentinelViews();
    const st = t.proxy!.status;
    await pollUntil(
      async () =>
        (await landing(t.proxy!.write, password)).port === (await primaryPort()) ? true : "endpoint not on the primary",
      {
        timeoutMs: 15_000,
        what: "the write endpoint on the Sentinels' primary",
      },
    );
    expect(await httpStatus(st, "/ready")).toBe(200);
    const session = await idleSession(t.proxy!.write);
    const primary = await primaryPort();
    try {
      const downAt = Date.now();
      await Promise.all(t.sentinels.map((s) => killHard(s.proc)));
      await pollUntil(async () => ((await httpStatus(st, "/ready")) === 503 ? true : "still ready"), {
        timeoutMs: 10_000,
        what: "/ready to answer 503",
      });
      expect((await landing(t.proxy!.write, password)).port).toBeUndefined();
      // The open session is cut: the write check's /quorum step fails (fall 2 at 500 ms).
      const cutAt = await Promise.race([session.closed, sleep(15_000).then(() => undefined)]);
      expect(cutAt, "the idle session to the primary was cut").toBeDefined();
      expect(cutAt! - downAt).toBeLessThan(15_000);
    } finally {
      session.end();
    }
    await Promise.all(t.sentinels.map((_, j) => t.startSentinel(j)));
    await pollUntil(async () => ((await httpStatus(st, "/ready")) === 200 ? true : "not ready"), {
      timeoutMs: 20_000,
      what: "/ready to answer 200 again",
    });
    expect((await landing(t.proxy!.write, password)).port).toBe(primary);
  }, 90_000);

  it("/sentinels: 200 while every Sentinel names the primary, 503 with one of three down (/ready stays 200), 200 once it is back", async () => {
    await t.waitForSentinelViews();
    const st = t.proxy!.status;
    await pollUntil(
      async () => ((await httpStatus(st, SENTINELS_PATH)) === 200 ? true : "not every Sentinel counted yet"),
      {
        timeoutMs: 20_000,
        what: `${SENTINELS_PATH} to answer 200`,
      },
    );
    await killHard(t.sentinels[0]!.proc);
    await pollUntil(async () => ((await httpStatus(st, SENTINELS_PATH)) === 503 ? true : "still 200"), {
      timeoutMs: 10_000,
      what: `${SENTINELS_PATH} to answer 503`,
    });
    expect(await httpStatus(st, "/ready"), "a majority still names the primary").toBe(200);
    await t.startSentinel(0);
    await pollUntil(async () => ((await httpStatus(st, SENTINELS_PATH)) === 200 ? true : "not back"), {
      timeoutMs: 20_000,
      what: `${SENTINELS_PATH} to answer 200 again`,
    });
  }, 60_000);

  it("a slow answer is not a wrong one: Sentinels answering 1.5 s late still count with the default check timeouts, not with 1 s ones", async () => {
    await t.waitForSentinelViews();
    const primary = t.member(await t.primaryFromSentinels());
    const host = "127.0.0.122";
    const proxies = await Promise.all(t.sentinels.map((x) => lateAnswers(host, x, 1500)));
    try {
      const late = (timeouts: Pick<HaproxyCfgOptions, "checkTimeoutMs" | "sentinelCheckTimeoutMs">) =>
        extraHaproxy({
          host,
          servers: t.members.map((m) => ({ name: m.name, host: m.host, port: m.port })),
          sentinels: proxies.map((p, i) => ({ name: `late-s${i}`, ...p.endpoint })),
          checkIntervalMs: 500,
          ...timeouts,
        });
      const strict = await late({ checkTimeoutMs: 1000, sentinelCheckTimeoutMs: 1000 });
      const tolerant = await late({});
      // Every server counts until its first check; after it, the strict HAProxy's do not (their
      // check times out at 1 s, the answers come at 1.5 s) and the tolerant one's do.
      const quorum = (h: { status: NodeEndpoint }): Promise<number> => httpStatus(h.status, `/quorum/${primary.name}`);
      await pollUntil(async () => ((await quorum(strict)) === 503 ? true : "first checks not done"), {
        timeoutMs: 20_000,
        what: "the strict HAProxy's first checks",
      });
      await pollUntil(
        async () => ((await landing(tolerant.write, password)).port === primary.port ? true : "not on the primary"),
        {
          timeoutMs: 20_000,
          what: "the default-timeout HAProxy to route writes to the primary",
        },
      );
      // Held over a window longer than a check cycle (1.5 s late answer + 250 ms interval).
      for (let i = 0; i < 6; i++) {
        expect(
          [await quorum(tolerant), (await landing(tolerant.write, password)).port],
          "default timeouts: the late Sentinels count",
        ).toEqual([200, primary.port]);
        expect(
          [await quorum(strict), (await landing(strict.write, password)).port],
          "1 s timeouts: the late Sentinels never count",
        ).toEqual([503, undefined]);
        await sleep(500);
      }
    } finally {
      proxies.forEach((p) => p.close());
    }
  }, 90_000);
});
