/**
 * The cluster roll's order, as both the local upgrade drill and the real-pods upgrade check it:
 * no member restarted while it is a primary, and per shard (numbered by slots, named in each
 * step's text) two restarts with at most one CLUSTER FAILOVER of ours between them. The AZ
 * failback loop may hand a shard's primary to its just-restarted replica before our failover
 * (CI saw it on the third shard): the plan reads roles live, so that shard needs none.
 */
import { expect } from "vitest";
import type { RollStepTiming } from "../../core/roll/rolling-restart.js";

/** `stableAddresses`: members come back on the address they had (local processes; a pod gets a new IP). */
export function expectClusterRollOrder(
  steps: readonly RollStepTiming[],
  shards: number,
  stableAddresses: boolean,
): void {
  const why = JSON.stringify(steps.map((s) => s.step));
  expect(
    steps.every((s) => s.kind === "failover" || s.kind === "replica"),
    why,
  ).toBe(true);
  for (let shard = 0; shard < shards; shard++) {
    const kinds = steps.filter((s) => new RegExp(`shard ${shard}\\b`).test(s.step)).map((s) => s.kind);
    expect(
      [
        ["replica", "failover", "replica"],
        ["replica", "replica"],
      ],
      `shard ${shard}: ${why}`,
    ).toContainEqual(kinds);
  }
  expect(
    steps.filter((s) => s.kind === "failover").length,
    `at least one failover of ours: ${why}`,
  ).toBeGreaterThanOrEqual(1);
  // Each failover promotes the replica restarted just before it.
  if (stableAddresses)
    steps.forEach((s, i) => s.kind === "failover" && expect(s.address, why).toBe(steps[i - 1]?.address));
}
