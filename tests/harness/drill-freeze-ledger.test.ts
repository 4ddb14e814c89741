/**
 * The confirmed ledger under a frozen cluster primary thawed around the failover (when the load's
 * slot map may still name it): the old primary acknowledges writes for a few ms after SIGCONT,
 * before it learns it was demoted, and those are lost when it rejoins as a replica. A write is
 * WAIT-confirmed only when WAIT was answered in the same pipeline, by the node that acknowledged
 * it while it was still primary; a WAIT answered later by the new primary must not confirm it.
 * The thaw times straddle the failover (cluster-node-timeout 2 s) to catch that window.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ClusterTarget } from "../../harness/drill/cluster-target.js";
import { drillOn } from "../../harness/drill/run-drill.js";
import { sleep } from "../../core/util/poll-until.js";
import { log, testOptions, TIMINGS, ZONES } from "./drill-faults.js";

let target: ClusterTarget | undefined;
afterEach(async () => {
  await sleep(4000);
  await target?.stop();
  target = undefined;
});

describe("confirmed ledger, frozen cluster primary thawed around the failover (real processes)", () => {
  it.each([3000, 3500, 4000])(
    "thawed after %i ms: no lost write counted as WAIT-confirmed",
    async (freezeMs) => {
      target = await ClusterTarget.start({
        ...TIMINGS,
        freezeMs,
        primaries: 3,
        replicasPerPrimary: 1,
        zones: ZONES,
        password: "drill-freeze-ledger",
        hostBase: 220,
      });
      const r = await drillOn(target, { ...testOptions("cluster", "freeze"), freezeMs, rate: 200 });
      log(r);
      expect(r.healed).toBe(true);
      expect(r.lostWaitedWrites, `lost but WAIT-confirmed: ${JSON.stringify(r.streams.map((s) => s.lostKeys))}`).toBe(
        0,
      );
    },
    150_000,
  );
});
