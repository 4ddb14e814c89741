/**
 * The FailureDrill orchestration against a fake Kubernetes on a virtual clock
 * (tests/support/fake-drill-kube.ts): which pods each fault deletes and how, the waits (load pod
 * Running, preFaultS, every deleted pod back, the verifier), the clean-up, and that the figures
 * come from the load's records with the fault on the step's clock. The load itself and the
 * verifier run against real valkey-server processes in other tests (drill-load-bundle, the
 * topology-check tests).
 */
import { drillStep } from "../../components/steps/failure-drill/declaration.js";
import { describe, expect, it } from "vitest";
import type { WriteRecord } from "../../core/drill/ledger.js";
import type { AlertSnapshot } from "../../core/drill/alerts-seen.js";
import type { Fault } from "../../vocabulary/faults.js";
import { formatRecordLines, parseRecordLines } from "../../core/drill/record-lines.js";
import { ackedLossBound, inWindow } from "../../core/drill/bounds.js";
import {
  CLOCK_NOTE,
  ackedBy,
  deployedLossBound,
  DrillError,
  drillOnce,
  runDrills,
  type DrillDeps,
} from "../../components/steps/failure-drill/implementation.js";
import { drillPod, FakeClock, FakeDrillKube, type FakeKubeOptions } from "../support/fake-drill-kube.js";
import { CRASH_COMMAND } from "../../components/steps/failure-drill/faults.js";

/** The crash command as the fake records an exec of it. */
const CRASH = CRASH_COMMAND.join(" ");
/** The calls that hit a release pod: execs and deletions (not the load Job's, not the agents'). */
const podFaultCalls = (kube: FakeDrillKube): string[] =>
  kube.calls.filter((c) => c.startsWith("exec ") || (/^delete /.test(c) && !/^delete (load|pvc) /.test(c)));

const placement = {
  zones: ["zone-a", "zone-b", "zone-c"],
  nodeSelector: { pool: "valkey" },
  tolerations: [],
  storageClass: undefined,
};

function inputs(mode: "replication" | "cluster", extra: Record<string, unknown> = {}) {
  return drillStep.parse({
    kubeconfig: "apiVersion: v1",
    namespace: "valkey",
    selector: "app=valkey",
    password: "pw-secret",
    mode,
    ...(mode === "replication" ? { sentinel: { selector: "app=sentinel", port: 26379, masterName: "valkey" } } : {}),
    faults: ["primary"],
    rate: 10,
    preFaultS: 10,
    loadS: 60,
    zoneDownS: 20,
    timeoutS: 120,
    image: "node:24",
    loadTarget: {
      host: "valkey-write.valkey.svc.cluster.local",
      port: 6379,
      ...(mode === "replication"
        ? { sentinel: { host: "valkey-sentinel.valkey.svc.cluster.local", port: 26379, masterName: "valkey" } }
        : {}),
    },
    secretName: "valkey-auth",
    placement,
    failureDetectionMs: 5000,
    pollMs: 1000,
    ...extra,
  });
}

function setup(mode: "replication" | "cluster", o: Partial<FakeKubeOptions> = {}) {
  const clock = new FakeClock();
  const kube = new FakeDrillKube({ mode, clock, ...o });
  let n = 0;
  const deps: DrillDeps = {
    api: kube,
    verify: kube.verify,
    readBack: kube.readBack,
    durability: () =>
      Promise.resolve({
        minReplicasToWrite: 1,
        minReplicasMaxLag: 3,
        appendonly: true,
        appendfsync: "everysec" as const,
      }),
    loadScript: () => Promise.resolve("// load.mjs"),
    sleep: clock.sleep,
    now: clock.now,
    runKey: () => `k${++n}`,
  };
  return { clock, kube, deps };
}

describe("FailureDrill orchestration (fake Kubernetes, virtual clock)", () => {
  it("primary: the reported primary's server stopped at once, then its pod deleted with grace 0, preFaultS after the load pod runs; recovery once it is back and verified", async () => {
    const { kube, deps } = setup("replication");
    const r = await drillOnce(inputs("replication"), "primary", deps);
    // The crash first: a grace-0 deletion alone still runs the preStop (up to 1 s on a real kubelet).
    expect(podFaultCalls(kube)).toEqual([`exec valkey-0/valkey ${CRASH}`, "delete valkey-0 grace=0"]);
    // The load pod starts 4 s after the Job is created (fake); the fault comes preFaultS after it runs.
    const load = kube.created[0]!;
    const sinceRunning = kube.faultAt! - kube.loadRunningAt[0]!;
    expect(sinceRunning).toBeGreaterThanOrEqual(10_000);
    expect(sinceRunning).toBeLessThanOrEqual(11_000);
    expect(r.faultDescription).toBe(
      "primary pod valkey-0 (10.0.0.0 on node-a) crashed: server stopped at once (SHUTDOWN NOSAVE NOW FORCE), then its pod deleted, grace 0",
    );
    // Recreated 5 s after the deletion, Ready 3 s later, verified at the next 1 s poll.
    expect(r.recoveryMs).toBeGreaterThanOrEqual(8000);
    expect(r.recoveryMs).toBeLessThanOrEqual(9000);
    expect(r.healed).toBe(true);
    expect(r.ok).toBe(true);
    expect(r.detectionMs).toBeNull();
    // Figures from the fake records: 10 writes/s per stream, a 4 s outage from the fault.
    expect(r.streams.map((s) => s.stream)).toEqual(["sentinel-client", "write-endpoint"]);
    expect(r.writes).toBe(2 * 600);
    expect(r.failedWrites).toBe(2 * 40);
    expect(r.ackedWrites).toBe(r.writes - r.failedWrites);
    expect(r.lostAckedWrites).toBe(0);
    expect(r.writeOutageMs).toBeGreaterThanOrEqual(4000);
    expect(r.writeOutageMs).toBeLessThanOrEqual(4200);
    expect(r.p99MsBefore).toBe(2);
    expect(r.streams[0]!.before.count).toBe(100);
    expect(r.after.shards[0]!.primary.address).toBe("10.0.0.1:6379");
    expect(r.loadPod).toBe(`${load.job.metadata.name}-x1`);
    // The Job and ConfigMap went away.
    expect(kube.calls.at(-1)).toBe(`delete load ${load.job.metadata.name}`);
  });

  it("the load follows the Job contract: name, unique key prefix, password by secretKeyRef only, the script in the ConfigMap", async () => {
    const { kube, deps } = setup("replication");
    await runDrills(inputs("replication", { faults: ["replica", "primary"] }), deps);
    expect(kube.created.map((m) => m.job.metadata.name)).toEqual([
      "valkey-drill-replica-k1",
      "valkey-drill-primary-k2",
    ]);
    const env = kube.created.map((m) => m.job.spec.template.spec.containers[0]!.env);
    expect(env.map((e) => e.find((x) => x.name === "DRILL_KEY_PREFIX")?.value)).toEqual([
      "drill:k1:replica",
      "drill:k2:primary",
    ]);
    expect(env[0]!.find((x) => x.name === "VALKEY_PASSWORD")).toEqual({
      name: "VALKEY_PASSWORD",
      valueFrom: { secretKeyRef: { name: "valkey-auth", key: "password" } },
    });
    expect(JSON.stringify(kube.created)).not.toContain("pw-secret");
    expect(kube.created[0]!.configMap.data["load.mjs"]).toBe("// load.mjs");
  });

  it("recovery waits for every deleted pod to run again under a new uid, even when the verifier already passes", async () => {
    const { kube, deps } = setup("replication");
    const healthy = await kube.verify();
    const r = await drillOnce(inputs("replication"), "primary", { ...deps, verify: () => Promise.resolve(healthy) });
    expect(r.recoveryMs).toBeGreaterThanOrEqual(8000);
  });

  it("switchover: the primary's pod evicted (budget honoured: refusals asked again), deleted with its own grace period", async () => {
    const { kube, deps } = setup("replication");
    kube.evictionRefusals = 2;
    const r = await drillOnce(inputs("replication"), "switchover", deps);
    expect(kube.calls.filter((c) => c.startsWith("evict") || c.startsWith("delete valkey"))).toEqual([
      "evict valkey-0",
      "evict valkey-0",
      "evict valkey-0",
      "delete valkey-0 grace=default",
    ]);
    expect(r.faultDescription).toContain("evicted through the Eviction API");
    expect(r.faultDescription).toContain("after 2 refusal(s)");
    // Removed after the 2 s grace, recreated 5 s later, Ready 3 s later.
    expect(r.recoveryMs).toBeGreaterThanOrEqual(10_000);
  });

  it("replica: the first reported replica's pod crashed (server stopped, then deleted with grace 0)", async () => {
    const { kube, deps } = setup("replication");
    await drillOnce(inputs("replication"), "replica", deps);
    expect(podFaultCalls(kube)).toEqual([`exec valkey-1/valkey ${CRASH}`, "delete valkey-1 grace=0"]);
  });

  it.each(["primary", "crash-restart"] as const)(
    "%s: a crash the identity may not exec fails naming the pod and pods/exec, and deletes nothing",
    async (fault) => {
      const { kube, deps } = setup("replication", {
        execFails: 'pods "valkey-0" is forbidden: cannot create resource "pods/exec"',
      });
      await expect(drillOnce(inputs("replication"), fault, deps)).rejects.toThrow(
        /could not stop the server of valkey-0 \(exec SHUTDOWN NOSAVE NOW FORCE .*needs pods\/exec create\): pods "valkey-0" is forbidden/,
      );
      expect(podFaultCalls(kube)).toEqual([`exec valkey-0/valkey ${CRASH}`]);
    },
  );

  it("a server that still answers after the crash command fails the drill with the command's stderr, and nothing is deleted", async () => {
    const { kube, deps } = setup("cluster", {
      execExit: { exitCode: 3, stderr: "the server still answers PING 2 s after SHUTDOWN NOSAVE NOW FORCE\n" },
    });
    await expect(drillOnce(inputs("cluster"), "primary", deps)).rejects.toThrow(
      /could not stop the server of member-0 \(exec SHUTDOWN NOSAVE NOW FORCE in its valkey container, exit code 3\): the server still answers PING/,
    );
    expect(podFaultCalls(kube)).toEqual([`exec member-0/valkey ${CRASH}`]);
  });

  it("all: every member's server stopped, then every member pod deleted at once, grace 0 (Sentinels stay)", async () => {
    const { kube, deps } = setup("cluster");
    const r = await drillOnce(inputs("cluster"), "all", deps);
    const calls = podFaultCalls(kube);
    const members = [0, 1, 2, 3, 4, 5];
    expect(calls.slice(0, 6).sort()).toEqual(members.map((i) => `exec member-${i}/valkey ${CRASH}`));
    expect(calls.slice(6).sort()).toEqual(members.map((i) => `delete member-${i} grace=0`));
    expect(r.streams.map((s) => s.stream)).toEqual(["cluster-client"]);
  });

  it("zone: the primary's zone cordoned, its member crashed and its Sentinel deleted, Pending until uncordoned after zoneDownS", async () => {
    const { kube, deps } = setup("replication");
    const r = await drillOnce(inputs("replication"), "zone", deps);
    // The Sentinel has no preStop and no server to stop: deleted only.
    expect(podFaultCalls(kube)).toEqual([
      `exec valkey-0/valkey ${CRASH}`,
      "delete valkey-0 grace=0",
      "delete sentinel-0 grace=0",
    ]);
    expect(kube.calls.filter((c) => /cordon/.test(c))).toEqual(["cordon node-a at +0", "uncordon node-a at +20000"]);
    // Not back before the uncordon (20 s), then scheduled and Ready 3 s later.
    expect(r.recoveryMs).toBeGreaterThanOrEqual(23_000);
    expect(r.faultDescription).toMatch(
      /^zone zone-a down for 20 s: node\(s\) node-a cordoned, pod\(s\) valkey-0, sentinel-0 gone \(members: server stopped at once/,
    );
    expect(kube.nodes.every((n) => !n.unschedulable)).toBe(true);
  });

  it("a topology that never heals fails with the fault named, and still uncordons and deletes the load", async () => {
    const { kube, deps } = setup("replication", { neverHeals: true });
    await expect(drillOnce(inputs("replication", { timeoutS: 60 }), "zone", deps)).rejects.toThrow(
      /^the zone drill did not heal within 60 s \(drills\.timeoutS\) after zone zone-a down .*: topology check failed: NODE_UNREACHABLE/,
    );
    expect(kube.nodes.every((n) => !n.unschedulable)).toBe(true);
    expect(kube.calls.at(-1)).toBe("delete load valkey-drill-zone-k1");
  });

  it("lost WAIT-confirmed writes are reported as ok: false, not thrown (a finding)", async () => {
    const { deps } = setup("replication", { loseAfterFault: 2000 });
    const out = await runDrills(inputs("replication"), deps);
    const [r] = out.drills;
    expect(r!.healed).toBe(true);
    expect(r!.ok).toBe(false);
    expect(r!.lostWaitedWrites).toBe(2 * 20);
    expect(r!.lostAckedWrites).toBe(2 * 20);
    expect(out.csv.split("\n")[1]).toMatch(/^replication,primary,false,true,/);
    expect(out.note).toBe(CLOCK_NOTE);
  });

  it("a load log that does not parse fails naming the fault, the pod and the line", async () => {
    const { kube, deps } = setup("cluster", { log: (real) => real.replace("\nw ", "\nnode: warning\nw ") });
    await expect(drillOnce(inputs("cluster"), "replica", deps)).rejects.toThrow(
      /^the replica drill's load pod valkey-drill-replica-k1-x1: drill load output, line 3: not a write record/,
    );
    expect(kube.calls.at(-1)).toBe("delete load valkey-drill-replica-k1");
  });

  it("no fault before the load writes: a load pod Running without its writing line fails the drill at timeoutS, nothing injected", async () => {
    const { kube, deps } = setup("replication", { silentLoad: true });
    await expect(drillOnce(inputs("replication", { timeoutS: 30 }), "primary", deps)).rejects.toThrow(
      /^the primary drill's load pod valkey-drill-primary-k1-x1 has not started writing after 30 s/,
    );
    expect(kube.calls.filter((c) => /^delete (?!load )/.test(c))).toEqual([]);
    expect(kube.calls.at(-1)).toBe("delete load valkey-drill-primary-k1");
  });

  it("a topology failing before the fault stops the drill before any load is created", async () => {
    const { kube, deps } = setup("replication");
    const failing: DrillDeps = {
      ...deps,
      verify: () => Promise.reject(new Error("topology check failed: SENTINEL_QUORUM\ntable")),
    };
    await expect(drillOnce(inputs("replication"), "primary", failing)).rejects.toThrow(
      new DrillError(
        "the primary drill did not start: the topology fails verification before the fault: topology check failed: SENTINEL_QUORUM",
      ),
    );
    expect(kube.created).toEqual([]);
  });

  it("the fault hits the primary of a report taken right before it, not the one before the load started (a role moved meanwhile)", async () => {
    const { kube, deps } = setup("replication");
    let asked = 0;
    const moved: DrillDeps = {
      ...deps,
      // The first report (before the load) still names valkey-1 as primary; by the fault valkey-0 is.
      verify: async () => {
        const r = await kube.verify();
        if (++asked > 1) return r;
        const stale = structuredClone(r);
        stale.shards[0]!.primary.address = "10.0.0.1:6379";
        return stale;
      },
    };
    const r = await drillOnce(inputs("replication"), "primary", moved);
    expect(podFaultCalls(kube)).toEqual([`exec valkey-0/valkey ${CRASH}`, "delete valkey-0 grace=0"]);
    expect(r.faultDescription).toMatch(/^primary pod valkey-0 \(10\.0\.0\.0 on node-a\) crashed/);
  });

  it("a topology still settling before the fault (two failing verdicts) is asked again, then drilled", async () => {
    const { kube, deps, clock } = setup("replication");
    let asked = 0;
    const start = clock.now();
    const settling: DrillDeps = {
      ...deps,
      verify: () => (++asked <= 2 ? Promise.reject(new Error("SENTINEL_DISAGREE")) : kube.verify()),
    };
    const r = await drillOnce(inputs("replication"), "primary", settling);
    expect(r.healed).toBe(true);
    expect(kube.created).toHaveLength(1);
    expect(kube.loadRunningAt[0]! - start).toBeGreaterThanOrEqual(2000);
  });

  /** A verifier that fails `failing(call)` calls (the first is the one before the load; each retry is 1 s later). */
  const slowAtFault = (deps: DrillDeps, kube: FakeDrillKube, failing: (call: number) => boolean): DrillDeps => {
    let call = 0;
    return {
      ...deps,
      verify: () => (failing(++call) ? Promise.reject(new Error("SENTINEL_DISAGREE")) : kube.verify()),
    };
  };

  it("a fault that cannot come inside its load (the verification before it took longer than half the load after preFaultS) starts a second load and drills inside it", async () => {
    const { kube, deps } = setup("replication");
    // preFaultS 10, loadS 60: the fault must come within 10 + 25 s of the writing line; the check fails 30 s first.
    const r = await drillOnce(
      inputs("replication"),
      "primary",
      slowAtFault(deps, kube, (call) => call >= 2 && call <= 31),
    );
    expect(kube.created.map((c) => c.job.metadata.name)).toEqual([
      "valkey-drill-primary-k1",
      "valkey-drill-primary-k1-r",
    ]);
    expect(kube.calls).toContain("delete load valkey-drill-primary-k1");
    expect(podFaultCalls(kube)).toEqual([`exec valkey-0/valkey ${CRASH}`, "delete valkey-0 grace=0"]);
    // Inside the second load, preFaultS after it ran; its records measure the fault.
    const sinceRunning = kube.faultAt! - kube.loadRunningAt[1]!;
    expect(sinceRunning).toBeGreaterThanOrEqual(10_000);
    expect(sinceRunning).toBeLessThanOrEqual(11_000);
    expect([r.ok, r.failures, r.loadPod]).toEqual([true, [], "valkey-drill-primary-k1-r-x1"]);
    expect(r.writeOutageMs).toBeGreaterThanOrEqual(4000);
    expect(kube.calls.at(-1)).toBe("delete load valkey-drill-primary-k1-r");
  });

  it("twice too late: the drill fails naming drills.loadS, nothing injected, both loads deleted", async () => {
    const { kube, deps } = setup("replication");
    const late = slowAtFault(deps, kube, (call) => (call >= 2 && call <= 31) || (call >= 33 && call <= 62));
    await expect(drillOnce(inputs("replication"), "primary", late)).rejects.toThrow(
      /^the primary drill's fault could not come inside its load: \d+ s past preFaultS \+ half of the rest of drills\.loadS \(60 s\)/,
    );
    expect(podFaultCalls(kube)).toEqual([]);
    expect(kube.calls.filter((c) => c.startsWith("delete load"))).toEqual([
      "delete load valkey-drill-primary-k1",
      "delete load valkey-drill-primary-k1-r",
    ]);
  });

  it("a load whose writing line names a stream without an acknowledgement (not served yet) is replaced once before the fault", async () => {
    const { kube, deps } = setup("replication", { silentOnFirstLoad: ["write-endpoint"] });
    const r = await drillOnce(inputs("replication"), "primary", deps);
    expect(kube.created.map((c) => c.job.metadata.name)).toEqual([
      "valkey-drill-primary-k1",
      "valkey-drill-primary-k1-r",
    ]);
    expect([r.ok, r.loadPod]).toEqual([true, "valkey-drill-primary-k1-r-x1"]);
  });

  it("a load that ended before the fault is not a measurement: its row fails naming it, never ok with a 0 ms outage", async () => {
    // The fake load writes for loadS from its start; preFaultS past it, the fault comes after the load ended.
    const { kube, deps } = setup("replication");
    const r = await drillOnce(inputs("replication", { preFaultS: 10, loadS: 5 }), "primary", deps);
    expect(kube.faultAt! - kube.loadRunningAt[0]!).toBeGreaterThan(5000);
    expect(r.ok).toBe(false);
    expect(r.failures[0]).toMatch(
      /^not measured: the load sent nothing from the fault on \(its last write −\d+\.\d\d s from the fault\)/,
    );
  });

  it("detectionMs: the watcher is armed at the fault with the deleted pods, and its first mark is measured from the fault (faultAt, the row's zero)", async () => {
    const { kube, deps, clock } = setup("replication");
    const armed: string[][] = [];
    let faultSeen = 0;
    let stopped = 0;
    const withWatch: DrillDeps = {
      ...deps,
      watchDetection: () =>
        Promise.resolve({
          arm: (pods, faultAt) => (armed.push(pods.map((p) => p.name)), (faultSeen = faultAt)),
          detectedAt: () => faultSeen + 5123,
          stop: () => Promise.resolve(void stopped++),
        }),
    };
    const r = await drillOnce(inputs("replication"), "zone", withWatch);
    expect(armed).toEqual([["valkey-0", "sentinel-0"]]);
    expect(faultSeen).toBe(kube.faultAt);
    // The row's zero on the program's clock, as a time a dashboard or an alert history can be read at.
    expect(r.faultAt).toBe(new Date(kube.faultAt!).toISOString());
    expect(r.detectionMs).toBe(5123);
    expect(r).not.toHaveProperty("detectionNote");
    expect(stopped).toBe(1);
    expect(clock.now()).toBeGreaterThan(faultSeen);
    expect(r).not.toHaveProperty("sentinelEvents"); // a watcher without events: none claimed
  });

  it("replication: the Sentinels' events from the fault on become the row's sentinelEvents and failoverSteps (those before the fault left out)", async () => {
    const { deps, kube } = setup("replication");
    let at = 0;
    const ev = (dt: number, sentinel: string, channel: string, payload = "master valkey 10.0.0.1 6379") => ({
      sentinel,
      at: at + dt,
      channel,
      payload,
    });
    const withEvents: DrillDeps = {
      ...deps,
      watchDetection: () =>
        Promise.resolve({
          arm: (_pods, faultAt) => void (at = faultAt),
          detectedAt: () => at + 5000,
          events: () => [
            ev(-3000, "sentinel-1", "+sdown", "slave 10.0.0.9:6379 10.0.0.9 6379 @ valkey 10.0.0.1 6379"),
            ev(5000, "sentinel-0", "+sdown"),
            ev(5100, "sentinel-1", "+odown"),
            ev(5150, "sentinel-1", "+try-failover"),
            ev(5200, "sentinel-1", "+elected-leader"),
            ev(
              5400,
              "sentinel-1",
              "+failover-state-wait-promotion",
              "slave 10.0.0.2:6379 10.0.0.2 6379 @ valkey 10.0.0.1 6379",
            ),
            ev(6300, "sentinel-1", "+promoted-slave", "slave 10.0.0.2:6379 10.0.0.2 6379 @ valkey 10.0.0.1 6379"),
            ev(6400, "sentinel-1", "+switch-master", "valkey 10.0.0.1 6379 10.0.0.2 6379"),
          ],
          stop: () => Promise.resolve(),
        }),
    };
    const r = await drillOnce(inputs("replication"), "primary", withEvents);
    expect(at).toBe(kube.faultAt);
    expect(r.sentinelEvents?.map((e) => [e.t, e.sentinel, e.event])).toEqual([
      [5000, "sentinel-0", "+sdown"],
      [5100, "sentinel-1", "+odown"],
      [5150, "sentinel-1", "+try-failover"],
      [5200, "sentinel-1", "+elected-leader"],
      [5400, "sentinel-1", "+failover-state-wait-promotion"],
      [6300, "sentinel-1", "+promoted-slave"],
      [6400, "sentinel-1", "+switch-master"],
    ]);
    expect(r.failoverSteps).toEqual({
      sdownMs: 5000,
      odownMs: 5100,
      tryFailoverMs: 5150,
      electedMs: 5200,
      promotionSentMs: 5400,
      promotedMs: 6300,
      switchedMs: 6400,
      aborts: [],
    });
  });

  it("a fault whose detection is unobservable is still watched for its account, and a mark there is no detection (cluster crash-restart)", async () => {
    const { deps } = setup("cluster");
    let at = 0;
    const marking: DrillDeps = {
      ...deps,
      watchDetection: () =>
        Promise.resolve({
          arm: (_pods, faultAt) => void (at = faultAt),
          detectedAt: () => at + 900,
          roles: () => [{ at: at - 10, node: "valkey-0.h", role: "master", seenBy: "valkey-1" }],
          stop: () => Promise.resolve(),
        }),
    };
    const r = await drillOnce(inputs("cluster"), "crash-restart", marking);
    expect([r.detectionMs, r.detectionNote]).toEqual([
      null,
      "restarted in place, faster than failure detection: nothing to detect when it works",
    ]);
    expect(r.clusterRoles).toEqual([{ t: -10, node: "valkey-0.h", role: "master", seenBy: "valkey-1" }]);
  });

  it("cluster: the watch's roles become the row's clusterRoles, in ms from the fault, the poll before it included", async () => {
    const { deps, kube } = setup("cluster");
    let at = 0;
    const withRoles: DrillDeps = {
      ...deps,
      watchDetection: () =>
        Promise.resolve({
          arm: (_pods, faultAt) => void (at = faultAt),
          detectedAt: () => undefined,
          roles: () => [
            { at: at - 40, node: "valkey-0.h", role: "master", seenBy: "valkey-1" },
            { at: at - 40, node: "valkey-1.h", role: "slave", seenBy: "valkey-1" },
            { at: at + 5250, node: "valkey-0.h", role: "master,fail", seenBy: "valkey-1" },
            { at: at + 5600, node: "valkey-1.h", role: "master", seenBy: "valkey-1" },
          ],
          stop: () => Promise.resolve(),
        }),
    };
    const r = await drillOnce(inputs("cluster"), "primary", withRoles);
    expect(at).toBe(kube.faultAt);
    expect(r.clusterRoles?.map((x) => [x.t, x.node, x.role])).toEqual([
      [-40, "valkey-0.h", "master"],
      [-40, "valkey-1.h", "slave"],
      [5250, "valkey-0.h", "master,fail"],
      [5600, "valkey-1.h", "master"],
    ]);
    expect(r).not.toHaveProperty("sentinelEvents");
  });

  it("detectionMs is null with the reason when not observable (switchover; cluster all) or when the watcher cannot start", async () => {
    const { deps } = setup("cluster");
    let asked = 0;
    const failing: DrillDeps = {
      ...deps,
      watchDetection: () => (asked++, Promise.reject(new Error("cannot reach 10.0.0.3:6379\nmore"))),
    };
    const switchover = await drillOnce(inputs("cluster"), "switchover", failing);
    expect(asked).toBe(1); // watched for its roles, not for a detection
    const all = await drillOnce(inputs("cluster"), "all", failing);
    expect(asked).toBe(1); // no survivor to ask
    expect([switchover.detectionMs, switchover.detectionNote]).toEqual([null, "planned: nothing to detect"]);
    expect([all.detectionMs, all.detectionNote]).toEqual([null, "every member is down: no survivor to mark a failure"]);
    const primary = await drillOnce(inputs("cluster"), "primary", failing);
    expect(asked).toBe(2);
    expect(primary.healed).toBe(true);
    expect([primary.detectionMs, primary.detectionNote]).toEqual([null, "not watched: cannot reach 10.0.0.3:6379"]);
  });

  it.each<Fault>(["primary", "replica", "zone", "all", "switchover"])(
    "runDrills: one CSV row per fault (%s)",
    async (fault) => {
      const { deps } = setup("cluster");
      const out = await runDrills(inputs("cluster", { faults: [fault] }), deps);
      expect(out.drills.map((d) => d.fault)).toEqual([fault]);
      const [header, row] = out.csv.trim().split("\n");
      expect(header).toMatch(/^mode,fault,ok,healed,writeOutageMs,writeOutageOpen,recoveryMs,detectionMs,/);
      expect(row).toMatch(new RegExp(`^cluster,${fault},true,true,\\d+,false,\\d+,,`));
      expect(row).toContain(",5000,cluster-client,");
    },
  );
});

describe("FailureDrill: drills.alertsFrom", () => {
  it("after the last drill and the server's settle, each row gets the alerts of its own window, in ms from its fault; the CSV's alerts column", async () => {
    const { deps, clock } = setup("replication");
    const asked: Array<[number, number]> = [];
    let settledFrom = 0;
    const rows = await runDrills(inputs("replication", { faults: ["replica", "primary"] }), {
      ...deps,
      alerts: {
        settleMs: () => ((settledFrom = clock.now()), Promise.resolve(8000)),
        // One snapshot a second; ValkeyPrimaryChanged on valkey-1 from 5 s before the settle began (inside the last,
        // primary, drill: its recovery alone takes 8 s here) on.
        history: (fromMs, toMs) => {
          asked.push([fromMs, toMs]);
          const snaps: AlertSnapshot[] = [];
          for (let t = Math.ceil(fromMs / 1000) * 1000; t <= toMs; t += 1000)
            snaps.push({
              at: t,
              alerts:
                t >= settledFrom - 5000
                  ? [{ name: "ValkeyPrimaryChanged", state: "firing", labels: { pod: "valkey-1", severity: "info" } }]
                  : [],
            });
          return Promise.resolve(snaps);
        },
      },
    });
    // Read once, after the settle, from the first drill's load (preFaultS before its fault) to then.
    const faults = rows.drills.map((d) => Date.parse(d.faultAt));
    expect(asked).toEqual([[faults[0]! - 10_000, settledFrom + 8000]]);
    expect(rows.drills.map((d) => [d.fault, d.alerts?.map((a) => [a.alert, a.pod, a.severity, a.resolvedMs])])).toEqual(
      [
        ["replica", []],
        ["primary", [["ValkeyPrimaryChanged", "valkey-1", "info", null]]],
      ],
    );
    const changed = rows.drills[1]!.alerts![0]!;
    expect(changed.firingMs).toBe(changed.pendingMs);
    expect(changed.firingMs).toBe(
      Math.ceil((settledFrom - 5000 - (faults[0]! - 10_000)) / 1000) * 1000 + faults[0]! - 10_000 - faults[1]!,
    );
    expect(changed.firingMs).toBeGreaterThan(0);
    expect(rows.csv).toContain("ValkeyPrimaryChanged");
  });

  it("a history that cannot be read is noted on every row; the drills stand", async () => {
    const { deps } = setup("replication");
    const rows = await runDrills(inputs("replication", { faults: ["replica", "primary"] }), {
      ...deps,
      alerts: {
        settleMs: () => Promise.resolve(1000),
        history: () => Promise.reject(new Error("http://prom:9090/api/v1/query_range: HTTP 503")),
      },
    });
    expect(rows.drills.map((d) => [d.healed, d.alerts, d.alertsNote])).toEqual([
      [true, undefined, "not read from drills.alertsFrom: http://prom:9090/api/v1/query_range: HTTP 503"],
      [true, undefined, "not read from drills.alertsFrom: http://prom:9090/api/v1/query_range: HTTP 503"],
    ]);
  });
});

describe("FailureDrill: the faults that really happen, where the API allows them", () => {
  it("crash-restart: SHUTDOWN NOSAVE NOW FORCE exec'd in the primary's container (password from its env, not argv); recovery waits for the restarted container", async () => {
    const { kube, deps } = setup("replication");
    const r = await drillOnce(inputs("replication"), "crash-restart", deps);
    expect(
      kube.calls.filter((c) => c.startsWith("exec ") || (c.startsWith("delete ") && !c.startsWith("delete load"))),
    ).toEqual([`exec valkey-0/valkey ${CRASH}`]);
    expect(kube.calls.join("\n")).not.toContain("pw-secret");
    expect(r.faultDescription).toMatch(/^primary valkey-0 .*SHUTDOWN NOSAVE NOW FORCE/);
    // Not Ready for readyMs (3 s) after the restart, verified at the next poll.
    expect(r.recoveryMs).toBeGreaterThanOrEqual(3000);
    expect(r.ackedLossBound).toMatchObject({ fromMs: -2000, toMs: 0 });
    expect(r.ackedLossBound!.reason).toMatch(/AOF write window 2\.0 s/);
    expect(r.detectionNote).toMatch(/restarted in place/);
  });

  it("lost-volume: the primary's PVC deleted, then its pod crashed (server stopped, deleted with grace 0); recovery once the pod is back", async () => {
    const { kube, deps } = setup("cluster");
    const r = await drillOnce(inputs("cluster"), "lost-volume", deps);
    expect(kube.calls.filter((c) => /^(delete (pvc|member)|exec )/.test(c))).toEqual([
      "delete pvc data-member-0",
      `exec member-0/valkey ${CRASH}`,
      "delete member-0 grace=0",
    ]);
    expect(r.faultDescription).toMatch(/PersistentVolumeClaim data-member-0 deleted, then the pod crashed/);
    expect(r.ackedLossBound!.reason).toMatch(/async replication window 5\.0 s/);
  });

  it.each(["freeze", "partition"] as const)(
    "%s: a privileged hostPID agent pod on the primary's node holds the fault; the fault time is the agent's, recovery only once it has undone it",
    async (fault) => {
      const { kube, deps } = setup("replication");
      const r = await drillOnce(inputs("replication", { agentImage: "valkey/valkey:9" }), fault, deps);
      const [agent] = kube.agents;
      expect(kube.agents).toHaveLength(1);
      const spec = agent!.body["spec"] as Record<string, unknown> & { containers: Array<Record<string, unknown>> };
      expect(spec).toMatchObject({
        nodeName: "node-a",
        hostPID: true,
        restartPolicy: "Never",
        automountServiceAccountToken: false,
      });
      expect(spec.containers[0]).toMatchObject({
        image: "valkey/valkey:9",
        securityContext: { privileged: true, runAsUser: 0 },
        volumeMounts: [{ name: "host-root", mountPath: "/host" }],
      });
      expect(spec["volumes"]).toEqual([{ name: "host-root", hostPath: { path: "/", type: "Directory" } }]);
      // The primary valkey-0's uid; hold = detection 5 s + 5 s; partition: every other member and Sentinel, never a
      // client.
      const uid0 = kube.calls.find((c) => c.startsWith("create agent"));
      expect(uid0).toMatch(
        new RegExp(`^create agent valkey-drill-${fault}-k1-agent on node-a: ${fault} uid-1 hold 10 s$`),
      );
      expect(agent!.env["PEERS"]).toBe(fault === "partition" ? "10.0.0.1 10.0.0.2 10.0.0.10 10.0.0.11 10.0.0.12" : "");
      expect(JSON.stringify(agent!.body)).not.toContain("pw-secret");
      // Nothing deleted; the fault counted from the agent's "injected" time (3 s after its pod was asked for), recovery
      // after its 10 s hold.
      expect(kube.calls.filter((c) => /^delete valkey-[0-9]/.test(c))).toEqual([]);
      expect(kube.faultAt).toBe(agent!.injectAt);
      expect(r.recoveryMs).toBeGreaterThanOrEqual(10_000);
      expect(r.recoveryMs).toBeLessThanOrEqual(11_000);
      expect(r.faultDescription).toMatch(
        new RegExp(
          `^primary valkey-0 \\(10\\.0\\.0\\.0 on node-a\\): .* by the privileged agent pod valkey-drill-${fault}-k1-agent on its node$`,
        ),
      );
      // The agent pod is removed afterwards, and the load too.
      expect(kube.calls).toContain(`delete valkey-drill-${fault}-k1-agent grace=0`);
      expect(agent!.deletedAt).toBeDefined();
      expect(r.ok).toBe(true);
    },
  );

  it("the agent that cannot inject (no valkey-server of the pod on its node) fails the drill with its log; nothing is left behind", async () => {
    const { kube, deps } = setup("cluster", {
      agentFails: "fault-agent: no valkey-server of pod uid-1 among this node's processes",
    });
    await expect(drillOnce(inputs("cluster"), "freeze", deps)).rejects.toThrow(
      /the freeze fault's agent pod valkey\/valkey-drill-freeze-k1-agent on node-a ended \(Failed\) before injecting the fault; log:\nfault-agent: no valkey-server/,
    );
    expect(kube.agents[0]!.deletedAt).toBeDefined();
    expect(kube.calls.some((c) => c.startsWith("delete load"))).toBe(true);
  });

  it("a drill that does not heal still has the agent undo the fault (SIGTERM) before the step fails", async () => {
    const { kube, deps } = setup("replication", { neverHeals: true });
    // Held 65 s (detection 60 s + 5 s), past the 30 s timeout: the agent is stopped while it holds.
    await expect(
      drillOnce(inputs("replication", { timeoutS: 30, failureDetectionMs: 60_000 }), "partition", deps),
    ).rejects.toThrow(/did not heal within 30 s .*: the partition of valkey-0 is held \(65 s\)/);
    const [agent] = kube.agents;
    expect(agent!.restoredAt).toBeDefined();
    expect(agent!.deletedAt).toBeDefined();
  });
  it.each([
    ["primary", ["0-5460"]],
    ["freeze", ["0-5460"]],
    ["replica", []],
  ] as const)(
    "cluster %s: the row's outage is the affected shard's (the one whose primary was hit), each shard's beside it",
    async (fault, affected) => {
      const { deps } = setup("cluster", { shardStreams: true, outageMs: 4000 });
      const r = await drillOnce(inputs("cluster"), fault, deps);
      expect(r.shards.filter((s) => s.affected).map((s) => s.shard)).toEqual(affected);
      expect(r.shards.map((s) => s.shard)).toEqual(["0-5460", "5461-10921", "10922-16383"]);
      const first = r.shards.find((s) => s.shard === "0-5460")!;
      const others = r.shards.filter((s) => s.shard !== "0-5460");
      // Only the first shard's stream stops in the fake (member-0 is the primary every fault hits).
      expect(first.outageMs).toBeGreaterThan(3000);
      for (const o of others) expect(o.outageMs).toBeLessThan(1000);
      expect(r.writeOutageMs).toBe(first.outageMs);
    },
  );

  it("the row carries the promised bound and ok needs the acknowledged loss inside it", async () => {
    const { deps } = setup("replication");
    const r = await drillOnce(inputs("replication"), "primary", deps);
    expect(r.ackedLossBound).toMatchObject({ fromMs: -5000 });
    expect(r.lostAckedOutsideBound).toBe(0);
    expect(r.unknownWrites).toBe(0);
    expect(r.ok).toBe(true);
    expect(r.durability.minReplicasToWrite).toBe(1);
  });
});

describe("deployedLossBound: the window ends where the deleted pods stopped serving", () => {
  const c = {
    minReplicasToWrite: 0,
    minReplicasMaxLag: 10,
    appendonly: true,
    appendfsync: "everysec" as const,
    clusterNodeTimeoutMs: 5000,
  };
  const at = (doneAt: number, ok: boolean): WriteRecord => ({
    stream: "s",
    key: `k${doneAt}`,
    value: "v",
    sentAt: doneAt - 1,
    doneAt,
    ok,
    waited: ok,
  });
  const FAULT_AT = 10_000;
  const deleted = drillPod;
  const records = [
    at(9_500, true),
    at(10_050, true),
    at(10_400, true),
    at(10_600, false),
    at(10_700, false),
    at(12_000, true),
  ];

  it.each([
    // fault, API call's return (ms), records, expected window end (ms), reason names the kubelet
    ["primary", 100, records, 600, true],
    ["all", 100, records, 600, true],
    ["switchover", 100, records, 600, true],
    ["primary", 100, records.filter((r) => r.ok), 100, false], // nothing failed: the API call's return
    ["primary", 900, records, 900, false], // failed before the call returned
    ["crash-restart", 100, records, 100, false], // restarted in place: the exec returns after the crash
    ["replica", 100, records, 0, false], // a replica's loss loses nothing
    // `all`: a member the kubelet killed last still acknowledged at +1.8 s, after the first failure
    // (+0.6 s), then nothing until +4 s: every member's death lies before +1.8 s.
    ["all", 100, [...records.slice(0, 5), at(11_800, true), at(14_000, true)], 1800, true],
    ["primary", 100, [...records.slice(0, 5), at(11_800, true), at(14_000, true)], 600, true],
  ] as const)(
    "%s, API call +%i ms (case %#): the window ends where the table says",
    (fault: Fault, injectMs, recs, toMs, kubelet) => {
      const w = deployedLossBound(fault, injectMs, c, recs, FAULT_AT);
      expect(w.toMs).toBe(toMs);
      expect(w.reason.includes("the kubelet kills after it returns")).toBe(kubelet);
    },
  );

  // Seen on real pods: the endpoint's write failed at +1236 ms, the Sentinel client's connection to
  // the deleted primary (10.0.0.9) was still acknowledged at +1251 ms, and that write was lost.
  const twoPaths = [
    { ...at(11_236, false), stream: "write-endpoint", node: "10.0.0.50:6379" },
    { ...at(11_251, true), stream: "sentinel-client", node: "10.0.0.9:6379" },
    { ...at(11_300, false), stream: "sentinel-client" },
    { ...at(14_000, true), stream: "sentinel-client", node: "10.0.0.9:6379" }, // the pod back, after the stream failed: not the fault
    { ...at(14_100, true), stream: "write-endpoint", node: "10.0.0.50:6379" },
  ];
  // Seen on real pods (the replication `all` drill, CI): the last writes the deleted primary
  // acknowledged came at +1844.24 ms; the window, rounded to +1844, left them "lost outside the bound".
  it("a window end measured from an acknowledgement holds that acknowledgement (ends round up, never down)", () => {
    const t = 1844.24;
    const recs = [
      { ...at(FAULT_AT + 146.8, false), stream: "write-endpoint", node: "10.0.0.50:6379" },
      { ...at(FAULT_AT + 1831.67, true), stream: "sentinel-client", node: "10.0.0.9:6379" },
      { ...at(FAULT_AT + t, true), stream: "sentinel-client", node: "10.0.0.9:6379" },
      { ...at(FAULT_AT + 1900.1, false), stream: "sentinel-client" },
      { ...at(FAULT_AT + 7610, true), stream: "sentinel-client", node: "10.0.0.12:6379" },
    ];
    const w = deployedLossBound("all", 100, c, recs, FAULT_AT, [deleted("valkey-1", "10.0.0.9")]);
    expect(w.toMs).toBe(1845);
    expect(inWindow(w, FAULT_AT + t, FAULT_AT)).toBe(true);
    // Each way the end is found: the first failure, and the injection itself, round up too.
    expect(
      deployedLossBound("primary", 100, c, [at(FAULT_AT + 146.2, false), at(FAULT_AT + 146.8, true)], FAULT_AT).toMs,
    ).toBe(147);
    expect(ackedLossBound("primary", 99.2, c).toMs).toBe(100);
  });

  it("a deleted pod's own acknowledgement after another path's first failure ends the window there, from the records as the load pod's log carries them", () => {
    // Through the load pod's log format, as the step reads them: the node that answered survives it.
    const logged = parseRecordLines(
      formatRecordLines({
        prefix: "p",
        loadStart: 9_000,
        loadStop: 15_000,
        streams: ["write-endpoint", "sentinel-client"],
        records: twoPaths,
      }),
    ).records;
    expect(logged.map((r) => r.node)).toEqual(twoPaths.map((r) => r.node));
    const w = deployedLossBound("primary", 100, c, logged, FAULT_AT, [deleted("valkey-1", "10.0.0.9")]);
    expect(w.toMs).toBe(1251);
    expect(w.reason).toContain(
      "the fault ends at the last write a deleted pod acknowledged, 1.25 s after the API call; the first write failed at 1.24 s",
    );
    expect(deployedLossBound("primary", 100, c, twoPaths, FAULT_AT, [deleted("valkey-2", "10.0.0.7")]).toMs).toBe(1236); // another pod: the first failure
    expect(deployedLossBound("primary", 100, c, twoPaths, FAULT_AT).toMs).toBe(1236);
  });

  // Seen on real pods (the cluster `primary` drill): another shard's stream failed first (+2.02 s)
  // while the deleted primary still acknowledged its shard's no-WAIT stream, named by the slot
  // table as the cluster announces it (the pod's DNS name), until +3.4 s; 27 of those were lost.
  it("cluster: a deleted primary's acknowledgements, named by its DNS name or its IP, end the window; a node id or another pod does not", () => {
    const host = "valkey-cluster-0.valkey-cluster-headless.valkey.svc.cluster.local";
    const recs = [
      { ...at(FAULT_AT + 2020, false), stream: "cluster-client+wait@5461-10921", node: "10.0.0.2:6379" },
      { ...at(FAULT_AT + 3390.5, true), stream: "cluster-client@0-5460", node: `${host}:6379` },
      { ...at(FAULT_AT + 3450, false), stream: "cluster-client@0-5460" },
      { ...at(FAULT_AT + 3100, true), stream: "cluster-client+wait@0-5460", node: "10.0.0.9:6379" },
      { ...at(FAULT_AT + 3500, false), stream: "cluster-client+wait@0-5460" },
      {
        ...at(FAULT_AT + 9000, true),
        stream: "cluster-client@0-5460",
        node: "valkey-cluster-3.valkey-cluster-headless.valkey.svc.cluster.local:6379",
      },
    ];
    const pod0 = deleted("valkey-cluster-0", "10.0.0.9");
    const w = deployedLossBound("primary", 100, c, recs, FAULT_AT, [pod0]);
    expect(w.toMs).toBe(3391);
    expect(w.reason).toContain(
      "the last write a deleted pod acknowledged, 3.39 s after the API call; the first write failed at 2.02 s",
    );
    // The WAIT writer's plain connection names the pod's IP.
    expect(deployedLossBound("primary", 100, c, [recs[0]!, ...recs.slice(3)], FAULT_AT, [pod0]).toMs).toBe(3100);
    // Another pod, or a node id where an address belongs, proves nothing: the first failure.
    expect(deployedLossBound("primary", 100, c, recs, FAULT_AT, [deleted("valkey-cluster-1", "10.0.0.8")]).toMs).toBe(
      2020,
    );
    const byId = recs.map((r) =>
      r.node?.startsWith(host) ? { ...r, node: "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca" } : r,
    );
    expect(deployedLossBound("primary", 100, c, byId, FAULT_AT, [pod0]).toMs).toBe(3100);
  });

  // Seen on real pods (CI, the byo stack's cluster drills): a no-WAIT write whose slot owner changed
  // between its send and its reply is named `SENT→AT`; the step threw "is not HOST:PORT" on it.
  it("cluster: a `SENT→AT` record ends the window only when both nodes are deleted pods, read back from the load pod's log", () => {
    const dns = (i: number): string => `valkey-cluster-${i}.valkey-cluster-headless.valkey.svc.cluster.local:6379`;
    const moved = (node: string) => [
      { ...at(FAULT_AT + 2020, false), stream: "cluster-client@5461-10921", node: "10.0.0.2:6379" },
      { ...at(FAULT_AT + 3390.5, true), stream: "cluster-client@0-5460", node },
      { ...at(FAULT_AT + 3450, false), stream: "cluster-client@0-5460" },
    ];
    const logged = (node: string) =>
      parseRecordLines(
        formatRecordLines({
          prefix: "p",
          loadStart: 9_000,
          loadStop: 15_000,
          streams: ["cluster-client@0-5460", "cluster-client@5461-10921"],
          records: moved(node),
        }),
      ).records;
    const pod0 = deleted("valkey-cluster-0", "10.0.0.9");
    const pod5 = deleted("valkey-cluster-5", "10.0.0.14");
    expect(logged(`${dns(0)}→${dns(5)}`)[1]?.node).toBe(`${dns(0)}→${dns(5)}`);
    // One of the two deleted (the replica promoted in its place lives): which answered is unknown.
    expect(deployedLossBound("primary", 100, c, logged(`${dns(0)}→${dns(5)}`), FAULT_AT, [pod0]).toMs).toBe(2020);
    // Both deleted (`all`): a deleted pod answered, whichever it was.
    expect(deployedLossBound("all", 100, c, logged(`${dns(0)}→${dns(5)}`), FAULT_AT, [pod0, pod5]).toMs).toBe(3391);
    // A node id on either side proves nothing.
    expect(
      deployedLossBound("all", 100, c, logged(`${dns(0)}→e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca`), FAULT_AT, [
        pod0,
        pod5,
      ]).toMs,
    ).toBe(2020);
    expect(ackedBy(`${dns(0)}→${dns(5)}`, [pod0, pod5])).toBe(true);
    expect(ackedBy(`${dns(0)}→${dns(5)}`, [pod5])).toBe(false);
  });
});
