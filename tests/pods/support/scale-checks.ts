/**
 * Cluster mode on real pods: `valkey.cluster.primaries` raised from P to P + 1 and lowered back,
 * each by one `pulumi up` under the drills' write load (write-load.ts), benchmark and drills off:
 *  - the scale-up: 2 (1 + M) new pods, the new shard gets its splitSlots share of the slots with
 *    their keys (ClusterBootstrap), its replica in another zone;
 *  - the scale-in: the ClusterScaleIn step moves the slots off the pods above the shape (atomic
 *    slot migration on the image's Valkey 9), re-pairs, makes every member forget them, deletes
 *    their PVCs, and only then the StatefulSet shrinks;
 *  - after each: the verifier passes with the new shape (P' primaries, each with its share and a
 *    cross-zone replica), no acknowledged and no WAIT-confirmed write lost, every acknowledged
 *    key read back.
 * The figures are printed for docs/day-2.md.
 */
import { expect } from "vitest";
import { slotCount, splitSlots } from "../../../core/topology/slots.js";
import { tail } from "../../e2e/support/pulumi-harness.js";
import {
  figuresLine,
  setChangeAlone,
  underWriteLoad,
  verified,
  verifierInputs,
  type DrillInputs,
  type UpgradeContext,
} from "./write-load.js";

interface Claims {
  items: Array<{ metadata: { name: string; deletionTimestamp?: string } }>;
}
interface Pods {
  items: Array<{ metadata: { name: string; deletionTimestamp?: string } }>;
}

/** Changes the primaries to `to` under load, then checks the shape and the ledger; returns the pod names. */
async function scaleTo(c: UpgradeContext, i: DrillInputs, to: number, m: number): Promise<string[]> {
  const { api, NS } = c;
  const shaped: DrillInputs = { ...i, expect: { primaries: to, replicasPerPrimary: m } };
  const all = await c.stack.stack.getAllConfig();
  const valkey = JSON.parse(all["valkey-on-eks:valkey"]?.value ?? "{}") as { cluster?: Record<string, unknown> };
  const from = Number(valkey.cluster?.primaries);
  const {
    result: up,
    figures: f,
    changeMs,
  } = await underWriteLoad(c, shaped, `scale-${to}`, async () => {
    await setChangeAlone(c.stack, { valkey: { ...valkey, cluster: { ...valkey.cluster, primaries: to } } });
    return c.stack.stack.up({ onOutput: (o) => c.stack.log.push(o) });
  });
  expect(up.summary.result, tail(c.stack.log)).toBe("succeeded");
  const report = await verified(verifierInputs(c, shaped), (v) => v.verify());
  console.log(
    `[pods] cluster ${from} x ${m} -> ${to} x ${m}: up ${Math.round(changeMs / 1000)} s; ${figuresLine(f)}; ` +
      `primaries ${report.shards.map((s) => `${s.primary.address} (${s.primary.zone}) ${s.primary.slotCount} slots`).join(", ")}`,
  );
  expect(report.ok, JSON.stringify(report.failures)).toBe(true);
  expect(report.nodeCount, "members the cluster knows").toBe(to * (1 + m));
  expect(report.shards.map((s) => s.primary.slotCount).sort((a, b) => a - b)).toEqual(
    splitSlots(to)
      .map(slotCount)
      .sort((a, b) => a - b),
  );
  for (const s of report.shards) {
    expect(s.replicas.length).toBe(m);
    for (const r of s.replicas) expect(r.zone, `replica ${r.address} of ${s.primary.address}`).not.toBe(s.primary.zone);
  }
  expect(f.ackedWrites).toBeGreaterThan(50);
  expect(f.lostWaitedWrites, JSON.stringify(f.streams.map((s) => s.lostKeys))).toBe(0);
  expect(f.lostAckedWrites, JSON.stringify(f.streams.map((s) => s.lostKeys))).toBe(0);
  expect(f.unknownWrites).toBe(0);
  const pods = (await api<Pods>("GET", `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(i.selector)}`))
    .body.items;
  return pods
    .filter((p) => p.metadata.deletionTimestamp === undefined)
    .map((p) => p.metadata.name)
    .sort();
}

/** P x M -> (P + 1) x M -> P x M on the running release; the leaving pods' claims are deleted. */
export async function expectScaleUpThenIn(
  c: UpgradeContext,
  i: DrillInputs,
  primaries: number,
  m: number,
): Promise<void> {
  const grown = await scaleTo(c, i, primaries + 1, m);
  expect(grown).toHaveLength((primaries + 1) * (1 + m));
  const leaving = grown.filter((n) => Number(n.slice(n.lastIndexOf("-") + 1)) >= primaries * (1 + m));
  expect(leaving).toHaveLength(1 + m);

  const kept = await scaleTo(c, i, primaries, m);
  expect(kept).toEqual(grown.filter((n) => !leaving.includes(n)));
  const claims = (await c.api<Claims>("GET", `/api/v1/namespaces/${c.NS}/persistentvolumeclaims`)).body.items;
  const left = claims.filter((x) => x.metadata.deletionTimestamp === undefined).map((x) => x.metadata.name);
  expect(
    left.filter((n) => leaving.some((p) => n.endsWith(`-${p}`))),
    "the leaving pods' claims are deleted",
  ).toEqual([]);
}
