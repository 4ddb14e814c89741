/**
 * crash-restart in cluster mode (rendered pod scripts, real processes, cluster-node-timeout 2 s):
 * a primary SIGKILLed and restarted on its address and data dir (AOF and nodes.conf) after 1.0 s
 * and after 2.5 s (past the node timeout: its replica may be promoted meanwhile). Acknowledged
 * writes read back after heal; the bound is the AOF fsync window (about 1 s of writes).
 */
import { describe, expect, it } from "vitest";
import { parseStreamName } from "../../core/drill/writers.js";
import { ClusterTarget } from "../../harness/drill/cluster-target.js";
import { drillOn } from "../../harness/drill/run-drill.js";
import { log, testOptions, TIMINGS, ZONES } from "./drill-faults.js";

describe("cluster crash-restart (real processes)", () => {
  for (const delay of [1000, 2500]) {
    it(`a primary restarted in place after ${delay} ms: healed, acknowledged loss within the AOF fsync window`, async () => {
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
        // About 1 s of the no-WAIT writers' writes (the figure's writers).
        expect(r.lostAckedWrites, why).toBeLessThanOrEqual(
          o.rate * r.streams.filter((s) => parseStreamName(s.stream).writer === "no-wait").length,
        );
      } finally {
        await target.stop();
      }
    }, 150_000);
  }
});
