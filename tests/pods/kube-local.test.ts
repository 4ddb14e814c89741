/**
 * kube:local on this machine: `up` starts the real cluster (control plane, three nodes Ready with
 * their zones, cluster DNS answering), a second `up` is a no-op, and `down` leaves nothing behind:
 * no process, cgroup, network namespace, host link or address, mount or state directory; a second
 * `down` is a no-op too. Needs root and `install.sh --real-cluster` (skipped with the reason
 * otherwise). Project `pods` (npm run test:pods), not part of `npm test` yet.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { down, status, STATE_DIR, up } from "../../apps/kube-local/cluster.js";
import { leftovers } from "../../apps/kube-local/host.js";
import { clusterPlan, DEFAULT_ZONES } from "../../apps/kube-local/plan.js";
import { podsSkipReason } from "./support/byo-on-pods.js";

const reason = podsSkipReason({ pulumi: false });

describe.skipIf(reason !== "")(`kube:local up/down${reason ? ` (skipped: ${reason})` : ""}`, () => {
  const plan = clusterPlan(STATE_DIR);

  it(
    "up: three Ready nodes with their zones and DNS; up again is a no-op; down leaves nothing",
    { timeout: 900_000 },
    async () => {
      const log: string[] = [];
      await down(); // a cold start, whatever an earlier file left running
      expect(leftovers(plan)).toEqual([]);
      try {
        const s = await up((m) => log.push(m));
        expect(s.nodes.map((n) => [n.zone, n.ready])).toEqual(DEFAULT_ZONES.map((z) => [z, true]));
        expect(existsSync(s.kubeconfig)).toBe(true);
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
