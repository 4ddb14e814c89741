/**
 * crash-restart in cluster mode (rendered pod scripts, real processes, cluster-node-timeout 2 s):
 * a primary SIGKILLed and restarted on its address and data dir (AOF and nodes.conf) after 1.0 s
 * and after 2.5 s (past the node timeout: its replica may be promoted meanwhile). Acknowledged
 * writes read back after heal; the bound is the AOF write window (2 s of writes with everysec). The
 * row carries the killed primary's own AOF reading right before the kill (aof-at-kill.ts).
 */
import { describe, expect, it } from "vitest";
import { AOF_HELD_BUFFER_MS } from "../../core/drill/bounds.js";
import { parseStreamName } from "../../core/drill/writers.js";
import { ClusterTarget } from "../../harness/drill/cluster-target.js";
import { drillOn } from "../../harness/drill/run-drill.js";
import { log, testOptions, TIMINGS, ZONES } from "./drill-faults.js";

describe("cluster crash-restart (real processes)", () => {
  for (const delay of [1000, 2500]) {
    it(`a primary restarted in place after ${delay} ms: healed, acknowledged loss within the AOF write window, the server's AOF reading in the row`, async () => {
      const target = await ClusterTarget.start({
        ...TIMINGS,
        crashRestartDelayMs: delay,
        primaries: 3,
        replicasPerPrimary: 1,
        zones: ZONES,
        password: "crash-restart",
      });
      try {
        const o = testOptions("cluster", "crash-restart");
        const r = await drillOn(target, o);
        log(r);
        const why = JSON.stringify({ ...r, timeline: undefined, after: undefined });
        expect(r.faultDescription, why).toContain(`after ${delay} ms`);
        expect(r.healed, why).toBe(true);
        expect(r.ackedWrites, why).toBeGreaterThan(100);
        // The AOF write window, 2 s of the no-WAIT writers' writes (the figure's writers).
        const noWaitStreams = r.streams.filter((s) => parseStreamName(s.stream).writer === "no-wait").length;
        expect(r.lostAckedWrites, why).toBeLessThanOrEqual(
          Math.ceil((o.rate * noWaitStreams * AOF_HELD_BUFFER_MS) / 1000),
        );
        expect(r.aofAtKill, `the killed primary's INFO persistence read before the kill: ${why}`).toBeDefined();
        expect(r.aofAtKill?.heldWritesEstimate, why).not.toBeNull();
      } finally {
        await target.stop();
      }
    }, 150_000);
  }
});
