/**
 * The Sentinels' stalled-failover nudge (pod/scripts/sentinel-start.sh) on real processes: three
 * Sentinels started by the rendered sentinel-start.sh, 1 primary + 2 replicas by the rendered
 * start script. A failover aborted for want of a promotable replica holds every Sentinel back for
 * 2 × failover-timeout (sentinel.c); with the primary's pod gone for good nobody else asks. Here the
 * replicas are made unpromotable (replica-priority 0), the primary is killed and not restarted,
 * the leader aborts (-failover-abort-no-good-slave), then the replicas are made promotable again:
 * the failover must follow within seconds (the nudge's next ask), not after the 2 × 30 s block, and
 * one Sentinel alone must have asked.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killHard, SentinelTopology, type Member } from "../../harness/local/sentinel-topology.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { collectSentinels } from "../../core/verify/sentinel-analysis.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { SENTINEL_NUDGE_RETRY_SECONDS } from "../../pod/sentinel-start-script.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const FAILOVER_TIMEOUT_MS = 30_000;
let t: SentinelTopology;

beforeAll(async () => {
  t = await SentinelTopology.start({
    replicas: 2,
    zones: ["a", "b", "c"],
    password,
    downAfterMs: 1000,
    failoverTimeoutMs: FAILOVER_TIMEOUT_MS,
    proxy: false,
    hostBase: 176,
  });
}, 120_000);
afterAll(async () => t?.stopAll());

/** Every Sentinel sees every replica at `p` (from its next INFO of it, a second apart). */
async function sentinelsSee(replicas: readonly Member[], p: number): Promise<void> {
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

describe("the Sentinels' stalled-failover nudge (rendered sentinel-start.sh, real processes)", () => {
  it("after an aborted failover (no promotable replica) with the primary gone for good, the failover follows within seconds of a replica becoming promotable, asked by one Sentinel, not after 2 × failover-timeout", async () => {
    await t.waitForSentinelViews();
    const primary = t.member(await t.primaryFromSentinels());
    const replicas = t.members.filter((m) => m !== primary);
    for (const r of replicas) await t.configSet(r, "replica-priority", 0);
    await sentinelsSee(replicas, 0);
    // Every Sentinel's events, with the time they arrive.
    const events: Array<{ at: number; channel: string; text: string }> = [];
    const subs = t.sentinels.map((s) => {
      const sub = new Redis({ host: s.host, port: s.port, password, lazyConnect: true, maxRetriesPerRequest: 0 });
      sub.on("error", () => undefined);
      sub.on("pmessage", (_p: string, channel: string, text: string) => events.push({ at: Date.now(), channel, text }));
      return sub;
    });
    try {
      for (const sub of subs) {
        await sub.connect();
        await sub.psubscribe("*");
      }
      await killHard(primary.proc);
      await pollUntil(
        () =>
          Promise.resolve(events.some((e) => e.channel === "-failover-abort-no-good-slave") ? true : "no abort yet"),
        { timeoutMs: 20_000, intervalMs: 50, what: "the leader's -failover-abort-no-good-slave" },
      );
      const abortedAt = events.find((e) => e.channel === "-failover-abort-no-good-slave")!.at;
      for (const r of replicas) await t.configSet(r, "replica-priority", 100);
      const promotableAt = Date.now();
      await pollUntil(
        () => Promise.resolve(events.some((e) => e.channel === "+switch-master") ? true : "no +switch-master yet"),
        { timeoutMs: 25_000, intervalMs: 50, what: "+switch-master after the replicas became promotable" },
      );
      const switchedAt = events.find((e) => e.channel === "+switch-master")!.at;
      // Without the nudge the Sentinels try again only 2 × failover-timeout after the abort (60 s).
      // With it: the Sentinels read the new priority within a second (o_down: INFO every second), then
      // the nudge's next ask (at most SENTINEL_NUDGE_RETRY_SECONDS after its last NOGOODSLAVE), then
      // the promotion confirmed at the Sentinel's next INFO (≤ 1 s).
      expect(switchedAt - abortedAt).toBeLessThan(2 * FAILOVER_TIMEOUT_MS);
      expect(switchedAt - promotableAt).toBeLessThan((SENTINEL_NUDGE_RETRY_SECONDS + 4) * 1000);
      expect(replicas.map((r) => r.address)).toContain(await t.primaryFromSentinels());
      // One Sentinel asked: the first by address; its log says why.
      const asked = t.sentinels.filter((s) =>
        /the primary is o_down and no Sentinel of .* is failing over .*: SENTINEL FAILOVER: OK/.test(
          s.proc?.stderr() ?? "",
        ),
      );
      expect(asked.map((s) => s.address)).toEqual([[...t.sentinels.map((s) => s.address)].sort()[0]]);
      expect(
        t.sentinels.filter((s) => /SENTINEL FAILOVER:/.test(s.proc?.stderr() ?? "")).map((s) => s.address),
        "Sentinels that asked at all",
      ).toEqual(asked.map((s) => s.address));
    } finally {
      for (const sub of subs) sub.disconnect();
    }
  }, 120_000);
});
