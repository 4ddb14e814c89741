/**
 * A rolling upgrade on real pods, under a write load (tests/pods/byo-stack.test.ts runs it after
 * the first `up` of each mode, whose pods run the `valkey-previous` image): the stack's
 * `valkey.image` is changed to the `valkey` image (benchmark and drills off) and `pulumi up` runs while the
 * FailureDrill's own
 * load Job (the same builder and bundle, a real pod on the node without Valkey) writes through
 * the release's endpoints. Then:
 *  - every member and Sentinel pod is new, runs the new image, and was started in the order the
 *    RollingRestart step reports (their start times, second resolution, never decreasing along
 *    that order);
 *  - the order is the one roll-plan.ts promises (replication: the Sentinels, the replicas, the
 *    primary of before last; cluster: per shard the replica, CLUSTER FAILOVER to it, the old primary);
 *  - no acknowledged write is lost (the upgrade's bound is 0), nor a WAIT-confirmed one, every
 *    acknowledged key read back through the checks' port-forward connector.
 * The figures are printed for docs/drills.md.
 */
import { expectClusterRollOrder } from "../../support/roll-order.js";
import { expect } from "vitest";
import type { RollStepTiming } from "../../../core/roll/rolling-restart.js";
import { tail } from "../../e2e/support/pulumi-harness.js";
import {
  drillInputs,
  figuresLine,
  setChangeAlone,
  underWriteLoad,
  verified,
  verifierInputs,
  type DrillInputs,
  type PodList,
  type UpgradeContext,
} from "./write-load.js";

export type { DrillInputs, UpgradeContext } from "./write-load.js";

/**
 * Returns the release inputs it read from the drills step (the upgrade `up` switches the drills off: later checks reuse
 * them).
 */
export async function expectUpgradeUnderLoad(c: UpgradeContext): Promise<DrillInputs> {
  const { api, cluster, NS, mode } = c;
  const newImage = cluster.images.valkey as string;
  const i = await drillInputs(c.stack);
  const selectors = [i.selector, ...(i.sentinel === undefined ? [] : [i.sentinel.selector])];
  const pods = async () =>
    (
      await Promise.all(
        selectors.map((sel) =>
          api<PodList>("GET", `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(sel)}`),
        ),
      )
    ).flatMap((r) => r.body.items);
  const before = await pods();
  expect(before.map((p) => p.spec.containers[0]?.image)).toEqual(before.map(() => c.valkey.image));

  // The primary right before the upgrade (the first up's drills moved it since its report).
  let primaryBefore = "";
  const {
    result: up,
    figures: f,
    changeMs: upMs,
  } = await underWriteLoad(
    c,
    i,
    "upgrade",
    async () => {
      // Only the image changes for the release; the benchmark (its Job runs valkey.image) and the
      // drills are switched off so that this `up` is the upgrade alone (the benchmark would re-run
      // on the new image, into the first run's keys at maxmemory).
      await setChangeAlone(c.stack, { valkey: { ...c.valkey, image: newImage } });
      return c.stack.stack.up({ onOutput: (o) => c.stack.log.push(o) });
    },
    async () => {
      primaryBefore = await verified(verifierInputs(c, i), (v) =>
        v.verify().then((r) => r.shards[0]?.primary.address ?? ""),
      );
    },
  );
  expect(up.summary.result, tail(c.stack.log)).toBe("succeeded");
  const rollout = (
    up.outputs.report?.value as {
      rollout: { steps: RollStepTiming[]; restartedPods: string[]; totalMs: number } | null;
    }
  ).rollout;
  if (rollout === null) throw new Error("the report has no rollout after the upgrade");
  console.log(
    `[pods] ${mode} upgrade ${String(c.valkey.image)} -> ${newImage}: up ${Math.round(upMs / 1000)} s, roll ${Math.round(rollout.totalMs / 1000)} s; ${figuresLine(f)}\n` +
      rollout.steps
        .map((s, n) => `  ${n + 1}. ${s.step}: at ${(s.startMs / 1000).toFixed(1)} s, ${(s.ms / 1000).toFixed(1)} s`)
        .join("\n") +
      "\n" +
      // Each stream's longest gap, on the up's clock (the roll starts a few seconds into the up).
      f.streams
        .map(
          (x) =>
            `  outage of ${x.stream}: ${Math.round(x.writeOutageMs)} ms, from ${(x.outageFromMs / 1000).toFixed(1)} s to ${(x.outageToMs / 1000).toFixed(1)} s after the up started`,
        )
        .join("\n"),
  );
  expect(f.ackedWrites).toBeGreaterThan(100);
  expect(f.lostWaitedWrites, JSON.stringify(f.streams.map((s) => s.lostKeys))).toBe(0);
  expect(f.lostAckedWrites, JSON.stringify(f.streams.map((s) => s.lostKeys))).toBe(0);
  expect(f.unknownWrites).toBe(0);
  // Replication: the only write stop is the primary's hand-over (the switchover drill: ~3 s on
  // these pods). Before the roll waited for HAProxy to count every Sentinel again between
  // Sentinel restarts, the write endpoint was closed for 23.7 s (a majority of stale Sentinel IPs).
  if (mode === "replication") expect(f.writeOutageMs, "write outage through the roll").toBeLessThan(15_000);

  // Every pod new, on the new image, started in the order the step reports.
  const after = await pods();
  expect(after.map((p) => p.spec.containers[0]?.image)).toEqual(after.map(() => newImage));
  expect(
    after.filter((p) => before.some((b) => b.metadata.uid === p.metadata.uid)).map((p) => p.metadata.name),
  ).toEqual([]);
  expect([...rollout.restartedPods].sort()).toEqual(after.map((p) => p.metadata.name).sort());
  const started = rollout.restartedPods.map((n) =>
    Date.parse(after.find((p) => p.metadata.name === n)?.status.startTime ?? ""),
  );
  started.forEach(
    (t, n) =>
      n > 0 &&
      expect(t, `${rollout.restartedPods[n]} started before ${rollout.restartedPods[n - 1]}`).toBeGreaterThanOrEqual(
        started[n - 1] as number,
      ),
  );
  const kinds = rollout.steps.map((s) => s.kind);
  if (mode === "replication") {
    expect(kinds).toEqual(["sentinel", "sentinel", "sentinel", "replica", "replica", "replica", "primary"]);
    const primaryPod = primaryBefore.split(".")[0];
    expect(rollout.restartedPods.at(-1)).toBe(primaryPod);
  } else {
    expectClusterRollOrder(rollout.steps, 3, false);
  }
  return i;
}

/**
 * A change of a live directive only (`valkey.maxmemoryPolicy`): `pulumi up` restarts no pod (the
 * members' template hash leaves the live lines out) and the LiveConfig step sets it on every
 * member: each member's CONFIG GET answers the new value, every pod keeps its uid.
 */
export async function expectLiveConfigChange(
  c: UpgradeContext,
  valkey: Record<string, unknown>,
  i: DrillInputs,
): Promise<void> {
  const uids = async () =>
    (
      await c.api<PodList>("GET", `/api/v1/namespaces/${c.NS}/pods?labelSelector=${encodeURIComponent(i.selector)}`)
    ).body.items
      .map((p) => `${p.metadata.name}/${p.metadata.uid}`)
      .sort();
  const before = await uids();
  await c.stack.stack.setConfig("valkey-on-eks:valkey", {
    value: JSON.stringify({ ...valkey, maxmemoryPolicy: "allkeys-lru" }),
  });
  const upAt = Date.now();
  const up = await c.stack.stack.up({ onOutput: (o) => c.stack.log.push(o) });
  expect(up.summary.result, tail(c.stack.log)).toBe("succeeded");
  expect(up.outputs.report?.value, "the report").toBeDefined();
  expect(await uids(), "no member pod restarted").toEqual(before);
  const policies = await verified(verifierInputs(c, i), async (v) => {
    const r = await v.verify();
    const members = r.shards.flatMap((s) => [s.primary.address, ...s.replicas.map((x) => x.address)]);
    return Promise.all(
      members.map(async (m) => {
        const client = await v.connector.connect({
          host: m.slice(0, m.lastIndexOf(":")),
          port: Number(m.slice(m.lastIndexOf(":") + 1)),
        });
        try {
          return `${m} ${String(((await client.call("CONFIG", "GET", "maxmemory-policy")) as string[])[1])}`;
        } finally {
          client.disconnect();
        }
      }),
    );
  });
  console.log(
    `[pods] ${c.mode} live config (maxmemory-policy allkeys-lru): up ${Math.round((Date.now() - upAt) / 1000)} s, no restart; ${policies.join(", ")}`,
  );
  expect(policies.length).toBe(before.length);
  for (const p of policies) expect(p).toMatch(/ allkeys-lru$/);
}
