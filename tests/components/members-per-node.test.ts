/**
 * Where Karpenter launches the Valkey pool's nodes, no node runs two members of a release: the members
 * carry a required per-node anti-affinity over each other (with only the soft one, real Karpenter
 * launched a node per member and kube-scheduler still put two members on one: tests/e2e/support/karpenter-decides.ts).
 * On a fixed set of nodes (byo without a managed NodePool, kube:local) it stays soft: fewer nodes than
 * members must still run them all.
 */
import { describe, expect, it } from "vitest";
import { valkeyPoolWorkloads } from "../../components/capacity/pod-inventory.js";
import { karpenterLaunchesNodes } from "../../components/shared.js";
import { parseStackConfig } from "../../config/schema.js";
import { byoPlacement, karpenterPlacement } from "../../stacks/platform.js";

const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"];
const BYO = { kubeconfig: "/dev/null" };

function memberAntiAffinity(input: Record<string, unknown>, karpenter: boolean) {
  const { config } = parseStackConfig({ aws: { zones: ZONES }, ...input });
  const placement = karpenter ? karpenterPlacement(config) : byoPlacement(config);
  const [valkey] = valkeyPoolWorkloads(config, placement);
  return { config, anti: valkey?.template.spec?.affinity?.podAntiAffinity, labels: valkey?.template.metadata?.labels };
}

describe("members per node", () => {
  for (const mode of ["cluster", "replication"] as const) {
    it(`${mode}: a Karpenter pool requires one member per node; the inventory's own rendering agrees`, () => {
      const { anti, labels, config } = memberAntiAffinity({ valkey: { mode } }, true);
      const required = anti?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
      expect(required).toHaveLength(1);
      expect(required[0]?.topologyKey).toBe("kubernetes.io/hostname");
      // The selector picks the members themselves (and so no Sentinel or HAProxy pod).
      expect(labels).toMatchObject(required[0]?.labelSelector?.matchLabels ?? { none: "selected" });
      const selector = Object.entries(required[0]?.labelSelector?.matchLabels ?? {});
      for (const other of valkeyPoolWorkloads(config).slice(1)) {
        const otherLabels: Record<string, string> = other.template.metadata?.labels ?? {};
        expect(
          selector.every(([k, v]) => otherLabels[k] === v),
          other.name,
        ).toBe(false);
      }
      expect(anti?.preferredDuringSchedulingIgnoredDuringExecution).toHaveLength(1);
      expect(karpenterLaunchesNodes(config)).toBe(true);
      const [inventory] = valkeyPoolWorkloads(config);
      expect(inventory?.template.spec?.affinity?.podAntiAffinity).toEqual(anti);
    });
    it(`${mode}: a fixed set of nodes (byo) keeps the soft rule only`, () => {
      const { anti, config } = memberAntiAffinity({ platform: "byo", byo: BYO, valkey: { mode } }, false);
      expect(anti?.requiredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
      expect(anti?.preferredDuringSchedulingIgnoredDuringExecution).toHaveLength(1);
      expect(karpenterLaunchesNodes(config)).toBe(false);
      const [inventory] = valkeyPoolWorkloads(config);
      expect(inventory?.template.spec?.affinity?.podAntiAffinity).toEqual(anti);
    });
  }
  it("byo with a managed NodePool is a Karpenter pool", () => {
    const byo = { ...BYO, manageKarpenterNodePool: true, karpenterNodeRole: "r", karpenterDiscoveryTag: "t" };
    const { config } = parseStackConfig({ platform: "byo", aws: { zones: ZONES }, byo });
    expect(karpenterLaunchesNodes(config)).toBe(true);
  });
});
