/**
 * The ClusterBootstrap implementation against REAL fresh cluster-enabled valkey-server
 * processes. Faked: the Kubernetes API (a StaticPodApi whose pods point at the local servers:
 * pod IP 127.0.0.1, the real client and bus ports as named container ports, three fake nodes
 * in three zones). Real: discovery, the core planner and executor, DirectConnector, Valkey.
 */
import { bootstrapStep } from "../../components/steps/cluster-bootstrap/declaration.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { DirectConnector } from "../../core/topology/connector.js";
import type { KubeDeps } from "../../components/steps/kit/kube-access.js";
import {
  bootstrapOnKubernetes,
  membersAnswering,
  refuseUnsupportedReshape,
  diff,
  type ClusterBootstrapInputs,
  type ClusterBootstrapOutputs,
} from "../../components/steps/cluster-bootstrap/implementation.js";
import { serversAsPods } from "../support/static-pods.js";
import type { ClusterMember } from "../../core/bootstrap/cluster-member.js";
import { freePort } from "../../harness/local/ports.js";
import { sleep } from "../../core/util/poll-until.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const selector = "app.kubernetes.io/instance=vc";

const podApi = serversAsPods;

const inputs = (over: Partial<ClusterBootstrapInputs> = {}): ClusterBootstrapInputs => ({
  ...bootstrapStep.parse({
    namespace: "data",
    selector,
    kubeconfig: "unused",
    connector: "direct",
    expectedPods: 6,
    primaries: 3,
    replicasPerPrimary: 1,
  }),
  password,
  timeoutMs: 30_000,
  ...over,
});

describe("bootstrapOnKubernetes on real valkey-server processes", () => {
  const fleet = new LocalFleet();
  let servers: ValkeyProcess[];
  let deps: KubeDeps;
  let first: ClusterBootstrapOutputs;
  const zones = { "node-a": "us-west-2a", "node-b": "us-west-2b", "node-c": "us-west-2c" };

  beforeAll(async () => {
    servers = await fleet.startMany(6, (i) => ({
      name: `kb-${i}`,
      clusterEnabled: true,
      password,
      clusterNodeTimeoutMs: 2000,
    }));
    deps = { podApi: podApi(servers, zones), connector: () => new DirectConnector({ password }) };
  });
  afterAll(() => fleet.stopAll());

  it("refuses a bad zone layout (every pod in one zone) before touching any node", async () => {
    const oneZone = { podApi: podApi(servers, { "node-a": "us-west-2a" }), connector: deps.connector };
    await expect(bootstrapOnKubernetes(inputs(), oneZone)).rejects.toThrow(/zone|us-west-2a/);
  });

  it("refuses when the pod count differs from expectedPods, naming the pods", async () => {
    await expect(bootstrapOnKubernetes(inputs({ expectedPods: 7 }), deps)).rejects.toThrow(
      `expected 7 Valkey pods in namespace data with selector '${selector}', found 6 (vc-0, vc-1, vc-2, vc-3, vc-4, vc-5)`,
    );
  });

  it("refuses pods that are not ready, naming them", async () => {
    const api = podApi(servers, zones);
    const first = api.pods[0];
    if (first) first.ready = false;
    await expect(bootstrapOnKubernetes(inputs(), { podApi: api, connector: deps.connector })).rejects.toThrow(
      `Valkey pods in namespace data with selector '${selector}' are not usable yet: vc-0 (not ready)`,
    );
  });

  it("forms a 3x1 cluster with every replica in another zone than its primary", async () => {
    first = await bootstrapOnKubernetes(inputs(), deps);
    expect(first.changed).toBe(true);
    expect(first.plan.shards).toHaveLength(3);
    expect(first.plan.shards.map((s) => s.slotRanges)).toEqual([["0-5460"], ["5461-10921"], ["10922-16383"]]);
    expect(first.plan.primariesPerZone).toEqual({ "us-west-2a": 1, "us-west-2b": 1, "us-west-2c": 1 });
    const podZone = new Map(servers.map((_, i) => [`vc-${i}`, Object.values(zones)[i % 3]]));
    for (const s of first.plan.shards) {
      expect(s.primary.zone).toBe(podZone.get(s.primary.pod));
      expect(s.replicas).toHaveLength(1);
      for (const r of s.replicas) {
        expect(r.zone).toBe(podZone.get(r.pod));
        expect(r.zone).not.toBe(s.primary.zone);
      }
      expect(s.primary.nodeId).toBe(first.nodeIds[s.primary.pod]);
    }
    expect(Object.keys(first.nodeIds).sort()).toEqual(["vc-0", "vc-1", "vc-2", "vc-3", "vc-4", "vc-5"]);
    expect(first.steps.some((x) => /replicates/.test(x))).toBe(true);
    expect(JSON.stringify(first)).not.toContain(password);
    // Each member announces its pod's zone (pod -> node -> label), which pods lack before Kubernetes 1.35.
    for (const [i, s] of servers.entries()) {
      const c = await new DirectConnector({ password }).connect({ host: "127.0.0.1", port: s.port });
      expect(await c.call("CONFIG", "GET", "availability-zone")).toEqual(["availability-zone", podZone.get(`vc-${i}`)]);
      c.disconnect();
    }
    expect(first.steps).toContain("vc-1: availability-zone us-west-2b");
  });

  it("a second run on the healthy cluster changes nothing and reports the same cluster", async () => {
    const again = await bootstrapOnKubernetes(inputs(), deps);
    expect(again.changed).toBe(false);
    expect(again.steps).toEqual(["cluster already formed with this shape; nothing to do"]);
    expect(again.nodeIds).toEqual(first.nodeIds);
    expect(again.plan).toEqual(first.plan);
  });

  it("refuses another shape on the formed cluster", async () => {
    await expect(bootstrapOnKubernetes(inputs({ primaries: 2, replicasPerPrimary: 2 }), deps)).rejects.toThrow(
      /already belong to a cluster/,
    );
  });
});

describe("the bootstrap's dynamic-provider protocol", () => {
  const base = {
    namespace: "data",
    selector,
    expectedPods: 6,
    primaries: 3,
    replicasPerPrimary: 1,
    connector: "direct",
    kubeconfig: "k1",
    password: "p1",
  };

  it("diff: no change for the same inputs or new secrets; a change for a new shape or selector", () => {
    const outs = {
      namespace: "data",
      selector,
      expectedPods: 6,
      primaries: 3,
      replicasPerPrimary: 1,
      connector: "direct",
      plan: {},
      changed: true,
    };
    expect(diff("id", outs, base)).toEqual({ changes: false, replaces: [] });
    expect(diff("id", outs, { ...base, kubeconfig: "k2", password: "p2" }).changes).toBe(false);
    expect(diff("id", outs, { ...base, primaries: 4 }).changes).toBe(true);
    expect(diff("id", outs, { ...base, selector: "x=y" }).changes).toBe(true);
  });

  it("update allows adding primaries on new pods, and refuses other shape changes with a clear message", () => {
    expect(() => refuseUnsupportedReshape(base, { ...base, primaries: 4, expectedPods: 8 })).not.toThrow();
    // Fewer primaries: the ClusterScaleIn step applied it before the StatefulSet shrank.
    expect(() => refuseUnsupportedReshape(base, { ...base, primaries: 2, expectedPods: 4 })).not.toThrow();
    expect(() => refuseUnsupportedReshape(base, { ...base, primaries: 2, expectedPods: 6 })).toThrow(
      "scaling an existing cluster from 3 primaries x 1 replicas (6 pods) to 2 primaries x 1 replicas (6 pods) is not supported yet",
    );
    expect(() => refuseUnsupportedReshape(base, { ...base, replicasPerPrimary: 2, expectedPods: 9 })).toThrow(
      /is not supported yet/,
    );
    expect(() => refuseUnsupportedReshape(base, { ...base, selector: "x=y" })).not.toThrow();
  });

  it("input errors name the key, never a secret value", () => {
    expect(() => bootstrapStep.parse({ ...base, primaries: 0 })).toThrow(
      "input 'primaries' must be a whole number ≥ 1",
    );
    expect(() => bootstrapStep.parse({ ...base, connector: "ssh" })).toThrow(
      "input 'connector' must be one of port-forward, direct",
    );
    expect(() => bootstrapStep.parse({ ...base, kubeconfig: 42 })).toThrow(
      "input 'kubeconfig' must be a non-empty string",
    );
  });
});

describe("membersAnswering: the bootstrap waits for a ready pod's server to take connections", () => {
  const fleet = new LocalFleet();
  afterAll(() => fleet.stopAll());
  const member = (id: string, host: string, port: number): ClusterMember => ({
    id,
    zone: "us-west-2a",
    endpoint: { host, port },
    meet: { ip: host, port, busPort: port + 10_000 },
  });

  it("a server that starts listening late is waited for; one never listening is named past the bound", async () => {
    const [up] = await fleet.startMany(1, () => ({ name: "ans-up", clusterEnabled: true, password }));
    const host = (up as ValkeyProcess).host;
    const late = await freePort(host);
    const never = await freePort(host);
    const connector = new DirectConnector({ password, connectTimeoutMs: 500 });
    const t0 = Date.now();
    let started = 0;
    const starting = sleep(1500).then(async () => {
      await fleet.start({ name: "ans-late", port: late, clusterEnabled: true, password });
      started = Date.now();
    });
    await membersAnswering(
      [member("vc-0", host, (up as ValkeyProcess).port), member("vc-1", host, late)],
      connector,
      30_000,
    );
    await starting;
    // It returned only once the late server listened, not before.
    expect(Date.now()).toBeGreaterThanOrEqual(started);
    expect(started - t0).toBeGreaterThanOrEqual(1500);

    await expect(
      membersAnswering(
        [member("vc-0", host, (up as ValkeyProcess).port), member("vc-2", host, never)],
        connector,
        1500,
      ),
    ).rejects.toThrow(`not answering: vc-2 (cannot reach ${host}:${never}: `);
  });

  it("a wrong password fails at once, not after the bound", async () => {
    const [up] = await fleet.startMany(1, () => ({ name: "ans-pw", clusterEnabled: true, password }));
    const t0 = Date.now();
    await expect(
      membersAnswering(
        [member("vc-0", (up as ValkeyProcess).host, (up as ValkeyProcess).port)],
        new DirectConnector({ password: "not-it" }),
        60_000,
      ),
    ).rejects.toThrow(/authentication failed/);
    expect(Date.now() - t0).toBeLessThan(30_000);
  });
});
