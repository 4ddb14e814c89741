/**
 * The TopologyCheck implementation on a REAL local 3x1 cluster (startLocalCluster) and a REAL
 * 1+2 replication set (startLocalReplication). Faked: the Kubernetes API (a StaticPodApi whose
 * pods are the local servers, on fake nodes carrying the zones the local helpers assigned).
 */
import { checkStep } from "../../components/steps/topology-check/declaration.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { startLocalReplication, type LocalReplication } from "../../harness/local/local-replication.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { DirectConnector, openClient } from "../../core/topology/connector.js";
import type { KubeDeps } from "../../components/steps/kit/kube-access.js";
import { StaticPodApi } from "../../components/kubernetes/static-pod-api.js";
import {
  checkTopologyOnKubernetes,
  diff,
  TopologyCheckError,
  type TopologyCheckInputs,
} from "../../components/steps/topology-check/implementation.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const zones = ["us-west-2a", "us-west-2b", "us-west-2c"];

/** One fake node per server, in the zone `zoneOf` gives; roles as pod labels. */
function depsFor(
  servers: readonly ValkeyProcess[],
  zoneOf: (s: ValkeyProcess) => string,
  role?: (s: ValkeyProcess) => string,
): KubeDeps {
  const api = new StaticPodApi(
    servers.map((s, i) => ({
      name: `v-${i}`,
      podIP: s.host,
      nodeName: `node-${i}`,
      labels: { app: "v", ...(role ? { "valkey-on-eks/role": role(s) } : {}) },
      ports: { valkey: s.port },
    })),
    Object.fromEntries(servers.map((s, i) => [`node-${i}`, zoneOf(s)])),
  );
  return { podApi: api, connector: () => new DirectConnector({ password }) };
}

const inputs = (mode: "cluster" | "replication", over: Record<string, unknown> = {}): TopologyCheckInputs => ({
  ...checkStep.parse({
    mode,
    namespace: "data",
    selector: "app=v",
    kubeconfig: "unused",
    connector: "direct",
    ...over,
  }),
  password,
});

async function failureOf(p: Promise<unknown>): Promise<TopologyCheckError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof TopologyCheckError) return err;
    throw err;
  }
  throw new Error("the check passed");
}

describe("checkTopologyOnKubernetes, cluster mode", () => {
  const fleet = new LocalFleet();
  let cluster: LocalCluster;
  let deps: KubeDeps;

  beforeAll(async () => {
    cluster = await startLocalCluster(fleet, {
      primaries: 3,
      replicasPerPrimary: 1,
      zones,
      password,
      clusterNodeTimeoutMs: 2000,
    });
    deps = depsFor(cluster.nodes, (s) => cluster.zoneMap[s.address] ?? "?");
    const c = await openClient(cluster.seed.host, cluster.seed.port, "seed", { password });
    // Write where the key's slot lives (follow one MOVED by hand).
    const res = await c.set("{bar}k", "v").catch((err: Error) => err);
    if (res instanceof Error) {
      const [, , addr] = res.message.split(" ");
      const [host, port] = (addr ?? "").split(":");
      const owner = await openClient(host ?? "", Number(port), "owner", { password });
      await owner.set("{bar}k", "v");
      owner.disconnect();
    }
    c.disconnect();
  });
  afterAll(() => fleet.stopAll());

  it("passes on the healthy cluster and returns the JSON-safe report and the table", async () => {
    const out = await checkTopologyOnKubernetes(
      inputs("cluster", { expect: { primaries: 3, replicasPerPrimary: 1 } }),
      deps,
    );
    expect(out.report.ok).toBe(true);
    expect(out.report.failures).toEqual([]);
    expect(out.report.mode).toBe("cluster");
    expect(out.report.shards.map((s) => s.primary.slotRanges)).toEqual([["0-5460"], ["5461-10921"], ["10922-16383"]]);
    expect(out.report.shards.map((s) => s.primary.keys)).toEqual([1, 0, 0]);
    expect(out.report.primariesPerZone).toEqual({ "us-west-2a": 1, "us-west-2b": 1, "us-west-2c": 1 });
    for (const s of out.report.shards) {
      expect(s.primary.zone).toBe(cluster.zoneMap[s.primary.address]);
      expect(s.replicas.every((r) => r.crossAz && r.linkUp && r.zone !== s.primary.zone)).toBe(true);
    }
    expect(JSON.parse(JSON.stringify(out.report))).toEqual(out.report);
    expect(out.table).toContain("VERIFY: PASS");
  });

  it("fails on a same-zone primary/replica pair with NO_CROSS_AZ_REPLICA and the table", async () => {
    // Every replica's fake node says it is in its primary's zone.
    const primaryOf = new Map([...cluster.replicasOf].flatMap(([p, rs]) => rs.map((r) => [r.address, p] as const)));
    const sameZone = depsFor(cluster.nodes, (s) => cluster.zoneMap[primaryOf.get(s.address) ?? s.address] ?? "?");
    const err = await failureOf(checkTopologyOnKubernetes(inputs("cluster"), sameZone));
    expect(err.message).toMatch(/^topology check failed \(cluster mode\): NO_CROSS_AZ_REPLICA\n/);
    expect(err.message).toContain("cross-AZ ✗");
    expect(err.message).toContain("VERIFY: FAIL");
    expect(err.message).not.toContain(password);
  });

  it("fails when 100 slots are deleted (SLOTS_UNASSIGNED, CLUSTER_STATE_NOT_OK), then passes once they are back", async () => {
    const owner = cluster.primaries[2] as ValkeyProcess;
    const c = await openClient(owner.host, owner.port, owner.address, { password });
    try {
      await c.call("CLUSTER", "DELSLOTSRANGE", "16284", "16383");
      const err = await failureOf(checkTopologyOnKubernetes(inputs("cluster"), deps));
      expect(err.message).toMatch(/^topology check failed \(cluster mode\): .*SLOTS_UNASSIGNED/);
      expect(err.report.failures.map((f) => f.code)).toContain("SLOTS_UNASSIGNED");
      expect(err.message).toContain("=== Topology + primary↔replica AZ pairing ===");
    } finally {
      await c.call("CLUSTER", "ADDSLOTSRANGE", "16284", "16383");
      c.disconnect();
    }
    await expect
      .poll(async () => (await checkTopologyOnKubernetes(inputs("cluster"), deps).catch(() => undefined))?.report.ok, {
        timeout: 15_000,
      })
      .toBe(true);
  });

  it("fails when the expected shape differs (SHAPE_MISMATCH)", async () => {
    const err = await failureOf(checkTopologyOnKubernetes(inputs("cluster", { expect: { primaries: 4 } }), deps));
    expect(err.report.failures.map((f) => f.code)).toEqual(["SHAPE_MISMATCH"]);
  });
});

describe("checkTopologyOnKubernetes, replication mode", () => {
  const fleet = new LocalFleet();
  let rep: LocalReplication;

  beforeAll(async () => {
    rep = await startLocalReplication(fleet, { replicas: 2, zones, password });
  });
  afterAll(() => fleet.stopAll());

  it("seeds at the pod labelled primary and passes with cross-zone replicas", async () => {
    const all = [...rep.replicas, rep.primary];
    const deps = depsFor(
      all,
      (s) => rep.zoneMap[s.address] ?? "?",
      (s) => (s === rep.primary ? "primary" : "replica"),
    );
    const out = await checkTopologyOnKubernetes(inputs("replication", { expect: { replicas: 2 } }), deps);
    expect(out.report.ok).toBe(true);
    expect(out.report.shards[0]?.primary.address).toBe(rep.primary.address);
    expect(out.report.shards[0]?.replicas).toHaveLength(2);
  });

  it("fails with REPLICA_COUNT when more replicas are expected", async () => {
    const all = [rep.primary, ...rep.replicas];
    const deps = depsFor(all, (s) => rep.zoneMap[s.address] ?? "?");
    const err = await failureOf(checkTopologyOnKubernetes(inputs("replication", { expect: { replicas: 3 } }), deps));
    expect(err.message).toMatch(/REPLICA_COUNT/);
  });
});

describe("the check's dynamic-provider protocol", () => {
  it("re-runs when a trigger or expectation changes, not when secrets change", () => {
    const base = {
      mode: "cluster",
      namespace: "d",
      selector: "a=b",
      connector: "direct",
      triggers: ["urn:1", "abc"],
      expect: { primaries: 3 },
    };
    expect(diff("id", base, { ...base, kubeconfig: "new", password: "new" }).changes).toBe(false);
    expect(diff("id", base, { ...base, triggers: ["urn:1", "abd"] }).changes).toBe(true);
    expect(diff("id", base, { ...base, expect: { primaries: 4 } }).changes).toBe(true);
  });

  it("re-runs when checks.runId changes, not when it stays the same", () => {
    const base = {
      mode: "cluster",
      namespace: "d",
      selector: "a=b",
      connector: "direct",
      triggers: [],
      runId: "2026-11-23",
    };
    expect(diff("id", base, { ...base }).changes).toBe(false);
    expect(diff("id", base, { ...base, runId: "2026-11-24" }).changes).toBe(true);
    const { runId: _none, ...without } = base;
    expect(diff("id", without, { ...without, runId: "first" }).changes).toBe(true);
    expect(diff("id", without, { ...without }).changes).toBe(false);
  });
});
