/**
 * kube:local on this machine, on the cluster the other pods files ran on (this file runs last,
 * tests/support/last-files-sequencer.ts; alone, its `up` starts the cluster cold): three nodes
 * Ready with their zones, cluster DNS answering, a second `up` a no-op; then `down` leaves nothing
 * behind, after real stacks were deployed and destroyed on it: no process, cgroup, network namespace,
 * host link or address, mount or state directory; a second `down` is a no-op too. A cluster someone
 * started before the run is stopped as well. Needs root and `install.sh --real-cluster` (skipped with
 * the reason otherwise).
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { dnsAnswers, down, status, STATE_DIR, up } from "../../apps/kube-local/cluster.js";
import { leftovers } from "../../apps/kube-local/host.js";
import { clusterPlan, DEFAULT_ZONES } from "../../apps/kube-local/plan.js";
import { podsSkipReason } from "./support/byo-on-pods.js";

const reason = podsSkipReason({ pulumi: false });

describe.skipIf(reason !== "")(`kube:local up/down${reason ? ` (skipped: ${reason})` : ""}`, () => {
  const plan = clusterPlan(STATE_DIR);

  it(
    "up: three Ready nodes with their zones and DNS; up again is a no-op; down leaves nothing, after the pods files' stacks",
    { timeout: 900_000 },
    async () => {
      try {
        const s = await up(() => undefined);
        expect(s.nodes.map((n) => [n.zone, n.ready])).toEqual(DEFAULT_ZONES.map((z) => [z, true]));
        expect(existsSync(s.kubeconfig)).toBe(true);
        expect(await dnsAnswers(plan.nodes[0]?.netns ?? "")).toBe(true);
        const again: string[] = [];
        const s2 = await up((m) => again.push(m));
        expect(again).toEqual([]);
        expect(s2.kubeconfig).toBe(s.kubeconfig);
      } finally {
        await down();
      }
      expect(leftovers(plan)).toEqual([]);
      expect(existsSync(STATE_DIR)).toBe(false);
      expect(await status()).toBeUndefined();
      await down();
      expect(leftovers(plan)).toEqual([]);
    },
  );
});
