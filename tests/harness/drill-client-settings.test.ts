/**
 * The drill's client settings on real processes (client-settings.ts, docs/client-settings.md): two
 * ioredis Sentinel clients, one with the recommended settings and one with the library's defaults,
 * write to the same primary while it is fenced (more good replicas required than it has: every
 * write gets NOREPLICAS, as a primary cut off from its replicas does) and the Sentinels then fail
 * over to a replica. The recommended client asks the Sentinels again on NOREPLICAS and follows the
 * failover to the new primary; the default one stays on the old primary and does not write again
 * (until the Sentinels reconfigure the old primary and kill its clients, past this test's window).
 */
import { afterEach, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { mustFollow, type ClientSettings } from "../../core/drill/client-settings.js";
import { plainRedis, sentinelRedis } from "../../core/drill/load.js";
import { clientReady } from "../../core/util/client-ready.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import type { ReplicationTarget } from "../../harness/drill/replication-target.js";
import { pollUntil, sleep } from "../../core/util/poll-until.js";
import { startTestReplication } from "./drill-faults.js";
import { namedBy, nodeCall } from "../support/node-call.js";

const PASSWORD = "drill-client-settings-password";
let target: ReplicationTarget | undefined;
afterEach(async () => {
  await target?.stop();
  target = undefined;
});

interface Attempt {
  /** When the SET was sent. */
  sentAt: number;
  /** When its reply (or error) came. */
  at: number;
  ok: boolean;
  error?: string;
  /** The member the client's connection was on when the reply came. */
  node: string;
}

/** A client writing a unique key every 50 ms, recording each attempt and each (re)connect. */
function writer(c: Redis, name: string): { attempts: Attempt[]; connects: number[]; stop: () => void } {
  const attempts: Attempt[] = [];
  const connects: number[] = [];
  c.on("ready", () => connects.push(Date.now()));
  let n = 0;
  const node = (): string => `${c.stream?.remoteAddress}:${c.stream?.remotePort}`;
  const timer = setInterval(() => {
    const key = `${name}:${++n}`;
    const sentAt = Date.now();
    c.set(key, "v").then(
      (reply) => attempts.push({ sentAt, at: Date.now(), ok: reply === "OK", node: node() }),
      (err: unknown) =>
        attempts.push({ sentAt, at: Date.now(), ok: false, error: (err as Error).message, node: node() }),
    );
  }, 50);
  return { attempts, connects, stop: () => clearInterval(timer) };
}

describe("client settings (real processes)", () => {
  it("the error replies a client must follow: NOREPLICAS, READONLY, LOADING, MASTERDOWN; not a wrong-type or auth error", () => {
    for (const m of [
      "NOREPLICAS Not enough good replicas to write.",
      "READONLY You can't write against a read only replica.",
      "LOADING x",
      "MASTERDOWN x",
    ])
      expect(mustFollow(m), m).toBe(true);
    for (const m of ["WRONGTYPE x", "NOAUTH x", "ERR x", "Command timed out"]) expect(mustFollow(m), m).toBe(false);
  });

  it("fenced primary (NOREPLICAS), then a failover: the recommended Sentinel client asks again and follows; the default one stays on the old primary", async () => {
    target = await startTestReplication(PASSWORD, 2);
    const t = target.t;
    const old = t.member(await t.primaryFromSentinels());
    const oldAddress = `${old.host}:${old.port}`;
    const clients = new Map<ClientSettings, Redis>(
      (["recommended", "defaults"] as const).map((s) => [
        s,
        sentinelRedis(t.sentinelEndpoints, t.masterName, PASSWORD, 1000, s),
      ]),
    );
    const admin = new Redis({ host: old.host, port: old.port, password: PASSWORD, maxRetriesPerRequest: 1 });
    admin.on("error", () => undefined);
    const w = new Map([...clients].map(([s, c]) => [s, writer(c, `settings-${s}`)]));
    const rec = w.get("recommended")!;
    const def = w.get("defaults")!;
    const summary = (): string =>
      JSON.stringify([...w].map(([s, x]) => ({ s, connects: x.connects.length, last: x.attempts.slice(-3) })));
    try {
      await pollUntil(
        () => Promise.resolve((rec.attempts.some((a) => a.ok) && def.attempts.some((a) => a.ok)) || "not both writing"),
        {
          timeoutMs: 15_000,
          intervalMs: 100,
          what: "both clients writing",
        },
      );
      expect(rec.attempts.filter((a) => a.ok).every((a) => a.node === oldAddress)).toBe(true);
      const connectsBefore = { rec: rec.connects.length, def: def.connects.length };
      // Fenced: the primary needs 3 good replicas and has 2, as one cut off from its replicas would.
      const fencedAt = Date.now();
      await admin.config("SET", "min-replicas-to-write", "3");
      await sleep(1500);
      const fencedRec = rec.attempts.filter((a) => a.at > fencedAt + 200);
      const fencedDef = def.attempts.filter((a) => a.at > fencedAt + 200);
      expect(fencedDef.length, summary()).toBeGreaterThan(10);
      expect(
        fencedDef.every((a) => !a.ok && a.error?.startsWith("NOREPLICAS") === true && a.node === oldAddress),
        summary(),
      ).toBe(true);
      expect(
        fencedRec.some((a) => a.error?.startsWith("NOREPLICAS")),
        summary(),
      ).toBe(true);
      // On NOREPLICAS the recommended client reconnects, asking the Sentinels again (still the same primary);
      // the default one never reconnects.
      expect(rec.connects.length, summary()).toBeGreaterThan(connectsBefore.rec);
      expect(def.connects.length, summary()).toBe(connectsBefore.def);

      const sentinel = new Redis({ host: t.sentinels[0]!.host, port: t.sentinels[0]!.port, password: PASSWORD });
      await sentinel.call("SENTINEL", "FAILOVER", t.masterName).finally(() => sentinel.disconnect());
      await pollUntil(async () => (await t.primaryFromSentinels()) !== oldAddress || "old primary still named", {
        timeoutMs: 20_000,
        intervalMs: 100,
        what: "the Sentinels' failover",
      });
      const switchedAt = Date.now();
      const newAddress = await t.primaryFromSentinels();
      // 4 s: the Sentinels reconfigure a reachable old primary as a replica only once it has reported
      // itself master for 4 × their 2 s publish period (8 s); that reconfiguration's CLIENT KILL TYPE
      // normal would move any client, the default one included.
      await sleep(4000);
      const after = (a: Attempt): boolean => a.at > switchedAt;
      // Recommended: writes again, on the new primary.
      const recOk = rec.attempts.filter((a) => after(a) && a.ok);
      expect(recOk.length, summary()).toBeGreaterThan(15);
      expect(
        recOk.every((a) => a.node === newAddress),
        summary(),
      ).toBe(true);
      // Defaults: still on the old primary (fenced, then a replica: NOREPLICAS / READONLY), no write since the fence.
      const defAfter = def.attempts.filter(after);
      expect(defAfter.length, summary()).toBeGreaterThan(40);
      expect(
        def.attempts.filter((a) => a.at > fencedAt + 200 && a.ok),
        summary(),
      ).toEqual([]);
      expect(
        defAfter.every((a) => a.node === oldAddress && /^(NOREPLICAS|READONLY)/.test(a.error ?? "")),
        summary(),
      ).toBe(true);
      expect(def.connects.length, summary()).toBe(connectsBefore.def);
    } finally {
      for (const x of w.values()) x.stop();
      for (const c of clients.values()) c.disconnect();
      admin.disconnect();
    }
  }, 120_000);

  it("frozen primary (SIGSTOP), failover: the recommended Sentinel client follows the Sentinels' +switch-master while the old primary is still frozen; the default one waits", async () => {
    target = await startTestReplication(PASSWORD, 2);
    const t = target.t;
    const old = t.member(await t.primaryFromSentinels());
    const oldAddress = `${old.host}:${old.port}`;
    const rec = sentinelRedis(t.sentinelEndpoints, t.masterName, PASSWORD, 1000, "recommended");
    const def = sentinelRedis(t.sentinelEndpoints, t.masterName, PASSWORD, 1000, "defaults");
    const w = { rec: writer(rec, "frozen-rec"), def: writer(def, "frozen-def") };
    const summary = (): string => JSON.stringify({ rec: w.rec.attempts.slice(-3), def: w.def.attempts.slice(-3) });
    try {
      await pollUntil(
        () =>
          Promise.resolve((w.rec.attempts.some((a) => a.ok) && w.def.attempts.some((a) => a.ok)) || "not both writing"),
        {
          timeoutMs: 15_000,
          intervalMs: 100,
          what: "both clients writing",
        },
      );
      old.proc?.signal("SIGSTOP");
      const frozenAt = Date.now();
      await pollUntil(async () => (await t.primaryFromSentinels()) !== oldAddress || "old primary still named", {
        timeoutMs: 30_000,
        intervalMs: 100,
        what: "the Sentinels' failover",
      });
      const newAddress = await t.primaryFromSentinels();
      await sleep(2500);
      // Still frozen: nothing the old primary says can have moved a client, and it can acknowledge
      // no write sent after it froze (a reply it wrote just before SIGSTOP may still arrive after
      // frozenAt, seen in CI: so the writes are taken by when they were sent).
      const recOk = w.rec.attempts.filter((a) => a.sentAt > frozenAt && a.ok);
      expect(recOk.length, summary()).toBeGreaterThan(10);
      expect(
        recOk.every((a) => a.node === newAddress),
        summary(),
      ).toBe(true);
      expect(
        w.def.attempts.filter((a) => a.at > frozenAt + 1100 && a.ok),
        summary(),
      ).toEqual([]);
      expect(def.stream?.remotePort, summary()).toBe(old.port);
    } finally {
      old.proc?.signal("SIGCONT");
      w.rec.stop();
      w.def.stop();
      rec.disconnect();
      def.disconnect();
    }
  }, 120_000);
  it("given one Sentinel's address (as a Service gives one), the recommended client also subscribes to the Sentinels it discovers: with that one stopped, the others' +switch-master moves it off the frozen primary", async () => {
    target = await startTestReplication(PASSWORD, 2);
    const t = target.t;
    const [given, ...others] = t.sentinels;
    if (given === undefined || others.length !== 2) throw new Error("three Sentinels expected");
    const old = t.member(await t.primaryFromSentinels());
    const subscribers = async (s: { host: string; port: number }): Promise<number> =>
      String(await nodeCall(s, PASSWORD, ["CLIENT", "LIST"]))
        .split("\n")
        .filter((l) => /cmd=subscribe\b/.test(l)).length;
    const before = await Promise.all(others.map(subscribers));
    const rec = sentinelRedis([{ host: given.host, port: given.port }], t.masterName, PASSWORD, 1000, "recommended");
    const w = writer(rec, "one-given");
    const summary = (): string => JSON.stringify(w.attempts.slice(-3));
    try {
      await pollUntil(
        async () => {
          const now = await Promise.all(others.map(subscribers));
          return (
            (w.attempts.some((a) => a.ok) && now.every((n, j) => n > (before[j] ?? 0))) || `subscribers ${now.join()}`
          );
        },
        {
          timeoutMs: 15_000,
          intervalMs: 100,
          what: "the client writing and subscribed to the two Sentinels it was not given",
        },
      );
      // The given Sentinel stops (its subscriber hears nothing), then the primary freezes: only the
      // discovered Sentinels' +switch-master can move the client while the old primary is frozen.
      given.proc?.signal("SIGSTOP");
      old.proc?.signal("SIGSTOP");
      const frozenAt = Date.now();
      const named = (): Promise<string | undefined> =>
        namedBy(others[0]!, PASSWORD, t.masterName).catch(() => undefined);
      let newAddress: string | undefined;
      await pollUntil(
        async () =>
          ((newAddress = await named()) !== undefined && newAddress !== old.address) || "old primary still named",
        { timeoutMs: 30_000, intervalMs: 100, what: "the two running Sentinels' failover" },
      );
      await sleep(3000);
      const ok = w.attempts.filter((a) => a.sentAt > frozenAt && a.ok);
      expect(ok.length, summary()).toBeGreaterThan(10);
      expect(
        ok.every((a) => a.node === newAddress),
        summary(),
      ).toBe(true);
    } finally {
      old.proc?.signal("SIGCONT");
      given.proc?.signal("SIGCONT");
      w.stop();
      rec.disconnect();
    }
  }, 120_000);
  it("a recommended plain client leaves a fenced primary once for thirty NOREPLICAS replies in flight (one disconnect, not one per reply), and follows the next one once ready again", async () => {
    const fleet = new LocalFleet();
    try {
      const p = await fleet.start({ name: "fenced" });
      const c = plainRedis(p.host, p.port, undefined, 1000, undefined, "recommended");
      await clientReady(c, "the fenced primary", 10_000);
      await c.config("SET", "min-replicas-to-write", "1");
      let readies = 0;
      c.on("ready", () => readies++);
      let reconnects = 0;
      const disconnect = c.disconnect.bind(c);
      c.disconnect = (reconnect?: boolean): void => {
        if (reconnect === true) reconnects++;
        disconnect(reconnect);
      };
      const replies = await Promise.all(
        Array.from({ length: 30 }, (_, i) => c.set(`fenced:${i}`, "v").then(String, (e: Error) => e.message)),
      );
      expect(
        replies.every((r) => r.startsWith("NOREPLICAS")),
        replies.slice(0, 3).join("; "),
      ).toBe(true);
      expect(reconnects).toBe(1);
      // Ready again on the same node, it follows the next error again.
      await pollUntil(() => Promise.resolve((readies > 0 && c.status === "ready") || `${c.status}, ${readies} ready`), {
        timeoutMs: 10_000,
        what: "reconnected",
      });
      await c.set("fenced:again", "v").catch(() => undefined);
      expect(reconnects).toBe(2);
      c.disconnect();
    } finally {
      await fleet.stopAll();
    }
  });
});
