/**
 * A primary that crashes and is restarted in place (an OOM kill under `restartPolicy: Always`)
 * on the real Sentinel topology (members through the rendered start script, 3 Sentinels,
 * HAProxy; down-after 2 s): restarted after 1.0 / 1.8 / 2.5 s, and the plain `primary` fault
 * (back after 3 s, mid-failover). Counted against ACKNOWLEDGED writes, read back after heal.
 *
 * The bound (README "A restarting primary"): at most the AOF write window, `appendfsync
 * everysec`, 2 s of writes (the buffer a slow fsync lets the server hold): rate × streams × 2 s. While the drill runs, every member's
 * INFO role is sampled: two members answering role:master at once is a second writable primary,
 * whatever the loss happened to be. A crash-restart row carries the killed primary's own reading of
 * its AOF right before the kill (aof-at-kill.ts), printed beside the ledger's count.
 */
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { AOF_HELD_BUFFER_MS } from "../../core/drill/bounds.js";
import { renderAofAtKill } from "../../core/drill/aof-at-kill.js";
import { parseStreamName } from "../../core/drill/writers.js";
import type { Fault } from "../../vocabulary/faults.js";
import { ReplicationTarget } from "../../harness/drill/replication-target.js";
import type { Member } from "../../harness/local/sentinel-topology.js";
import { drillOn } from "../../harness/drill/run-drill.js";
import { sleep } from "../../core/util/poll-until.js";
import { log, testOptions, TIMINGS, ZONES } from "./drill-faults.js";

const PASSWORD = "crash-restart-password";

/** Samples every member's role every 50 ms until stopped; returns the samples where ≥ 2 said master. */
function watchMasters(t: ReplicationTarget): { stop: () => Promise<string[]> } {
  let stopped = false;
  const doubles: string[] = [];
  const clients = t.t.members.map((m) => {
    const c = new Redis({
      host: m.host,
      port: m.port,
      password: PASSWORD,
      lazyConnect: true,
      connectTimeout: 200,
      commandTimeout: 300,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 100,
    });
    c.on("error", () => undefined);
    return { m, c };
  });
  const loop = (async () => {
    while (!stopped) {
      const roles = await Promise.all(
        clients.map(({ c }) =>
          c.call("ROLE").then(
            (r) => String((r as unknown[])[0]),
            () => "down",
          ),
        ),
      );
      const masters = clients.filter((_, i) => roles[i] === "master").map(({ m }) => m.name);
      if (masters.length > 1) doubles.push(`${new Date().toISOString()} ${masters.join(" + ")}`);
      await sleep(50);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      for (const { c } of clients) c.disconnect();
      return doubles;
    },
  };
}

/** One drill on a fresh topology (the crash-restart delay is the target's). */
async function crashDrill(fault: Fault, crashRestartDelayMs?: number) {
  const timings = { ...TIMINGS, ...(crashRestartDelayMs === undefined ? {} : { crashRestartDelayMs }) };
  const target = await ReplicationTarget.start({ ...timings, replicas: 2, zones: ZONES, password: PASSWORD });
  try {
    return await drillOnce(target, fault, crashRestartDelayMs);
  } finally {
    await target.stop();
  }
}

async function drillOnce(target: ReplicationTarget, fault: Fault, crashRestartDelayMs?: number) {
  const o = testOptions("replication", fault);
  let watcher: ReturnType<typeof watchMasters> | undefined;
  let victim: Member | undefined;
  const r = await drillOn(target, {
    ...o,
    beforeFault: async () => void (victim = target.t.member(await target.t.primaryFromSentinels())),
    afterFault: (t) => ((watcher = watchMasters(t as ReplicationTarget)), Promise.resolve()),
  });
  const doubles = (await watcher?.stop()) ?? [];
  log(r);
  console.log(
    `[crash-restart] ${fault} delay=${crashRestartDelayMs ?? o.restartDelayMs} lostAcked=${r.lostAckedWrites}/${r.ackedWrites} outage=${r.writeOutageMs} two-masters=${doubles.length}`,
  );
  const why = JSON.stringify({ ...r, timeline: undefined, after: undefined, doubles: doubles.slice(0, 5) });
  expect(r.healed, why).toBe(true);
  expect(r.ackedWrites, why).toBeGreaterThan(100);
  expect(doubles, `two members answered role:master at once (a second writable primary): ${why}`).toEqual([]);
  // The AOF write window (appendfsync everysec): 2 s of the no-WAIT writers' writes (the figure's writers).
  const noWaitStreams = r.streams.filter((s) => parseStreamName(s.stream).writer === "no-wait").length;
  const aofWindowWrites = Math.ceil((o.rate * noWaitStreams * AOF_HELD_BUFFER_MS) / 1000);
  expect(
    r.lostAckedWrites,
    `acknowledged writes lost beyond the 2 s AOF write window (${aofWindowWrites}): ${why}`,
  ).toBeLessThanOrEqual(aofWindowWrites);
  // The restarted member saw live replicas: it handed over instead of serving its own data.
  const startLog = victim?.proc?.stderr() ?? "";
  expect(startLog, "the restarted primary's start log").toContain("start.sh:");
  expect(startLog, "the restarted primary's start log").not.toContain("starting as the primary");
  return r;
}

describe("crash and in-place restart of the replication primary (real processes, down-after 2 s)", () => {
  for (const delay of [1000, 1800, 2500]) {
    it(`crash-restart after ${delay} ms: one writable primary at a time, acknowledged loss within the AOF write window, the server's AOF reading in the row`, async () => {
      const r = await crashDrill("crash-restart", delay);
      expect(r.faultDescription).toContain(`after ${delay} ms`);
      const aof = r.aofAtKill;
      expect(aof, "the killed primary's INFO persistence read before the kill").toBeDefined();
      expect(Number.isInteger(aof?.bufferBytes) && aof!.bufferBytes >= 0).toBe(true);
      expect(aof?.heldWritesEstimate).not.toBeNull();
      console.log(`[crash-restart] ${renderAofAtKill(aof!)}; the ledger: ${r.lostAckedWrites} acknowledged lost`);
    }, 180_000);
  }

  it("primary (back after 3 s, past down-after): one writable primary at a time, acknowledged loss within the AOF write window", async () => {
    await crashDrill("primary");
  }, 180_000);
});
