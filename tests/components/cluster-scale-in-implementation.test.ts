/**
 * The ClusterScaleIn implementation against REAL valkey-server processes, in the order `pulumi
 * up` runs it. Faked: the Kubernetes API (a StaticPodApi whose pods vc-0..vc-7 point at local
 * servers, three nodes in three zones) and the PVC API (in memory). Real: discovery, the
 * bootstrap that forms the 4x1 cluster, the core scale-in, DirectConnector, Valkey. Lowering
 * to 3 primaries empties vc-6 and vc-7 and deletes their claims before anything stops them; the
 * bootstrap that follows the StatefulSet's shrink finds the 3x1 cluster formed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "ioredis";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { serversAsPods } from "../support/static-pods.js";
import { bootstrapStep } from "../../components/steps/cluster-bootstrap/declaration.js";
import { bootstrapOnKubernetes } from "../../components/steps/cluster-bootstrap/implementation.js";
import { scaleInStep } from "../../components/steps/cluster-scale-in/declaration.js";
import { scaleInOnKubernetes } from "../../components/steps/cluster-scale-in/implementation.js";
import type { ClaimRecord, VolumeApi } from "../../components/steps/volume-release/volume-api.js";

const password = `pw-${Math.random().toString(36).slice(2)}`;
const selector = "app.kubernetes.io/instance=vc";
const zones = { "node-a": "us-west-2a", "node-b": "us-west-2b", "node-c": "us-west-2c" };
const target = { namespace: "data", selector, kubeconfig: "unused", connector: "direct" as const };

const podApi = (servers: readonly ValkeyProcess[]) => serversAsPods(servers, zones);

/** PVCs in memory: `data-vc-<i>` for every pod, plus another release's claim that must stay. */
class MemoryVolumes implements VolumeApi {
  claims: ClaimRecord[];
  deleted: string[] = [];
  constructor(pods: number) {
    this.claims = [...Array.from({ length: pods }, (_, i) => `data-vc-${i}`), "data-vc-70"].map((name) => ({
      name,
      volumeName: `pv-${name}`,
      deleting: false,
      finalizers: [],
    }));
  }
  listClaims(): Promise<ClaimRecord[]> {
    return Promise.resolve(this.claims.map((c) => ({ ...c })));
  }
  deleteClaim(_ns: string, name: string): Promise<void> {
    this.deleted.push(name);
    this.claims = this.claims.map((c) => (c.name === name ? { ...c, deleting: true } : c));
    return Promise.resolve();
  }
  listVolumes(): Promise<never[]> {
    return Promise.resolve([]);
  }
}

describe("ClusterScaleIn on real valkey-server processes", () => {
  const fleet = new LocalFleet();
  let servers: ValkeyProcess[];
  const connector = () => new DirectConnector({ password });

  beforeAll(async () => {
    servers = await fleet.startMany(8, (i) => ({
      name: `si-${i}`,
      clusterEnabled: true,
      password,
      clusterNodeTimeoutMs: 2000,
    }));
  });
  afterAll(() => fleet.stopAll());

  const scaleInputs = (primaries: number) => ({
    ...scaleInStep.parse({ ...target, primaries, replicasPerPrimary: 1 }),
    password,
    timeoutMs: 30_000,
  });
  const bootInputs = (primaries: number) => ({
    ...bootstrapStep.parse({ ...target, expectedPods: primaries * 2, primaries, replicasPerPrimary: 1 }),
    password,
    timeoutMs: 30_000,
  });

  it("does nothing before the StatefulSet exists (no pods) or when no pod is above the shape", async () => {
    const volumes = new MemoryVolumes(8);
    const none = await scaleInOnKubernetes(scaleInputs(3), { kube: { podApi: podApi([]), connector }, volumes });
    expect(none).toEqual({ changed: false, leavingPods: [], deletedClaims: [], steps: [] });
    const same = await scaleInOnKubernetes(scaleInputs(4), { kube: { podApi: podApi(servers), connector }, volumes });
    expect(same.changed).toBe(false);
    expect(volumes.deleted).toEqual([]);
  });

  it("4x1 -> 3x1: vc-6 and vc-7 leave with no key lost, their claims are deleted, and the bootstrap after the shrink finds the new shape", async () => {
    await bootstrapOnKubernetes(bootInputs(4), { podApi: podApi(servers), connector });
    const c = new Cluster([{ host: "127.0.0.1", port: servers[0]!.port }], { redisOptions: { password } });
    try {
      for (let i = 0; i < 1000; i += 100)
        await Promise.all(Array.from({ length: 100 }, (_, k) => c.set(`k:${i + k}`, `v${i + k}`)));
    } finally {
      c.disconnect();
    }
    const volumes = new MemoryVolumes(8);
    const out = await scaleInOnKubernetes(scaleInputs(3), { kube: { podApi: podApi(servers), connector }, volumes });
    expect(out.changed).toBe(true);
    expect(out.leavingPods).toEqual(["vc-6", "vc-7"]);
    expect(out.deletedClaims).toEqual(["data-vc-6", "data-vc-7"]);
    expect(out.steps.some((s) => /vc-6 left the cluster/.test(s))).toBe(true);
    // The StatefulSet shrinks: vc-6 and vc-7 stop; the bootstrap that follows sees the 3x1 cluster formed.
    await Promise.all(servers.slice(6).map((s) => s.stop()));
    const after = await bootstrapOnKubernetes(bootInputs(3), { podApi: podApi(servers.slice(0, 6)), connector });
    expect(after.changed).toBe(false);
    expect(after.plan.shards).toHaveLength(3);
    const r = new Cluster([{ host: "127.0.0.1", port: servers[0]!.port }], { redisOptions: { password } });
    try {
      const values = await Promise.all(Array.from({ length: 1000 }, (_, i) => r.get(`k:${i}`)));
      expect(values.filter((v, i) => v !== `v${i}`)).toEqual([]);
    } finally {
      r.disconnect();
    }
  });
});
