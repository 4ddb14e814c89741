/**
 * The members' preStop (pod/replication-prestop-script.ts), rendered and run by
 * `sh` (dash here) on REAL processes: a SentinelTopology (1 primary + 2 replicas through the
 * rendered entrypoint, 3 real Sentinels). What it must do on the primary:
 * - hold writes while the Sentinels switch (a write sent during the pause is never acknowledged
 *   by the old primary), leave the old primary a replica of the new one, and release the pause;
 * - keep asking while the Sentinels answer NOGOODSLAVE (no replica they may pick yet), writes
 *   paused, and switch over once they can;
 * - release the pause on every other way out: no Sentinel accepts the failover, the script is
 *   stopped by SIGTERM mid-way (a replica frozen, so it sits in the catch-up wait).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { SentinelTopology, type Member } from "../../harness/local/sentinel-topology.js";
import { openClient } from "../../core/topology/connector.js";
import { parseInfo } from "../../core/topology/info.js";
import { pollUntil, sleep } from "../../core/util/poll-until.js";
import {
  DEFAULT_SWITCHOVER_AIM_LEAD_MS,
  renderReplicationPreStopScript,
  type ReplicationPreStopOptions,
} from "../../pod/replication-prestop-script.js";
import { SENTINEL_INFO_PERIOD_MS } from "../../pod/sentinel-start-script.js";
import { namedBy, nodeCall } from "../support/node-call.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
let t: SentinelTopology;
let dir: string;

interface PreStopRun {
  proc: ChildProcess;
  /** The file given to the hook as its log (as the pods give it one on the data volume). */
  logFile: string;
  /** stderr so far. */
  log: () => string;
  done: Promise<{ code: number | null; stderr: string; ms: number }>;
}

function startPreStop(
  m: Member,
  o: Partial<ReplicationPreStopOptions> = {},
  logLines: string[] = [],
  cli = resolveBinaries().cli.path,
): PreStopRun {
  const file = join(dir, `prestop-${Date.now()}.sh`);
  const logFile = join(dir, `prestop-${Date.now()}.log`);
  if (logLines.length > 0) writeFileSync(logFile, logLines.map((l) => `${l}\n`).join(""));
  const script = renderReplicationPreStopScript({
    masterName: t.masterName,
    sentinels: t.sentinels.map((s) => s.address),
    port: m.port,
    localHost: m.host,
    timeoutSeconds: 20,
    ...o,
  });
  writeFileSync(file, script, { mode: 0o600 });
  const started = Date.now();
  const env = {
    PATH: process.env.PATH ?? "",
    VALKEY_CLI: cli,
    REDISCLI_AUTH: password,
    VALKEY_ANNOUNCE_HOST: m.host,
  };
  const proc = spawn("sh", [file, logFile], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ code: number | null; stderr: string; ms: number }>((resolve, reject) => {
    const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000);
    proc.on("error", reject);
    proc.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, ms: Date.now() - started });
    });
  });
  return { proc, logFile, log: () => stderr, done };
}

function client(m: Member, commandTimeout: number): Redis {
  const c = new Redis({
    host: m.host,
    port: m.port,
    password,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    commandTimeout,
    lazyConnect: true,
  });
  c.on("error", () => undefined);
  return c;
}

/** A SET on `m` answers within 1 s: its writes are not paused. */
async function expectWritable(m: Member, key: string): Promise<void> {
  const c = client(m, 1000);
  try {
    await c.connect();
    expect(await c.set(key, "1")).toBe("OK");
  } finally {
    c.disconnect();
  }
}

/** The full and partial resyncs `m` has served since it started (INFO stats). */
async function syncStats(m: Member): Promise<{ full: number; partial: number }> {
  const c = client(m, 5000);
  await c.connect();
  try {
    const stats = parseInfo(await c.info("stats"));
    return { full: Number(stats.get("sync_full")), partial: Number(stats.get("sync_partial_ok")) };
  } finally {
    c.disconnect();
  }
}

/** `m`'s own replica-priority (CONFIG GET). */
async function replicaPriority(m: Member): Promise<string | undefined> {
  const c = client(m, 5000);
  await c.connect();
  try {
    return ((await c.config("GET", "replica-priority")) as string[])[1];
  } finally {
    c.disconnect();
  }
}

/** Whether Sentinel `s` reports sentinel_tilt:1 (INFO sentinel). */
async function sentinelTilt(s: { host: string; port: number }): Promise<boolean> {
  return /sentinel_tilt:1/.test(String(await nodeCall(s, password, ["INFO", "sentinel"])));
}

async function primary(): Promise<Member> {
  return t.member(await t.primaryFromSentinels());
}

/**
 * The primary once the topology has settled (a test's premise): every Sentinel names the same member and it reports
 * role master. A Sentinel still naming a replica fails here, with each one's view and log, not in the next test.
 */
async function settledPrimary(): Promise<Member> {
  let named = "";
  await pollSentinels(
    async () => {
      const names = await Promise.all(t.sentinels.map((s) => namedBy(s, password, t.masterName).catch(() => "?")));
      named = names[0] ?? "";
      if (new Set(names).size !== 1) return `the Sentinels name ${names.join(", ")}`;
      const role = await t.role(t.member(named)).catch((e: Error) => e.message);
      return role === "master" ? true : `${named} reports role ${role}`;
    },
    { timeoutMs: 20_000, intervalMs: 100, what: "every Sentinel to name one primary that reports role master" },
  );
  return t.member(named);
}

/** What each Sentinel names and the last lines of its log: the message of a poll about their views that timed out. */
async function sentinelsDiagnosis(): Promise<string> {
  const views = await Promise.all(
    t.sentinels.map(async (s) => {
      const named = await namedBy(s, password, t.masterName).catch((e: Error) => `(${e.message})`);
      const tail = s.proc ? readFileSync(s.proc.logfile, "utf8").trimEnd().split("\n").slice(-12).join("\n    ") : "";
      return `${s.address} names ${named}:\n    ${tail}`;
    }),
  );
  const roles = await Promise.all(t.members.map(async (m) => `${m.address} ${await t.role(m).catch(() => "?")}`));
  return `roles: ${roles.join(", ")}\n${views.join("\n")}`;
}

/** pollUntil, its timeout's message followed by sentinelsDiagnosis(). */
async function pollSentinels(
  probe: () => Promise<true | string>,
  o: Parameters<typeof pollUntil>[1],
  hookLog = "",
): Promise<void> {
  try {
    await pollUntil(probe, o);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${await sentinelsDiagnosis()}\nhook:\n${hookLog}`, { cause: err });
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "repl-prestop-"));
  t = await SentinelTopology.start({
    replicas: 2,
    zones: ["a", "b", "c"],
    password,
    downAfterMs: 2000,
    failoverTimeoutMs: 6000,
    proxy: false,
    hostBase: 160,
  });
}, 120_000);
afterAll(async () => {
  await t?.stopAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("replication preStop on real processes (rendered script, sh)", () => {
  it("no Sentinel accepts the failover: the pause is released, the primary stays primary and writable; its log file, cut to its last 400 lines first, ends with this hook's lines", async () => {
    const p = await settledPrimary();
    // Nothing listens on port 1: every SENTINEL FAILOVER fails fast.
    const earlier = Array.from({ length: 900 }, (_, i) => `earlier hook line ${i}`);
    const run = startPreStop(p, { sentinels: [`${p.host}:1`], failoverRetrySeconds: 0 }, earlier);
    const r = await run.done;
    expect(r.code, r.stderr).toBe(0);
    const file = readFileSync(run.logFile, "utf8").trimEnd().split("\n");
    const own = r.stderr.trimEnd().split("\n");
    expect(file.slice(0, 400)).toEqual(earlier.slice(-400));
    expect(file.slice(400).map((l) => l.replace(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /, ""))).toEqual(own);
    expect(r.stderr).toContain("writes paused");
    expect(r.stderr).toContain("no Sentinel accepted the failover");
    expect(r.stderr).toContain("writes unpaused");
    expect(r.ms).toBeLessThan(15_000);
    await expectWritable(p, "after-no-sentinel");
    expect(await t.primaryFromSentinels()).toBe(p.address);
  }, 60_000);

  it("SIGTERM while it waits for a frozen replica: the pause is released at once, not at its expiry", async () => {
    const p = await settledPrimary();
    const frozen = t.members.find((m) => m !== p) as Member;
    // A write the frozen replica never acknowledges: the catch-up wait (10 s here) cannot end early.
    await expectWritable(p, "before-freeze");
    frozen.proc?.signal("SIGSTOP");
    try {
      await expectWritable(p, "while-frozen");
      const run = startPreStop(p, { catchUpSeconds: 10 });
      await waitForPause(run);
      // Paused: a write does not answer within 500 ms.
      const c = client(p, 500);
      await c.connect();
      await expect(c.set("during-pause", "1")).rejects.toThrow(/timed out/i);
      c.disconnect();
      run.proc.kill("SIGTERM");
      const r = await run.done;
      expect(r.stderr).toContain("writes unpaused");
      expect(r.stderr).not.toContain("SENTINEL FAILOVER via");
      expect(r.ms).toBeLessThan(8000);
      await expectWritable(p, "after-sigterm");
      expect(await t.primaryFromSentinels()).toBe(p.address);
    } finally {
      frozen.proc?.signal("SIGCONT");
    }
  }, 60_000);

  it("Sentinels that answer NOGOODSLAVE at first (no replica they may pick): asked again every second, writes paused and the replication stream still (its PING held off); the switchover is done once they can pick one", async () => {
    await t.waitForSentinelViews();
    const old = await settledPrimary();
    const replicas = t.members.filter((m) => m !== old);
    const setPriority = (value: string) =>
      Promise.all(
        replicas.map(async (m) => {
          const c = client(m, 2000);
          await c.connect();
          try {
            await c.config("SET", "replica-priority", value);
          } finally {
            c.disconnect();
          }
        }),
      );
    // What every Sentinel believes each replica's priority is (read from its INFO, every SENTINEL_INFO_PERIOD_MS).
    const priorities = async (): Promise<string[]> =>
      (
        await Promise.all(
          t.sentinels.map(async (s) => {
            const c = await openClient(s.host, s.port, s.address, { password });
            try {
              const list = (await c.call("SENTINEL", "REPLICAS", t.masterName)) as string[][];
              return list.map((r) => String(r[r.indexOf("slave-priority") + 1]));
            } finally {
              c.disconnect();
            }
          }),
        )
      ).flat();
    await setPriority("0");
    try {
      // A Sentinel connection that fails under load is asked again at the next poll, not a failure.
      const seen = (): Promise<string[] | Error> => priorities().catch((e: unknown) => e as Error);
      await pollUntil(
        async () => {
          const p = await seen();
          return p instanceof Error
            ? `a Sentinel did not answer (${p.message})`
            : p.every((x) => x === "0")
              ? true
              : "not every Sentinel sees priority 0 yet";
        },
        {
          timeoutMs: 25_000,
          what: "the Sentinels to see replica-priority 0",
        },
      );
      const pinger = client(old, 5000);
      await pinger.connect();
      await pinger.config("SET", "repl-ping-replica-period", "1");
      pinger.disconnect();
      const run = startPreStop(old, { timeoutSeconds: 28, failoverRetrySeconds: 20 });
      await pollUntil(() => Promise.resolve(/NOGOODSLAVE/.test(run.log()) ? true : "no NOGOODSLAVE yet"), {
        timeoutMs: 15_000,
        intervalMs: 50,
        what: "a NOGOODSLAVE",
      });
      expect(run.proc.exitCode, "still retrying").toBeNull();
      // Paused and waiting, the old primary's replication stream does not grow: the PING that the
      // pause does not stop (every second here) is held off, so no replica falls behind its offset.
      const offsetNow = async (): Promise<string | undefined> => {
        const c = client(old, 5000);
        await c.connect();
        try {
          return parseInfo(await c.info("replication")).get("master_repl_offset");
        } finally {
          c.disconnect();
        }
      };
      const first = await offsetNow();
      await sleep(2500); // two and a half PING periods: without the hold, two or three PINGs
      expect(await offsetNow(), "the paused primary's replication offset").toBe(first);
      expect(run.proc.exitCode, "still retrying").toBeNull();
      await setPriority("100");
      const r = await run.done;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/SENTINEL FAILOVER via \S+: NOGOODSLAVE[\s\S]*SENTINEL FAILOVER via \S+: (OK|INPROG)/);
      expect(r.stderr).toContain("switchover done");
      await pollUntil(
        async () => ((await primary()).address !== old.address ? true : "the Sentinels still name the old primary"),
        {
          timeoutMs: 10_000,
          what: "the Sentinels to name the new primary",
        },
      );
    } finally {
      await setPriority("100");
    }
  }, 90_000);

  it("on the primary: every write the old primary acknowledged is on the new one; held writes fail (READONLY); it ends a replica, unpaused; the Sentinel's pick was steered (priority 1, given back) and aimed, and both replicas continue with a partial resync", async () => {
    await t.waitForSentinelViews();
    const old = await settledPrimary();
    // A client of the old primary firing a SET every 10 ms (not waiting for the previous one)
    // from before the preStop until after it: what the old primary says OK to must survive.
    const c = client(old, 30_000);
    await c.connect();
    // A replication PING every second (10 s deployed): without the script holding it off, one lands
    // between the promotion and the re-pointing in most runs, and the replicas resync in full.
    await c.config("SET", "repl-ping-replica-period", "1");
    const syncsBefore = new Map(
      await Promise.all(t.members.filter((m) => m !== old).map(async (m) => [m.address, await syncStats(m)] as const)),
    );
    const acked: string[] = [];
    const failed: string[] = [];
    const inFlight: Promise<void>[] = [];
    let n = 0;
    const timer = setInterval(() => {
      const key = `sw:${n++}`;
      inFlight.push(
        c.set(key, "x").then(
          () => void acked.push(key),
          (e: Error) => void failed.push(e.message),
        ),
      );
    }, 10);
    let r: Awaited<PreStopRun["done"]>;
    let heldPeriod: string | undefined;
    let target: Member | undefined;
    let steeredPriority: string | undefined;
    try {
      await sleep(300);
      const run = startPreStop(old);
      await waitForPause(run);
      const probe = client(old, 5000);
      await probe.connect();
      heldPeriod = ((await probe.config("GET", "repl-ping-replica-period")) as string[])[1];
      probe.disconnect();
      // Step 0 steered the Sentinel's pick: the target runs with replica-priority 1 while paused.
      const named = /aim: Sentinel \S+ sees (\S+) (\d+) with replica-priority 1/.exec(run.log());
      target = t.members.find((m) => m.host === named?.[1] && String(m.port) === named?.[2]);
      if (target !== undefined) steeredPriority = await replicaPriority(target);
      r = await run.done;
      await sleep(500);
    } finally {
      clearInterval(timer);
    }
    await Promise.all(inFlight);
    c.disconnect();
    expect(r.code, r.stderr).toBe(0);
    const now = await primary();
    expect(now.address).not.toBe(old.address);
    const reader = client(now, 5000);
    await reader.connect();
    const values = await reader.mget(acked);
    reader.disconnect();
    const lost = acked.filter((_, i) => values[i] !== "x");
    expect(acked.length).toBeGreaterThan(10);
    expect(lost, `acknowledged by the old primary, missing on the new one (${acked.length} acked)`).toEqual([]);
    expect(
      failed.some((m) => /READONLY/.test(m)),
      `held writes should fail with READONLY: ${failed.slice(0, 3).join("; ")}`,
    ).toBe(true);
    expect(r.stderr).toContain("writes paused");
    // The replicas are asked what they applied: caught up within a few looks, not at their next
    // once-a-second acknowledgement to the paused primary (up to ten looks).
    const look = Number(/all 2 replicas at offset \d+ \(look (\d+)/.exec(r.stderr)?.[1]);
    console.log(`[prestop] replicas caught up at look ${look}`);
    expect(look, r.stderr).toBeLessThanOrEqual(4);
    expect(r.stderr).toContain("SENTINEL FAILOVER via");
    expect(r.stderr).toContain("switchover done");
    expect(r.stderr).toContain("writes unpaused");
    expect(r.stderr).not.toContain(password);
    expect(await t.role(old)).toBe("slave");
    await expectWritable(now, "after-switch");
    expect(r.ms).toBeLessThan(15_000);
    // Step 0 steered the first Sentinel's pick to one replica (priority 1 while paused, 100 again
    // after) and aimed the pause at that Sentinel's next INFO of it: that replica is the new primary.
    expect(r.stderr).toMatch(
      /aim: Sentinel \S+ sees \S+ \d+ with replica-priority 1 \(was 100\) and so promotes it; read it \d+ ms ago, reads it next no sooner than in \d+ ms; pausing in \d+ ms/,
    );
    // The lead is the configured one plus three times this pod's slowest Sentinel call while it
    // watched (at most a period), and the pause went out after the aimed instant, not before.
    const lead = /pausing in \d+ ms \(lead (\d+) ms: (\d+) \+ 3 x the slowest SENTINEL REPLICAS call, (\d+) ms\)/.exec(
      r.stderr,
    );
    expect(lead, r.stderr).not.toBeNull();
    const [leadMs, baseMs, slowestMs] = lead!.slice(1).map(Number) as [number, number, number];
    expect(baseMs).toBe(DEFAULT_SWITCHOVER_AIM_LEAD_MS);
    expect(leadMs).toBe(Math.min(baseMs + 3 * slowestMs, SENTINEL_INFO_PERIOD_MS));
    expect(r.stderr).toMatch(/writes paused for at most \d+ ms \(\d+ ms after the aimed instant\)/);
    expect(r.stderr).toMatch(
      /SENTINEL FAILOVER via \S+: OK \(-?\d+ ms after the aimed pause, -?\d+ ms before the aimed read(; late: [^)]*)?\)/,
    );
    expect(target?.address, r.stderr).toBe(now.address);
    expect(steeredPriority).toBe("1");
    expect(r.stderr).toContain(`switchover done: `);
    expect(r.stderr).toContain(`(aimed at ${now.host} ${now.port})`);
    expect(r.stderr).toContain(`replica-priority of ${now.host} ${now.port} given back (100: OK)`);
    expect(await replicaPriority(now)).toBe("100");
    // The PING was held off while paused and given back; every replica of the new primary (the old
    // primary and the other replica) continued with a partial resync: the new primary, a replica
    // until the switchover, served no full one.
    expect(heldPeriod).toBe("3600");
    expect(r.stderr).toContain("replication PING period given back (OK)");
    const settled = client(now, 5000);
    await settled.connect();
    try {
      await pollUntil(
        async () => {
          const info = parseInfo(await settled.info());
          return info.get("connected_slaves") === "2" ? true : `${info.get("connected_slaves")} replicas attached`;
        },
        { timeoutMs: 20_000, what: "both replicas attached to the new primary" },
      );
    } finally {
      settled.disconnect();
    }
    const before = syncsBefore.get(now.address);
    const after = await syncStats(now);
    expect(
      { full: after.full - (before?.full ?? NaN), partial: after.partial - (before?.partial ?? NaN) },
      "syncs the new primary served during the switchover",
    ).toEqual({ full: 0, partial: 2 });
  }, 60_000);

  it("on a pod whose Sentinel calls are slow (SENTINEL REPLICAS 150 ms late), the aim's lead grows by three of them and the pick is still the target", async () => {
    await t.waitForSentinelViews();
    const old = await settledPrimary();
    // valkey-cli behind a wrapper that delays every SENTINEL REPLICAS by 150 ms: a starved node's calls.
    const slowCli = join(dir, "slow-cli.sh");
    writeFileSync(
      slowCli,
      `#!/bin/sh\ncase " $* " in *" REPLICAS "*) sleep 0.15 ;; esac\nexec '${resolveBinaries().cli.path}' "$@"\n`,
      { mode: 0o700 },
    );
    const r = await startPreStop(old, {}, [], slowCli).done;
    expect(r.code, r.stderr).toBe(0);
    const lead = /\(lead (\d+) ms: (\d+) \+ 3 x the slowest SENTINEL REPLICAS call, (\d+) ms\)/.exec(r.stderr);
    expect(lead, r.stderr).not.toBeNull();
    const [leadMs, baseMs, slowestMs] = lead!.slice(1).map(Number) as [number, number, number];
    expect(slowestMs, r.stderr).toBeGreaterThanOrEqual(150);
    expect(leadMs, r.stderr).toBe(Math.min(baseMs + 3 * slowestMs, SENTINEL_INFO_PERIOD_MS));
    expect(leadMs, r.stderr).toBeGreaterThanOrEqual(DEFAULT_SWITCHOVER_AIM_LEAD_MS + 450);
    const now = await primary();
    expect(r.stderr).toContain(`(aimed at ${now.host} ${now.port})`);
    expect(await replicaPriority(now)).toBe("100");
  }, 60_000);

  it("right after a switchover (the Sentinels still reconfiguring, SENTINEL FAILOVER answers INPROG): asked again until it is accepted, not taken for the new hand-over", async () => {
    await t.waitForSentinelViews();
    const first = await settledPrimary();
    const r1 = await startPreStop(first).done;
    expect(r1.stderr).toContain("switchover done");
    let second = first;
    await pollUntil(
      async () => ((second = await primary()).address !== first.address ? true : "still named the primary"),
      { timeoutMs: 5000, intervalMs: 20, what: "the Sentinels to name the new primary" },
    );
    // At once, not aimed (the aim would spend the seconds the Sentinels need to finish).
    const r2 = await startPreStop(second, { aimLeadMs: 0 }).done;
    expect(r2.code, r2.stderr).toBe(0);
    expect(r2.stderr).toMatch(/SENTINEL FAILOVER via \S+: INPROG[\s\S]*SENTINEL FAILOVER via \S+: OK/);
    expect(r2.stderr).toContain("switchover done");
    expect(await t.role(second)).toBe("slave");
    await pollSentinels(
      async () => ((await primary()).address !== second.address ? true : "still named the primary"),
      {
        timeoutMs: 5000,
        intervalMs: 20,
        what: "the Sentinels to name a third primary",
      },
      r2.stderr,
    );
  }, 60_000);

  it("a frozen replica holds the catch-up no longer than catchUpSeconds (asked itself once, 1 s bound; then the primary's view), and the switchover goes to the other one", async () => {
    await t.waitForSentinelViews();
    const p = await settledPrimary();
    const frozen = t.members.find((m) => m !== p) as Member;
    await expectWritable(p, "before-freeze-2");
    frozen.proc?.signal("SIGSTOP");
    try {
      await expectWritable(p, "while-frozen-2");
      const r = await startPreStop(p, { catchUpSeconds: 2 }).done;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/replicas not all at the final offset after 2s \(1 behind of 2\); failing over anyway/);
      expect(r.stderr).toContain("switchover done");
      // Pause, 2 s of catch-up (its first look asks the frozen one, 1 s), the switchover: a look per
      // replica per tenth of a second at the cli timeout (3 s) each would take a minute.
      expect(r.ms, r.stderr).toBeLessThan(12_000);
      expect((await primary()).address).not.toBe(frozen.address);
    } finally {
      frozen.proc?.signal("SIGCONT");
    }
  }, 60_000);

  it("the other Sentinels not told of the switch (every hello held back: publish-period 9e12, as when Valkey drops the forced hello): the hook lowers the teller's publish-period to 100 ms until they name the new primary, then gives it back", async () => {
    await t.waitForSentinelViews();
    const p = await settledPrimary();
    const HELD = "9000000000000";
    const debug = (s: { host: string; port: number }, ...args: string[]): Promise<unknown> =>
      nodeCall(s, password, ["SENTINEL", "DEBUG", ...args]);
    const publishPeriod = async (s: { host: string; port: number }): Promise<string> => {
      const flat = (await debug(s)) as string[];
      return String(flat[flat.indexOf("PUBLISH-PERIOD") + 1]);
    };
    for (const s of t.sentinels) expect(await debug(s, "publish-period", HELD)).toBe("OK");
    try {
      const r = await startPreStop(p).done;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain("switchover done");
      const teller = /Sentinel\(s\) [^\n]* still name this member 300 ms after (\S+) named/.exec(r.stderr)?.[1];
      expect(teller, r.stderr).toBeDefined();
      expect(r.stderr).toContain(`its hellos every 100 ms (was ${HELD} ms) until they follow`);
      expect(r.stderr).toContain("every Sentinel not in TILT that answers names");
      expect(r.stderr).toMatch(
        new RegExp(`publish-period of Sentinel ${teller?.replace(/\./g, "\\.")} given back \\(${HELD} ms: OK\\)`),
      );
      // Every Sentinel names the new primary, and the teller's hellos are held back again.
      const names = await Promise.all(t.sentinels.map((x) => namedBy(x, password, t.masterName)));
      expect(new Set(names).size, names.join()).toBe(1);
      expect(names[0]).not.toBe(p.address);
      const s = t.sentinels.find((x) => x.address === teller);
      expect(s, teller).toBeDefined();
      expect(await publishPeriod(s!)).toBe(HELD);
    } finally {
      for (const s of t.sentinels) await debug(s, "publish-period", "2000").catch(() => undefined);
    }
  }, 60_000);

  it("a Sentinel whose view is behind (a forced failover another ran, every hello held back) is neither aimed with nor asked: asked, it would fail over the previous primary in the same epoch; the one naming this member is, and the Sentinels agree after", async () => {
    await t.waitForSentinelViews();
    const p0 = await settledPrimary();
    const teller = t.sentinels[t.sentinels.length - 1];
    if (teller === undefined) throw new Error("a Sentinel expected");
    const period = (s: { host: string; port: number }, ms: string): Promise<unknown> =>
      nodeCall(s, password, ["SENTINEL", "DEBUG", "publish-period", ms]);
    for (const s of t.sentinels) expect(await period(s, "9000000000000")).toBe("OK");
    let p1 = p0;
    try {
      // The last Sentinel of the hook's list runs it; the others, never told, still name p0.
      expect(await nodeCall(teller, password, ["SENTINEL", "FAILOVER", t.masterName])).toBe("OK");
      await pollSentinels(
        async () => {
          p1 = t.member(await namedBy(teller, password, t.masterName));
          if (p1 === p0) return `${teller.address} still names ${p0.address}`;
          return (await t.role(p1)) === "master" ? true : `${p1.address} not master yet`;
        },
        { timeoutMs: 15_000, intervalMs: 50, what: `${teller.address} to name a new primary that reports role master` },
      );
      const behind = [];
      for (const s of t.sentinels)
        if (s !== teller && (await namedBy(s, password, t.masterName)) === p0.address) behind.push(s);
      expect(behind.length, "the test's premise: the other Sentinels still name the previous primary").toBe(
        t.sentinels.length - 1,
      );
      const r = await startPreStop(p1).done;
      expect(r.code, r.stderr).toBe(0);
      for (const b of behind) {
        expect(r.stderr).toContain(` ${b.address}=${p0.address}`);
        expect(r.stderr).not.toContain(`SENTINEL FAILOVER via ${b.address}`);
        expect(r.stderr).not.toMatch(new RegExp(`aim: Sentinel ${b.address.replace(/\./g, "\\.")} `));
      }
      expect(r.stderr).toMatch(new RegExp(`SENTINEL FAILOVER via ${teller.address.replace(/\./g, "\\.")}: OK`));
      expect(r.stderr).toContain("switchover done");
      expect(await t.role(p1)).toBe("slave");
    } finally {
      for (const s of t.sentinels) await period(s, "2000").catch(() => undefined);
    }
    // The hook's second failover ran in a newer epoch than the first: every Sentinel follows it.
    const p2 = await settledPrimary();
    expect(p2.address).not.toBe(p1.address);
  }, 90_000);

  it("every Sentinel names another member the primary (a replica made primary behind their back): it follows theirs at once and asks none, and their primary stays primary", async () => {
    await t.waitForSentinelViews();
    const p = await settledPrimary();
    const stray = t.members.find((m) => m !== p) as Member;
    expect(await nodeCall(stray, password, ["REPLICAOF", "NO", "ONE"])).toBe("OK");
    const r = await startPreStop(stray).done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("no Sentinel that answers names this member the primary: following theirs");
    expect(r.stderr).not.toContain("SENTINEL FAILOVER via");
    // Nothing to aim or catch up with: writes held only until it follows.
    expect(r.stderr).not.toContain("aim:");
    expect(r.stderr).not.toContain("replicas not all at the final offset");
    expect(r.stderr).toContain(`REPLICAOF ${p.host} ${p.port}: OK`);
    expect(await t.role(stray)).toBe("slave");
    expect((await settledPrimary()).address).toBe(p.address);
  }, 60_000);

  it("a Sentinel in TILT (stalled 3 s) is neither the aim's Sentinel nor asked; another one accepts and the switchover completes while it is still in TILT", async () => {
    await t.waitForSentinelViews();
    const p = await settledPrimary();
    const [stalled] = t.sentinels;
    if (stalled === undefined) throw new Error("a Sentinel expected");
    // The first Sentinel of the list: the one the hook would aim with and ask first.
    stalled.proc?.signal("SIGSTOP");
    await sleep(3000);
    stalled.proc?.signal("SIGCONT");
    await pollUntil(async () => ((await sentinelTilt(stalled)) ? true : "not in TILT"), {
      timeoutMs: 10_000,
      intervalMs: 100,
      what: `${stalled.address} to report sentinel_tilt:1`,
    });
    const r = await startPreStop(p).done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Sentinel(s) ${stalled.address} in TILT`);
    expect(r.stderr).not.toContain(`SENTINEL FAILOVER via ${stalled.address}`);
    expect(r.stderr).not.toMatch(new RegExp(`aim: Sentinel ${stalled.address.replace(/\./g, "\\.")} `));
    expect(r.stderr).toMatch(/SENTINEL FAILOVER via \S+: OK/);
    expect(r.stderr).toContain("switchover done");
    expect(await sentinelTilt(stalled), "the test's premise: still in TILT when the hook ended").toBe(true);
    // The Sentinel in TILT still names the old primary (its view frozen): the roles say who is.
    expect(await t.role(p)).toBe("slave");
    const roles = await Promise.all(t.members.map((m) => t.role(m)));
    expect(
      roles.filter((x) => x === "master"),
      roles.join(),
    ).toHaveLength(1);
    expect(r.ms, r.stderr).toBeLessThan(15_000);
  }, 60_000);
});

describe("replication preStop rendering", () => {
  const base = { masterName: "valkey-primary", sentinels: ["s-0.sentinel:26379"] };
  it("renders a script dash accepts, with the pause bounded by the deadline and released by a trap", async () => {
    const script = renderReplicationPreStopScript({ ...base, timeoutSeconds: 30, catchUpSeconds: 4 });
    expect(script).toContain("timeout_s=30");
    expect(script).toContain("catch_up_s=4");
    expect(script).toContain('CLIENT PAUSE "$pause_ms" WRITE');
    expect(script).toContain("trap release EXIT");
    const file = join(dir, "syntax.sh");
    writeFileSync(file, script);
    const code = await new Promise<number | null>((resolve) =>
      spawn("sh", ["-n", file], { stdio: "ignore" }).on("exit", resolve),
    );
    expect(code).toBe(0);
  });
  it("rejects bad input naming the option", () => {
    expect(() => renderReplicationPreStopScript({ ...base, timeoutSeconds: 1 })).toThrow(
      /timeoutSeconds must be a whole number ≥ 2 \(got 1\)/,
    );
    expect(() => renderReplicationPreStopScript({ ...base, timeoutSeconds: 10, catchUpSeconds: 10 })).toThrow(
      /catchUpSeconds .* below timeoutSeconds 10 \(got 10\)/,
    );
    expect(() => renderReplicationPreStopScript({ ...base, catchUpSeconds: 0 })).toThrow(/catchUpSeconds/);
    expect(() => renderReplicationPreStopScript({ ...base, timeoutSeconds: 10, failoverRetrySeconds: 10 })).toThrow(
      /failoverRetrySeconds must be a whole number ≥ 0 and below timeoutSeconds 10 \(got 10\)/,
    );
    expect(renderReplicationPreStopScript({ ...base, timeoutSeconds: 6, catchUpSeconds: 2 })).toContain(
      "failover_retry_s=5",
    );
    expect(() => renderReplicationPreStopScript({ ...base, sentinelInfoPeriodMs: 50 })).toThrow(
      /sentinelInfoPeriodMs must be a whole number of milliseconds from 100 to 60000 \(got 50\)/,
    );
    expect(renderReplicationPreStopScript({ ...base, sentinelInfoPeriodMs: 2000 })).toContain("info_period_ms=2000");
    expect(() => renderReplicationPreStopScript({ ...base, masterName: "a;b" })).toThrow(/masterName 'a;b'/);
    expect(() => renderReplicationPreStopScript({ ...base, sentinels: [] })).toThrow(/at least one Sentinel/);
    expect(() => renderReplicationPreStopScript({ ...base, sentinels: ["nohost"] })).toThrow(
      /sentinel 'nohost' is not host:port/,
    );
  });
});

function waitForPause(run: PreStopRun): Promise<void> {
  return pollUntil(() => Promise.resolve(/writes paused/.test(run.log()) ? true : "not paused yet"), {
    timeoutMs: 10_000,
    intervalMs: 20,
    what: "the preStop to pause writes",
  });
}
