/**
 * The byo preflight (stacks/byo-preflight.ts → components/capacity/byo-preflight.ts) against the
 * local real cluster: real nodes with their zone labels, local-path as the only StorageClass, Cilium
 * enforcing NetworkPolicy. Each case is a stack file, written and loaded as `pulumi preview` loads
 * one: the pods tier's own byo stack passes with nothing to say; a zone no node is in, a
 * StorageClass the cluster lacks, a node selector no node matches and a zone whose only node is
 * cordoned are each refused naming the key. (A cluster with no NetworkPolicy engine: the e2e
 * plane, tests/e2e/control-plane.test.ts.) Needs root (skipped with the reason otherwise).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { loadStackFile } from "../../config/schema.js";
import { collectByoPreflight, probeByoCluster } from "../../stacks/byo-preflight.js";
import { podsSkipReason, podsStackConfig, STACK_ZONES, usePodsCluster } from "./support/byo-on-pods.js";

const reason = podsSkipReason({ pulumi: true });

describe.skipIf(reason !== "")(
  `byo preflight on the local real cluster${reason ? ` (skipped: ${reason})` : ""}`,
  () => {
    const ctx = usePodsCluster();
    const dir = mkdtempSync(join(tmpdir(), "byo-preflight-"));
    let n = 0;

    /** The pods tier's byo stack with `edit` applied, through a stack file, probed on the live cluster. */
    async function preflight(edit: (c: Record<string, Record<string, unknown>>) => void) {
      const raw = podsStackConfig(ctx.cluster, "replication", "valkey-preflight-pods", {
        benchmark: { enabled: false },
      }) as Record<string, Record<string, unknown>>;
      edit(raw);
      const file = join(dir, `Pulumi.preflight-${++n}.yaml`);
      const config = Object.fromEntries(Object.entries(raw).map(([k, v]) => [`valkey-on-eks:${k}`, v]));
      writeFileSync(file, stringify({ config }));
      const parsed = loadStackFile(file).config;
      return collectByoPreflight(parsed, await probeByoCluster(parsed));
    }

    it("the pods tier's stack passes: every zone has a node, local-path exists, Cilium is found", async () => {
      expect(await preflight(() => undefined)).toEqual({ problems: [], warnings: [] });
    });

    it("a zone no node is in, a StorageClass the cluster lacks, a selector no node matches: each refused by its key", async () => {
      const wrongZone = await preflight((c) => {
        c["aws"] = { zones: [STACK_ZONES[0], STACK_ZONES[1], "us-west-2e"] };
      });
      expect(wrongZone.problems).toEqual([
        expect.stringMatching(
          /^aws\.zones\.2: no node of the cluster carries topology\.kubernetes\.io\/zone=us-west-2e \(the nodes' zones: .*us-west-2a/,
        ),
      ]);
      const storage = await preflight((c) => {
        c["byo"] = { ...c["byo"], storageClass: "gp3" };
      });
      expect(storage.problems).toEqual([
        expect.stringMatching(/^byo\.storageClass: the cluster has no StorageClass "gp3" \(it has: .*local-path/),
      ]);
      const selector = await preflight((c) => {
        c["byo"] = { ...c["byo"], nodeSelector: { "karpenter.sh/nodepool": "nowhere" } };
      });
      expect(selector.problems).toHaveLength(STACK_ZONES.length);
      STACK_ZONES.forEach((z, i) =>
        expect(selector.problems[i]).toMatch(
          new RegExp(`^aws\\.zones\\.${i}: no schedulable node in ${z} matches byo\\.nodeSelector`),
        ),
      );
    });

    it("a zone whose only node is cordoned is refused while it is, and passes once uncordoned", async () => {
      const node = ctx.cluster.nodes.find((x) => x.zone === STACK_ZONES[1]);
      if (node === undefined) throw new Error(`no node in ${STACK_ZONES[1]}`);
      const cordon = (unschedulable: boolean) =>
        ctx.api("PATCH", `/api/v1/nodes/${node.name}`, { spec: { unschedulable } }, "application/merge-patch+json");
      expect((await cordon(true)).status).toBe(200);
      try {
        expect((await preflight(() => undefined)).problems).toEqual([
          expect.stringMatching(
            new RegExp(`^aws\\.zones\\.1: no schedulable node in ${STACK_ZONES[1]} .*\\(nodes there: ${node.name}\\)`),
          ),
        ]);
      } finally {
        expect((await cordon(false)).status).toBe(200);
      }
      expect((await preflight(() => undefined)).problems).toEqual([]);
    });
  },
);
