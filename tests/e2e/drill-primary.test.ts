/**
 * The `primary` failure drill of the deployed stack, in both modes, under the real Pulumi engine
 * against a real kube-apiserver with kwok nodes: `pulumi up` with `drills.enabled` runs the
 * FailureDrill step after the checks. Everything the step touches is real except the kubelet:
 *  - the Valkey, Sentinel and HAProxy pods are real servers on the pod IPs (support/pod-valkeys.ts);
 *    the step deletes the primary's pod through the API (grace 0), the stand-in SIGKILLs its server
 *    at once and, when the StatefulSet controller has recreated the pod and it has a new IP (the
 *    plane's freshPodIps), starts it again on that address with the same data directory;
 *  - the load is the step's own Job: its pod runs the step's bundled load.mjs with this process's
 *    Node (support/drill-load-pods.ts), its records come back through `pods/log`;
 *  - recovery is the step's verifier through the `direct` connector on the pod IPs.
 * Benchmark off (not needed here). Each test destroys its stack.
 */
import { describe, expect, it } from "vitest";
import { byoPlatformConfig, SMALL_VALKEY_PODS } from "./support/byo-config.js";
import { addClientNodeOnceValkeyPlaced } from "./support/client-node.js";
import { standInForDrillLoadJobs } from "./support/drill-load-pods.js";
import { namespaceDeleted, useE2eContext } from "./support/e2e-context.js";
import { standInForPods } from "./support/pod-valkeys.js";
import { createStack, tail } from "./support/pulumi-harness.js";

const PASSWORD = `e2e-${Math.random().toString(36).slice(2)}-drill`;
const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"];
const LOAD_NODE = "kwok-drill-load";
/** Bounds this file asserts: recovery within the step's timeout, the outage within the load. */
const DRILLS = { enabled: true, faults: ["primary"], rate: 20, preFaultS: 3, loadS: 45, timeoutS: 180 };

/** A random /16 away from the per-worker defaults' usual values (127.65, 127.66): e2e runs of other worktrees use those. */
const POD_CIDR = `127.${80 + Math.floor(Math.random() * 16)}.0.0/16`;
const ctx = useE2eContext(undefined, { holdJobPods: true, freshPodIps: true, podCidr: POD_CIDR });

interface DrillRow {
  mode: string;
  fault: string;
  ok: boolean;
  healed: boolean;
  faultDescription: string;
  streams: { stream: string }[];
  recoveryMs: number | null;
  writeOutageMs: number;
  writes: number;
  ackedWrites: number;
  lostAckedWrites: number;
  waitedWrites: number;
  lostWaitedWrites: number;
  after: { ok: boolean; failures: unknown[]; shards: { primary: { address: string } }[] };
  loadPod: string;
}

async function drill(mode: "replication" | "cluster"): Promise<void> {
  const namespace = `drill-${mode}`;
  const members = mode === "cluster" ? 6 : 4;
  const config = {
    ...byoPlatformConfig(ctx.plane.kubeconfigPath, ZONES),
    valkey: { namespace, mode, replication: { replicas: 3 }, cluster: { primaries: 3, replicasPerPrimary: 1 }, ...SMALL_VALKEY_PODS },
    benchmark: { enabled: false },
    checks: { bootstrap: true, verify: true, connector: "direct" },
    drills: DRILLS,
  };
  const s = await createStack(ctx.env, config, { password: PASSWORD });
  const valkeys = standInForPods(ctx.core, namespace, PASSWORD);
  const loads = standInForDrillLoadJobs(ctx.core, ctx.plane, namespace);
  const loadNode = addClientNodeOnceValkeyPlaced(ctx, namespace, members, LOAD_NODE, ZONES[0] as string);
  loadNode.catch(() => undefined); // awaited below; a failed up must not leave it unhandled
  let failure: unknown;
  try {
    const started = Date.now();
    const up = await s.stack.up({ onOutput: (o) => s.log.push(o) }).catch((e: unknown) => {
      // What the stand-ins saw, for a drill that did not heal.
      const servers = [...valkeys.servers].map(([pod, v]) => `--- ${pod} ${v.address} alive=${v.alive()}\n${v.logTail(12)}\n${v.stderr().slice(-800)}`);
      const seen = JSON.stringify({ restarts: valkeys.restarts, errors: valkeys.errors, loadErrors: loads.errors, podIpErrors: ctx.plane.podIpErrors });
      throw new Error(`${(e as Error).message.slice(-1500)}\n${seen}\n${servers.join("\n")}`);
    });
    const upMs = Date.now() - started;
    await loadNode;
    expect(up.summary.result, tail(s.log)).toBe("succeeded");
    expect(valkeys.errors).toEqual([]);
    expect(loads.errors).toEqual([]);
    expect(ctx.plane.podIpErrors).toEqual([]);
    const report = up.outputs.report?.value as { drills: DrillRow[] | null; drillsCsv: string | null };
    const rows = report.drills ?? [];
    expect(rows).toHaveLength(1);
    const row = rows[0] as DrillRow;
    console.log(`${mode} primary drill (up ${Math.round(upMs / 1000)} s): ${JSON.stringify({ ...row, after: row.after.ok })}`);
    expect([row.mode, row.fault]).toEqual([mode, "primary"]);
    expect(row.healed).toBe(true);
    // Measured, not defaulted: the fault → verifier passing, and the longest gap between two acknowledged writes.
    expect(row.recoveryMs).toBeGreaterThan(0);
    expect(row.recoveryMs).toBeLessThan(DRILLS.timeoutS * 1000);
    expect(row.writeOutageMs).toBeGreaterThan(0);
    expect(row.writeOutageMs).toBeLessThan(DRILLS.loadS * 1000);
    expect(row.ackedWrites).toBeGreaterThan(0);
    expect(row.ackedWrites).toBeLessThanOrEqual(row.writes);
    expect(row.lostAckedWrites).toBeGreaterThanOrEqual(0);
    expect(row.lostWaitedWrites).toBeGreaterThanOrEqual(0);
    expect(row.lostWaitedWrites).toBeLessThanOrEqual(row.waitedWrites);
    expect(row.streams.length).toBe(mode === "replication" ? 2 : 1);
    expect(report.drillsCsv?.split("\n").filter((l) => l !== "")).toHaveLength(2);
    // The verifier's report after recovery passes, with a primary other than the deleted pod.
    expect(row.after.ok).toBe(true);
    expect(row.after.failures).toEqual([]);

    // The primary's pod was deleted through the API and came back under a new UID on a new IP;
    // its server was killed and restarted there by the stand-in.
    const m = /^primary pod (\S+) \((\S+) on (\S+)\) deleted, grace 0$/.exec(row.faultDescription);
    expect(m, row.faultDescription).not.toBeNull();
    const [, podName = "", oldIp = ""] = m ?? [];
    const restart = valkeys.restarts.find((r) => r.pod === podName);
    expect(restart, `a restart of ${podName}`).toBeDefined();
    expect(restart?.oldIp).toBe(oldIp);
    expect(restart?.newIp).toBeDefined();
    expect(restart?.newIp).not.toBe(oldIp);
    expect(restart?.newUid).not.toBe(restart?.oldUid);
    const now = await ctx.core.readNamespacedPod({ name: podName, namespace });
    expect(now.metadata?.uid).toBe(restart?.newUid);
    expect(now.status?.podIP).toBe(restart?.newIp);
    expect(row.after.shards.map((sh) => sh.primary.address.split(":")[0])).not.toContain(oldIp);
    // The load pod's log was the one read (and its Job is gone: the step deletes it).
    expect(loads.logs.has(row.loadPod)).toBe(true);
  } catch (e) {
    failure = e;
    throw e;
  } finally {
    await ctx.plane.api("DELETE", `/api/v1/nodes/${LOAD_NODE}`, undefined, { allow: [404] }).catch(() => undefined);
    // Each stand-in gets 120 s to stop (a hang names itself instead of eating the test's timeout).
    const bounded = (what: string, p: Promise<void>): Promise<void> =>
      Promise.race([p, new Promise<void>((_, reject) => setTimeout(() => reject(new Error(`${what} did not stop within 120 s`)), 120_000).unref())]);
    await bounded("the drill-load stand-in", loads.stop())
      .finally(() => bounded(`the Valkey stand-in (${valkeys.describe()})`, valkeys.stop()).finally(() => s.dispose()))
      .catch((e: unknown) => {
        throw new Error(`${(e as Error).message}; the test's own failure, if any: ${failure === undefined ? "none" : (failure as Error).message}`);
      });
  }
  expect(valkeys.errors, "the Valkey stand-in stopped cleanly").toEqual([]);
  await namespaceDeleted(ctx, namespace, 120_000);
}

describe("the primary failure drill of the deployed stack", () => {
  it("replication under Sentinel: the primary's pod deleted (grace 0) mid-load, healed, figures measured, the pod back on a new IP", async () => {
    await drill("replication");
  }, 900_000);

  it("cluster: the primary's pod deleted (grace 0) mid-load, healed, figures measured, the pod back on a new IP", async () => {
    await drill("cluster");
  }, 900_000);
});
