/**
 * The Sentinels' stalled-failover nudge (pod/scripts/sentinel-start.sh) on real processes: three
 * Sentinels started by the rendered sentinel-start.sh, 1 primary + 2 replicas by the rendered
 * start script. A failover aborted for want of a promotable replica holds every Sentinel back for
 * 2 × failover-timeout (sentinel.c); with the primary's pod gone for good nobody else asks. Here the
 * replicas are made unpromotable (replica-priority 0), the primary is killed and not restarted,
 * the leader aborts (-failover-abort-no-good-slave), then the replicas are made promotable again.
 *
 * - Promotable soon after the loss: the failover must follow within seconds (the nudge's next ask),
 *   not after the 2 × failover-timeout block, and one Sentinel alone must have asked.
 * - Promotable only after the replicas' link has been down longer than 10 × down-after: an asked
 *   failover would abort there and leave the asked Sentinel unable to pick any replica for the rest
 *   of the outage (SENTINEL FAILOVER restarts its down clock), so the nudge must not ask, and the
 *   Sentinels' own retry must then fail over.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killHard, SentinelTopology, type Member } from "../../harness/local/sentinel-topology.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { collectSentinels } from "../../core/verify/sentinel-analysis.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { SENTINEL_NUDGE_RETRY_SECONDS } from "../../pod/sentinel-start-script.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;

interface SentinelEvent {
  at: number;
  channel: string;
  text: string;
}

/** Every Sentinel sees every replica at `p` (from its next INFO of it, a second apart). */
async function sentinelsSee(t: SentinelTopology, replicas: readonly Member[], p: number): Promise<void> {
  const connector = new DirectConnector({ password, connectTimeoutMs: 1000, commandTimeoutMs: 1000 });
  await pollUntil(
    async () => {
      for (const c of await collectSentinels(connector, t.sentinelEndpoints, t.masterName)) {
        const off = (c.replicas ?? []).find((r) => replicas.some((m) => m.address === r.address) && r.priority !== p);
        if (c.error !== undefined || off !== undefined)
          return `${c.address} ${c.error ?? `sees ${off?.address} at ${off?.priority}`}`;
      }
      return true;
    },
    { timeoutMs: 15_000, what: `every Sentinel to see the replicas at replica-priority ${p}` },
  );
}

/** What each Sentinel said and saw, for a failure's message: the events since `from`, every Sentinel's view and log. */
async function diagnosis(t: SentinelTopology, events: readonly SentinelEvent[], from: number): Promise<string> {
  const seen = events.map((e) => `${((e.at - from) / 1000).toFixed(2)}s ${e.channel} ${e.text}`).join("\n");
  const logs = await Promise.all(
    t.sentinels.map(async (s) => {
      const c = new Redis({ host: s.host, port: s.port, password, lazyConnect: true, maxRetriesPerRequest: 0 });
      c.on("error", () => undefined);
      const view = await Promise.all([
        c.call("SENTINEL", "MASTER", t.masterName),
        c.call("SENTINEL", "REPLICAS", t.masterName),
      ])
        .then((r) => JSON.stringify(r))
        .catch((e: unknown) => String(e))
        .finally(() => c.disconnect());
      const stderr = (s.proc?.stderr() ?? "").split("\n").slice(-20).join("\n");
      return `--- ${s.address}\nSENTINEL MASTER, REPLICAS: ${view}\n${s.proc?.logTail(40) ?? ""}\n${stderr}`;
    }),
  );
  return `events (s after the replicas became promotable):\n${seen}\n${logs.join("\n")}`;
}

/**
 * Kills the primary of `t` with its replicas unpromotable, waits for the leader's abort, lets
 * `beforePromotable` run, makes the replicas promotable and waits (up to `switchWithinMs`) for
 * +switch-master; returns every Sentinel event with the times that matter.
 */
async function abortThenPromote(
  t: SentinelTopology,
  o: { beforePromotable: (killedAt: number) => Promise<void>; switchWithinMs: number },
) {
  await t.waitForSentinelViews();
  const primary = t.member(await t.primaryFromSentinels());
  const replicas = t.members.filter((m) => m !== primary);
  for (const r of replicas) await t.configSet(r, "replica-priority", 0);
  await sentinelsSee(t, replicas, 0);
  const events: SentinelEvent[] = [];
  const subs = t.sentinels.map((s) => {
    const sub = new Redis({ host: s.host, port: s.port, password, lazyConnect: true, maxRetriesPerRequest: 0 });
    sub.on("error", () => undefined);
    sub.on("pmessage", (_p: string, channel: string, text: string) => events.push({ at: Date.now(), channel, text }));
    return sub;
  });
  const first = (channel: string) => events.find((e) => e.channel === channel)?.at;
  try {
    for (const sub of subs) {
      await sub.connect();
      await sub.psubscribe("*");
    }
    const killedAt = Date.now();
    await killHard(primary.proc);
    await pollUntil(
      () => Promise.resolve(first("-failover-abort-no-good-slave") !== undefined ? true : "no abort yet"),
      { timeoutMs: 20_000, intervalMs: 50, what: "the leader's -failover-abort-no-good-slave" },
    );
    const abortedAt = first("-failover-abort-no-good-slave")!;
    await o.beforePromotable(killedAt);
    for (const r of replicas) await t.configSet(r, "replica-priority", 100);
    const promotableAt = Date.now();
    await pollUntil(() => Promise.resolve(first("+switch-master") !== undefined ? true : "no +switch-master yet"), {
      timeoutMs: o.switchWithinMs,
      intervalMs: 50,
      what: "+switch-master after the replicas became promotable",
    }).catch(async (e: unknown) => {
      throw new Error(`${String(e)}\n${await diagnosis(t, events, promotableAt)}`);
    });
    const switchedAt = first("+switch-master")!;
    expect(replicas.map((r) => r.address)).toContain(await t.primaryFromSentinels());
    return { events, killedAt, abortedAt, promotableAt, switchedAt };
  } finally {
    for (const sub of subs) sub.disconnect();
  }
}

/** The Sentinels whose nudge asked for a failover (any answer), and those answered OK. */
function askers(t: SentinelTopology): { asked: string[]; answeredOk: string[] } {
  const log = (s: (typeof t.sentinels)[number]) => s.proc?.stderr() ?? "";
  return {
    asked: t.sentinels.filter((s) => /SENTINEL FAILOVER:/.test(log(s))).map((s) => s.address),
    answeredOk: t.sentinels
      .filter((s) =>
        /the primary is o_down and no Sentinel of .* is failing over .*: SENTINEL FAILOVER: OK/.test(log(s)),
      )
      .map((s) => s.address),
  };
}

/** 1 primary + 2 replicas over three zones and three Sentinels, at the given Sentinel clocks. */
const startTopology = (downAfterMs: number, failoverTimeoutMs: number) =>
  SentinelTopology.start({
    replicas: 2,
    zones: ["a", "b", "c"],
    password,
    downAfterMs,
    failoverTimeoutMs,
    proxy: false,
    hostBase: 176,
  });

describe("the Sentinels' stalled-failover nudge (rendered sentinel-start.sh, real processes)", () => {
  const FAILOVER_TIMEOUT_MS = 30_000;
  let t: SentinelTopology;
  beforeAll(async () => {
    // down-after 3 s: an asked failover can pick a replica whose link has been down up to 10 × 3 s,
    // past a split first vote (a losing candidate stays busy for the 10 s election timeout).
    t = await startTopology(3000, FAILOVER_TIMEOUT_MS);
  }, 120_000);
  afterAll(async () => t?.stopAll());

  it("after an aborted failover (no promotable replica) with the primary gone for good, the failover follows within seconds of a replica becoming promotable and no Sentinel failing over, asked by one Sentinel, not after 2 × failover-timeout", async () => {
    const r = await abortThenPromote(t, { beforePromotable: () => Promise.resolve(), switchWithinMs: 25_000 });
    // Without the nudge the Sentinels try again only 2 × failover-timeout after the abort (60 s).
    // With it: from the moment the replicas are promotable and no Sentinel is failing over (a
    // candidate that lost a split vote stays busy until its election timeout), the Sentinels read
    // the new priority within a second, the nudge asks at its next look (at most
    // SENTINEL_NUDGE_RETRY_SECONDS after its last look that found none fit), then the promotion is
    // confirmed at the Sentinel's next INFO (≤ 1 s).
    const lastAbort = Math.max(
      ...r.events.filter((e) => e.channel.startsWith("-failover-abort") && e.at < r.switchedAt).map((e) => e.at),
    );
    const idleAt = Math.max(r.promotableAt, lastAbort);
    expect(r.switchedAt - r.abortedAt).toBeLessThan(2 * FAILOVER_TIMEOUT_MS);
    expect(r.switchedAt - idleAt).toBeLessThan((SENTINEL_NUDGE_RETRY_SECONDS + 4) * 1000);
    // One Sentinel asked: the first by address; its log says why.
    const { asked, answeredOk } = askers(t);
    expect(answeredOk).toEqual([[...t.sentinels.map((s) => s.address)].sort()[0]]);
    expect(asked, "Sentinels that asked at all").toEqual(answeredOk);
  }, 120_000);
});

describe("the nudge when the replicas lost the primary longer ago than 10 × down-after (rendered sentinel-start.sh, real processes)", () => {
  const DOWN_AFTER_MS = 1000;
  const FAILOVER_TIMEOUT_MS = 10_000;
  let t: SentinelTopology;
  beforeAll(async () => {
    t = await startTopology(DOWN_AFTER_MS, FAILOVER_TIMEOUT_MS);
  }, 120_000);
  afterAll(async () => t?.stopAll());

  it("does not ask (an asked failover would abort and leave that Sentinel unable to pick a replica), says why, and the Sentinels' own retry after 2 × failover-timeout fails over", async () => {
    const r = await abortThenPromote(t, {
      // Past 10 × down-after since the replicas lost their link, with a second of margin.
      beforePromotable: (killedAt) =>
        pollUntil(() => Promise.resolve(Date.now() - killedAt > 11 * DOWN_AFTER_MS || "not yet"), {
          timeoutMs: 30_000,
          what: "11 × down-after since the kill",
        }),
      switchWithinMs: 2 * FAILOVER_TIMEOUT_MS + 15_000,
    });
    expect(askers(t).asked, "Sentinels that asked SENTINEL FAILOVER").toEqual([]);
    const first = t.sentinels.find((s) => s.address === [...t.sentinels.map((x) => x.address)].sort()[0]);
    expect(first?.proc?.stderr()).toMatch(
      /no replica is promotable with its link down less than 10 x down-after-milliseconds ago: not asking/,
    );
    // The failover is the Sentinels' own: no earlier than 2 × failover-timeout after the abort
    // (less the up-to-1 s random desync Sentinel adds to a start).
    expect(r.switchedAt - r.abortedAt).toBeGreaterThan(2 * FAILOVER_TIMEOUT_MS - 1500);
  }, 150_000);
});
