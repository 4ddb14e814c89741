/**
 * The deployed stack's failure drills on real pods (kube:local), both modes: `pulumi up` with
 * `drills.enabled` runs the FailureDrill step after the checks, and everything it touches is real:
 * the write load is a real Job (the Node image, the bundled load.mjs, through the NetworkPolicies
 * and cluster DNS names) on the node without Valkey; the faults go through the API to real
 * kubelets:
 *  - primary: the primary's pod deleted with grace 0 (the kubelet kills the container);
 *  - switchover: the primary's pod evicted through the Eviction API as a node drain does (its
 *    PodDisruptionBudget honoured): the kubelet runs the preStop hook with the grace period, and
 *    the planned switchover must beat failure detection (the write outage below
 *    down-after-milliseconds / cluster-node-timeout) and lose nothing acknowledged;
 *  - all: every member pod deleted with grace 0: all come back as new pods and the release heals
 *    through its DNS names.
 * Each drill heals within the step's timeout and loses no WAIT-confirmed write. Needs root,
 * `install.sh` (Pulumi) and `install.sh --real-cluster`; starts the cluster when none runs.
 */
import { describe, expect, it } from "vitest";
import { DATA_PLANE_LABEL } from "../../components/shared.js";
import { createStack, tail } from "../e2e/support/pulumi-harness.js";
import { podsSkipReason, podsStackConfig, usePodsCluster } from "./support/byo-on-pods.js";

const reason = podsSkipReason({ pulumi: true });
const PASSWORD = `pods-${Math.random().toString(36).slice(2)}-drill`;
const FAULTS = ["primary", "switchover", "all"] as const;
/** Failure detection in both modes (Sentinel down-after, cluster-node-timeout). */
const DETECT_MS = 5000;
const DRILLS = { enabled: true, faults: [...FAULTS], rate: 20, preFaultS: 3, loadS: 30, timeoutS: 240 };

interface DrillRow {
  mode: string;
  fault: string;
  ok: boolean;
  healed: boolean;
  faultDescription: string;
  recoveryMs: number | null;
  detectionMs: number | null;
  writeOutageMs: number;
  ackedWrites: number;
  lostAckedWrites: number;
  waitedWrites: number;
  lostWaitedWrites: number;
  after: { ok: boolean; failures: unknown[] };
  loadPod: string;
  deletedPods: Array<{ name: string; uid: string }>;
}

interface PodList {
  items: Array<{
    metadata: { name: string; uid: string; labels?: Record<string, string> };
    spec: { nodeName?: string; containers: Array<{ image: string }> };
    status: { podIP?: string };
  }>;
}

interface EventList {
  items: Array<{ reason?: string; message?: string; involvedObject: { name?: string; uid?: string } }>;
}

describe.skipIf(reason !== "")(`failure drills on real pods${reason ? ` (skipped: ${reason})` : ""}`, () => {
  const ctx = usePodsCluster();

  const drills = async (mode: "cluster" | "replication"): Promise<void> => {
    const NS = `drill-${mode}-pods`;
    const { cluster, api, env, clientNode } = ctx;
    const members = async () =>
      (await api<PodList>("GET", `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`${DATA_PLANE_LABEL}=true`)}`)).body.items;
    const timing =
      mode === "cluster" ? { cluster: { primaries: 3, replicasPerPrimary: 1, nodeTimeoutMs: DETECT_MS } } : { sentinel: { downAfterMilliseconds: DETECT_MS } };
    const config = podsStackConfig(cluster, mode, NS, { benchmark: { enabled: false }, drills: { ...DRILLS, image: cluster.images.node } });
    const valkey = config.valkey as Record<string, unknown>;
    const s = await createStack(
      env,
      { ...config, valkey: mode === "cluster" ? { ...valkey, ...timing } : { ...valkey, replication: { ...(valkey.replication as object), ...timing } } },
      { password: PASSWORD },
    );
    try {
      const t0 = Date.now();
      const up = await s.stack.up({ onOutput: (o) => s.log.push(o) });
      console.log(`[pods] ${mode}: up with drills ${Math.round((Date.now() - t0) / 1000)} s`);
      expect(up.summary.result, tail(s.log)).toBe("succeeded");
      const report = up.outputs.report?.value as { drills: DrillRow[] | null; drillsCsv: string | null };
      const rows = report.drills ?? [];
      console.log(`[pods] ${mode} drills:\n${report.drillsCsv ?? ""}`);
      expect(rows.map((r) => [r.mode, r.fault])).toEqual(FAULTS.map((f) => [mode, f]));
      for (const r of rows) {
        const what = `${r.fault}: ${JSON.stringify({ ...r, after: r.after.ok })}`;
        expect([r.ok, r.healed, r.after.ok, r.after.failures], what).toEqual([true, true, true, []]);
        expect(r.recoveryMs, what).toBeGreaterThan(0);
        expect(r.recoveryMs, what).toBeLessThan(DRILLS.timeoutS * 1000);
        expect(r.writeOutageMs, what).toBeGreaterThan(0);
        expect(r.ackedWrites, what).toBeGreaterThan(0);
        expect(r.waitedWrites, what).toBeGreaterThan(0);
        expect(r.lostWaitedWrites, what).toBe(0);
      }
      const [primary, switchover, all] = rows as [DrillRow, DrillRow, DrillRow];
      // The load ran as a real Job pod on the node without Valkey (the step deletes it afterwards).
      expect(new Set(rows.map((r) => r.loadPod)).size).toBe(3);
      expect(primary.faultDescription).toMatch(/^primary pod \S+ \(\S+ on \S+\) deleted, grace 0$/);
      expect(primary.faultDescription).not.toContain(clientNode);
      // The planned path: the kubelet ran the preStop on eviction, which handed the primary over
      // before the server stopped. Without it the writes wait for failure detection.
      expect(switchover.faultDescription).toContain("evicted through the Eviction API");
      expect(switchover.writeOutageMs, `switchover outage vs detection ${DETECT_MS} ms (primary drill: ${primary.writeOutageMs} ms)`).toBeLessThan(DETECT_MS);
      expect(switchover.lostAckedWrites).toBe(0);
      // The evicted pod's preStop ran to its end (a hook cut short leaves a FailedPreStopHook event,
      // as the grace-0 deletions of the other drills may), and the pod was stopped by the kubelet.
      const evicted = switchover.deletedPods.map((p) => p.uid);
      expect(evicted).toHaveLength(1);
      const events = (await api<EventList>("GET", `/api/v1/namespaces/${NS}/events`)).body.items.filter((e) => evicted.includes(e.involvedObject.uid ?? ""));
      expect(events.map((e) => e.reason)).toContain("Killing");
      expect(events.filter((e) => e.reason === "FailedPreStopHook").map((e) => `${e.involvedObject.name}: ${e.message}`)).toEqual([]);
      // Every member pod went at once and the release healed (the step counts recovery only once
      // each deleted pod runs again under a new UID): the members found each other again through
      // their DNS names, with every old pod IP gone.
      expect(all.faultDescription).toMatch(/^every member pod \(.+\) deleted, grace 0$/);
      const now = await members();
      expect(now).toHaveLength(mode === "cluster" ? 6 : 4);
      for (const p of now) expect(all.faultDescription).toContain(`${p.metadata.name}`);
    } finally {
      await s.dispose();
    }
    expect((await api("GET", `/api/v1/namespaces/${NS}`)).status).toBe(404);
  };

  it(
    "cluster mode: primary (grace 0), switchover (eviction, preStop) and all members deleted: healed, 0 WAIT-confirmed writes lost",
    { timeout: 1_500_000 },
    () => drills("cluster"),
  );
  it("replication mode: the same under Sentinel, through HAProxy's write endpoint", { timeout: 1_500_000 }, () => drills("replication"));
});
