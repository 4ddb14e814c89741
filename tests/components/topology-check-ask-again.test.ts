/**
 * When the TopologyCheck asks a failing verdict again (askAgain): until its deadline always; past
 * it only while a failure is named on a Sentinel in TILT, for at most two TILT periods.
 */
import { describe, expect, it } from "vitest";
import { askAgain, SENTINEL_TILT_PERIOD_MS } from "../../components/steps/topology-check/implementation.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";

const S0 = "10.0.1.1:26379";
const S1 = "10.0.1.2:26379";

function report(o: { ok?: boolean; failureOn?: string; tilt?: string[] }): TopologyReport {
  return {
    ok: o.ok ?? false,
    mode: "replication",
    nodeCount: 2,
    primariesPerZone: {},
    shards: [],
    failures:
      o.ok === true
        ? []
        : [
            {
              code: "SENTINEL_REPLICA_DOWN",
              message: "flags it s_down",
              ...(o.failureOn ? { node: o.failureOn } : {}),
            },
          ],
    sentinels: [S0, S1].map((address) => ({
      address,
      zone: undefined,
      reachable: true,
      agrees: true,
      ...((o.tilt ?? []).includes(address) ? { tilt: true } : {}),
    })),
  };
}

const deadline = 100_000;
const past = (ms: number) => deadline + ms;

describe("askAgain", () => {
  it.each([
    ["a passing verdict is never asked again", report({ ok: true, tilt: [S0] }), deadline - 1, false],
    ["a failing verdict before the deadline", report({}), deadline - 1, true],
    ["past the deadline, no Sentinel in TILT", report({ failureOn: S0 }), deadline, false],
    ["past it, the failure on a Sentinel in TILT", report({ failureOn: S0, tilt: [S0] }), past(1), true],
    [
      "past it, the failure on another Sentinel than the one in TILT",
      report({ failureOn: S1, tilt: [S0] }),
      past(1),
      false,
    ],
    ["past it, a failure on no node, a Sentinel in TILT", report({ tilt: [S0] }), past(1), false],
    [
      "just inside two TILT periods",
      report({ failureOn: S0, tilt: [S0] }),
      past(2 * SENTINEL_TILT_PERIOD_MS - 1),
      true,
    ],
    [
      "two TILT periods past the deadline: the TILT is the finding",
      report({ failureOn: S0, tilt: [S0] }),
      past(2 * SENTINEL_TILT_PERIOD_MS),
      false,
    ],
  ])("%s", (_what, r, now, again) => {
    expect(askAgain(r, now, deadline)).toBe(again);
  });
});
