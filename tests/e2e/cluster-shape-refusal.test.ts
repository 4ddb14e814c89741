/**
 * Cluster shape changes under the real Pulumi engine against a real API server with kwok nodes,
 * real valkey-server processes on the pod IPs (support/pod-valkeys.ts), the bootstrap and checks
 * for real (`direct` connector): what the running cluster cannot take is refused before anything
 * changes; fewer primaries are scaled in before the StatefulSet shrinks.
 *
 *  1. `up` at 3 x 1, write keys; `up` at 4 x 1 (scale-up passes the guard, the bootstrap moves
 *     slots and keys to the new shard), every key still readable.
 *  2. 3 x 1 with checks.bootstrap off (no ClusterScaleIn step): `preview` fails naming
 *     `valkey.cluster.primaries`, and `up` fails the same way, with the StatefulSet still at 8
 *     replicas, all 8 pods in place, every key readable through the cluster and the cluster `ok`.
 *     (3 -> 2 is what the schema already refuses: fewer than 3 primaries lets one zone hold a
 *     majority; 4 -> 3 is the scale-down the schema lets through.)
 *  3. 4 x 2 (another replicas-per-primary): `preview` fails naming
 *     `valkey.cluster.replicasPerPrimary`.
 *  4. 3 x 1 with the bootstrap on: `up` scales in (ClusterScaleIn before the StatefulSet), 6
 *     pods left, every key readable, the cluster `ok` with 6 nodes, the leaving pods' PVCs deleted.
 */
import { Cluster } from "ioredis";
import { describe, expect, it } from "vitest";
import { eventually } from "../support/processes.js";
import { byoPlatformConfig } from "./support/byo-config.js";
import { useE2eContext } from "./support/e2e-context.js";
import { standInForPods, type PodValkeys } from "./support/pod-valkeys.js";
import { createStack, tail, type E2eStack } from "./support/pulumi-harness.js";

const PASSWORD = `e2e-${Math.random().toString(36).slice(2)}-shape`;
const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"];
const NAMESPACE = "valkey-shape";
const KEYS = 300;

const ctx = useE2eContext();

function clusterConfig(primaries: number, replicasPerPrimary: number): Record<string, unknown> {
  return {
    namespace: NAMESPACE,
    mode: "cluster",
    cluster: { primaries, replicasPerPrimary },
    resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "100m", memory: "128Mi" } },
    persistence: { size: "1Gi" },
  };
}

const checks = (bootstrap: boolean) => ({ bootstrap, verify: true, connector: "direct" });

function stackConfig(): Record<string, unknown> {
  return {
    ...byoPlatformConfig(ctx.plane.kubeconfigPath, ZONES),
    valkey: clusterConfig(3, 1),
    benchmark: { enabled: false },
    checks: checks(true),
  };
}

async function up(s: E2eStack): Promise<void> {
  const res = await s.stack.up({ onOutput: (o) => s.log.push(o) });
  expect(res.summary.result, tail(s.log)).toBe("succeeded");
  expect((res.outputs.report?.value as { topology: { ok: boolean } | null }).topology?.ok, tail(s.log)).toBe(true);
}

/** A cluster client through any stand-in server (they announce their pod IPs, reachable here). */
function clusterClient(valkeys: PodValkeys): Cluster {
  const seed = valkeys.servers.get("valkey-cluster-0");
  if (seed === undefined) throw new Error("no server for valkey-cluster-0");
  return new Cluster([{ host: seed.host, port: seed.port }], { redisOptions: { password: PASSWORD } });
}

async function readAll(valkeys: PodValkeys): Promise<number> {
  const c = clusterClient(valkeys);
  try {
    let found = 0;
    for (let i = 0; i < KEYS; i++) if ((await c.get(`shape:${i}`)) === `v${i}`) found++;
    return found;
  } finally {
    c.disconnect();
  }
}

async function podNames(): Promise<string[]> {
  const pods = await ctx.core.listNamespacedPod({
    namespace: NAMESPACE,
    labelSelector: "app.kubernetes.io/name=valkey",
  });
  return pods.items
    .filter((p) => p.metadata?.deletionTimestamp == null)
    .map((p) => p.metadata?.name ?? "?")
    .sort();
}

/** The cluster as a member sees it (CLUSTER INFO), once it says ok. */
async function clusterInfo(valkeys: PodValkeys): Promise<string> {
  const seed = clusterClient(valkeys);
  try {
    return await eventually("cluster_state:ok", 30_000, async () => {
      const text = String(await seed.cluster("INFO"));
      return text.includes("cluster_state:ok") ? text : undefined;
    });
  } finally {
    seed.disconnect();
  }
}

describe("cluster shape changes: refused at preview before anything changes, or scaled in", () => {
  it("3x1 -> 4x1 scales up; 4x1 -> 3x1 without the bootstrap and 4x1 -> 4x2 fail preview and up; 4x1 -> 3x1 with it scales in", async () => {
    const s = await createStack(ctx.env, stackConfig(), { password: PASSWORD });
    const valkeys = standInForPods(ctx.core, NAMESPACE, PASSWORD);
    const setValkey = (p: number, m: number) =>
      s.stack.setConfig("valkey-on-eks:valkey", { value: JSON.stringify(clusterConfig(p, m)) });
    try {
      // 1. 3 x 1 with keys, then a scale-up to 4 x 1 through the guard.
      await up(s);
      const c = clusterClient(valkeys);
      try {
        for (let i = 0; i < KEYS; i++) await c.set(`shape:${i}`, `v${i}`);
      } finally {
        c.disconnect();
      }
      await setValkey(4, 1);
      await up(s);
      expect(valkeys.errors).toEqual([]);
      const eight = Array.from({ length: 8 }, (_, i) => `valkey-cluster-${i}`).sort();
      expect(await podNames()).toEqual(eight);
      expect(await readAll(valkeys)).toBe(KEYS);

      // 2. Fewer primaries with nothing to migrate the slots first: refused by preview, and by up before the
      //    StatefulSet changes.
      await s.stack.setConfig("valkey-on-eks:checks", { value: JSON.stringify(checks(false)) });
      await setValkey(3, 1);
      await expect(s.stack.preview({ onOutput: (o) => s.log.push(o) })).rejects.toThrow(
        /valkey\.cluster\.primaries: lowering it from 4 to 3 is refused/,
      );
      await expect(s.stack.up({ onOutput: (o) => s.log.push(o) })).rejects.toThrow(
        /valkey\.cluster\.primaries: lowering it from 4 to 3 is refused/,
      );
      const sts = await ctx.apps.readNamespacedStatefulSet({ name: "valkey-cluster", namespace: NAMESPACE });
      expect(sts.spec?.replicas, tail(s.log)).toBe(8);
      expect(await podNames()).toEqual(eight);
      expect(await readAll(valkeys)).toBe(KEYS);
      expect(await clusterInfo(valkeys)).toContain("cluster_known_nodes:8");
      await s.stack.setConfig("valkey-on-eks:checks", { value: JSON.stringify(checks(true)) });

      // 3. Another replicas-per-primary: refused by preview.
      await setValkey(4, 2);
      await expect(s.stack.preview({ onOutput: (o) => s.log.push(o) })).rejects.toThrow(
        /valkey\.cluster\.replicasPerPrimary: changing it from 1 to 2 on a running cluster is refused/,
      );
      expect(await podNames()).toEqual(eight);

      // 4. Fewer primaries with the bootstrap on: the slots leave valkey-cluster-6/-7 before the StatefulSet shrinks.
      await setValkey(3, 1);
      await up(s);
      expect(valkeys.errors).toEqual([]);
      expect(await podNames()).toEqual(eight.slice(0, 6));
      expect(await readAll(valkeys)).toBe(KEYS);
      expect(await clusterInfo(valkeys)).toContain("cluster_known_nodes:6");
      const claims = await ctx.core.listNamespacedPersistentVolumeClaim({ namespace: NAMESPACE });
      const left = claims.items
        .filter((c) => c.metadata?.deletionTimestamp == null)
        .map((c) => c.metadata?.name ?? "?");
      expect(
        left.filter((n) => /-valkey-cluster-[67]$/.test(n)),
        left.join(", "),
      ).toEqual([]);

      // Back to the applied shape: nothing to change.
      const again = await s.stack.preview({ onOutput: (o) => s.log.push(o) });
      expect(again.changeSummary.update ?? 0, tail(s.log)).toBe(0);
    } finally {
      await valkeys.stop();
      await s.dispose();
    }
  }, 900_000);
});
