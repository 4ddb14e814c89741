/**
 * RollingRestart's orchestration (components/steps/rolling-restart/implementation.ts) against a
 * fake API server and a verifier that reports the fake's state: which pods it evicts and in what
 * order, what it skips (pods already at the update revision: nothing stale, a resumed roll), how
 * it waits (a PodDisruptionBudget refusing, the StatefulSet recreating the pod at the new
 * revision) and how it fails (naming the pod). The order itself is roll-plan.ts's (its own test);
 * the real restarts, failovers and verifier run on real processes in the upgrade drill test.
 */
import { describe, expect, it } from "vitest";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import { rollStep } from "../../components/steps/rolling-restart/declaration.js";
import {
  podOfAddress,
  REVISION_LABEL,
  runRoll,
  type RollDeps,
} from "../../components/steps/rolling-restart/implementation.js";
import type { RollKubeApi, RollPod } from "../../components/steps/rolling-restart/kube-api.js";

const NS = "valkey";
const dns = (pod: string): string => `${pod}.valkey-headless.${NS}.svc.cluster.local`;

interface FakeOptions {
  mode: "replication" | "cluster";
  /** Pods already at the new revision. */
  current?: string[];
  /** Evictions of these pods are refused this many times (HTTP 429) first. */
  blocked?: Record<string, number>;
  /** These pods never come back after an eviction. */
  lost?: string[];
}

/**
 * A StatefulSet controller and Valkey topology in miniature: an evicted pod comes back (new uid, new revision, new IP)
 * two polls later.
 */
class FakeRelease implements RollKubeApi {
  pods: (RollPod & { back?: number })[] = [];
  evictions: string[] = [];
  failovers: string[] = [];
  primary: string;
  private clock = 0;
  private ips = 0;
  constructor(private readonly o: FakeOptions) {
    const members = o.mode === "replication" ? ["valkey-0", "valkey-1", "valkey-2"] : ["valkey-0", "valkey-1"];
    const sentinels = o.mode === "replication" ? ["valkey-sentinel-0", "valkey-sentinel-1", "valkey-sentinel-2"] : [];
    [...members, ...sentinels].forEach((name, n) => {
      const set = name.replace(/-\d+$/, "");
      const rev = (o.current ?? []).includes(name) ? `${set}-new` : `${set}-old`;
      this.pods.push({
        name,
        uid: `uid-${name}-0`,
        podIP: `10.0.0.${n + 1}`,
        ready: true,
        deleting: false,
        labels: { [REVISION_LABEL]: rev, role: set.endsWith("sentinel") ? "sentinel" : "member" },
      });
    });
    this.primary = "valkey-0";
  }
  listPods(_ns: string, selector: string): Promise<RollPod[]> {
    this.clock++;
    for (const p of this.pods) {
      if (p.back !== undefined && this.clock >= p.back) {
        const set = p.name.replace(/-\d+$/, "");
        // A new pod: a new uid, the new revision, and a new pod IP (Sentinels are reported by it).
        Object.assign(p, {
          uid: `${p.uid}+`,
          podIP: `10.0.1.${++this.ips}`,
          deleting: false,
          ready: true,
          back: undefined,
          labels: { ...p.labels, [REVISION_LABEL]: `${set}-new` },
        });
      }
    }
    const role = selector.includes("sentinel") ? "sentinel" : "member";
    return Promise.resolve(
      this.pods
        .filter(
          (p) =>
            p.labels.role === role && !(p.deleting && p.back === undefined && this.o.lost?.includes(p.name) === false),
        )
        .map((p) => ({ ...p })),
    );
  }
  evictPod(_ns: string, name: string): Promise<"evicted" | "blocked"> {
    const left = this.o.blocked?.[name] ?? 0;
    if (left > 0) {
      this.o.blocked![name] = left - 1;
      return Promise.resolve("blocked");
    }
    this.evictions.push(name);
    const p = this.pods.find((x) => x.name === name)!;
    // The member's preStop: a primary hands over to a replica first (replication mode).
    if (name === this.primary)
      this.primary = this.pods.find((x) => x.labels.role === "member" && x.name !== name)!.name;
    Object.assign(p, { deleting: true, ready: false, back: this.o.lost?.includes(name) ? Infinity : this.clock + 2 });
    return Promise.resolve("evicted");
  }
  updateRevision(_ns: string, name: string): Promise<string | undefined> {
    return Promise.resolve(`${name}-new`);
  }
  verify = (): Promise<TopologyReport> => {
    const members = this.pods.filter((p) => p.labels.role === "member");
    const down = this.pods.filter((p) => !p.ready);
    const replica = (p: RollPod) => ({
      address: `${dns(p.name)}:6379`,
      zone: undefined,
      crossAz: true,
      linkUp: p.ready,
      lagBytes: 0,
    });
    return Promise.resolve({
      ok: down.length === 0,
      mode: this.o.mode,
      failures: down.map((p) => ({ code: "REPLICA_LINK_DOWN" as const, message: `${p.name} down` })),
      shards: [
        {
          primary: {
            address: `${dns(this.primary)}:6379`,
            zone: undefined,
            slotRanges: this.o.mode === "cluster" ? ["0-16383"] : [],
            slotCount: 0,
            keys: undefined,
          },
          replicas: members.filter((p) => p.name !== this.primary).map(replica),
        },
      ],
      primariesPerZone: {},
      nodeCount: members.length,
      ...(this.o.mode === "replication"
        ? {
            sentinels: this.pods
              .filter((p) => p.labels.role === "sentinel")
              .map((p) => ({ address: `${p.podIP}:26379`, zone: undefined, reachable: p.ready, agrees: true })),
          }
        : {}),
    });
  };
  failover = (address: string): Promise<void> => {
    this.failovers.push(address);
    this.primary = address.split(".")[0] as string;
    return Promise.resolve();
  };
}

function inputs(mode: "replication" | "cluster", extra: Record<string, unknown> = {}) {
  return rollStep.parse({
    kubeconfig: "apiVersion: v1",
    namespace: NS,
    selector: "role=member",
    mode,
    ...(mode === "replication" ? { sentinel: { selector: "role=sentinel", port: 26379, masterName: "valkey" } } : {}),
    statefulSets: mode === "replication" ? ["valkey", "valkey-sentinel"] : ["valkey"],
    templateHash: "abc",
    stepTimeoutS: 1,
    pollMs: 2,
    ...extra,
  });
}

const depsOf = (k: FakeRelease): RollDeps => ({ api: k, verify: k.verify, failover: k.failover });

describe("RollingRestart implementation (fake API server)", () => {
  it("replication: evicts the Sentinels one by one, then the replicas, the primary last; each back at the new revision before the next", async () => {
    const k = new FakeRelease({ mode: "replication" });
    const out = await runRoll(inputs("replication"), depsOf(k));
    expect(k.evictions).toEqual([
      "valkey-sentinel-0",
      "valkey-sentinel-1",
      "valkey-sentinel-2",
      "valkey-1",
      "valkey-2",
      "valkey-0",
    ]);
    expect(out.restartedPods).toEqual(k.evictions);
    expect(out.steps.map((s) => s.kind)).toEqual(["sentinel", "sentinel", "sentinel", "replica", "replica", "primary"]);
    expect(k.pods.every((p) => p.labels[REVISION_LABEL]?.endsWith("-new"))).toBe(true);
  });

  it("cluster: the replica first, CLUSTER FAILOVER to it, then the old primary", async () => {
    const k = new FakeRelease({ mode: "cluster" });
    const out = await runRoll(inputs("cluster"), depsOf(k));
    expect(k.evictions).toEqual(["valkey-1", "valkey-0"]);
    expect(k.failovers).toEqual([`${dns("valkey-1")}:6379`]);
    expect(out.steps.map((s) => s.kind)).toEqual(["replica", "failover", "replica"]);
  });

  it("nothing stale (a fresh stack, or a change that left the templates alone): no pod is touched, no verifier call needed", async () => {
    const all = ["valkey-0", "valkey-1", "valkey-2", "valkey-sentinel-0", "valkey-sentinel-1", "valkey-sentinel-2"];
    const k = new FakeRelease({ mode: "replication", current: all });
    const out = await runRoll(inputs("replication"), {
      ...depsOf(k),
      verify: () => Promise.reject(new Error("must not verify")),
    });
    expect(k.evictions).toEqual([]);
    expect(out).toEqual({ steps: [], restartedPods: [], totalMs: 0 });
  });

  it("resumes a roll cut short: pods already at the new revision are not restarted again", async () => {
    const k = new FakeRelease({
      mode: "replication",
      current: ["valkey-sentinel-0", "valkey-sentinel-1", "valkey-sentinel-2", "valkey-1"],
    });
    await runRoll(inputs("replication"), depsOf(k));
    expect(k.evictions).toEqual(["valkey-2", "valkey-0"]);
  });

  it("waits while the PodDisruptionBudget refuses an eviction, then goes on", async () => {
    const k = new FakeRelease({ mode: "cluster", blocked: { "valkey-1": 3 } });
    await runRoll(inputs("cluster"), depsOf(k));
    expect(k.evictions).toEqual(["valkey-1", "valkey-0"]);
  });

  it("fails naming the pod when the budget refuses past stepTimeoutS, or the pod does not come back", async () => {
    await expect(
      runRoll(inputs("cluster"), depsOf(new FakeRelease({ mode: "cluster", blocked: { "valkey-1": 1e9 } }))),
    ).rejects.toThrow(
      /the eviction of valkey-1 not within 1 s \(rollingRestart.stepTimeoutS\): its PodDisruptionBudget refused/,
    );
    await expect(
      runRoll(inputs("cluster"), depsOf(new FakeRelease({ mode: "cluster", lost: ["valkey-1"] }))),
    ).rejects.toThrow(/valkey-1 back at revision valkey-new and Ready not within 1 s/);
  });

  it("finds the pod an address names: by pod IP, or by the first label of its DNS name", () => {
    const pods = new FakeRelease({ mode: "replication" }).pods;
    expect(podOfAddress("10.0.0.5:26379", pods)?.name).toBe("valkey-sentinel-1");
    expect(podOfAddress(`${dns("valkey-2").toUpperCase()}.:6379`, pods)?.name).toBe("valkey-2");
    expect(podOfAddress("valkey-20.x:6379", pods)).toBeUndefined();
  });
});
