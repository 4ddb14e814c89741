/**
 * The byo stack in both modes on the local real cluster (kube:local): the real Pulumi engine
 * deploys it, and the pods run from the locally built images (valkey; HAProxy in replication
 * mode, through valkey.replication.haproxyImage) through the real start scripts,
 * become Ready through the real readiness probe on local-path volumes, and the cluster bootstrap and
 * the topology check run inside `up` through the port-forward connector (API server -> kubelet ->
 * containerd), with zones from the real nodes. A second `up` changes nothing, and `destroy` leaves
 * no pod, PVC or PV. Needs root, `install.sh` (Pulumi) and `install.sh --real-cluster`. Starts the
 * cluster when none runs.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, type Api } from "../../benchmarks/kube-local/api.js";
import { up, type ClusterStatus } from "../../benchmarks/kube-local/cluster.js";
import { LOCAL_PATH_STORAGE_CLASS } from "../../benchmarks/kube-local/addons.js";
import { createPulumiEnv, createStack, tail, toolchainPaths, type PulumiEnv } from "../e2e/support/pulumi-harness.js";
import { realClusterDirs } from "../support/toolchain.js";

const missing = [
  ...Object.entries(realClusterDirs),
  ["pulumi", toolchainPaths.pulumi] as const,
  ["pulumi-kubernetes", toolchainPaths.kubernetesProvider] as const,
]
  .filter(([, d]) => !existsSync(d))
  .map(([k]) => k);
const reason = process.getuid?.() !== 0 ? "needs root" : missing.length > 0 ? `not built: ${missing.join(", ")} (bash .ci/setup --pods)` : "";
const PASSWORD = `pods-${Math.random().toString(36).slice(2)}-secret`;

describe.skipIf(reason !== "")(`byo stack on real pods${reason ? ` (skipped: ${reason})` : ""}`, () => {
  let cluster: ClusterStatus;
  let api: Api;
  let env: PulumiEnv;

  beforeAll(async () => {
    cluster = await up(() => undefined);
    api = apiClient(cluster.kubeconfig);
    // The byo stack selects its nodes like the Karpenter pool's: label the three workers so.
    for (const n of cluster.nodes) {
      const r = await api("PATCH", `/api/v1/nodes/${n.name}`, { metadata: { labels: { "karpenter.sh/nodepool": "valkey" } } }, "application/merge-patch+json");
      expect(r.status).toBe(200);
    }
    env = await createPulumiEnv();
  }, 600_000);

  afterAll(() => env?.dispose());

  const lifecycle = async (mode: "cluster" | "replication"): Promise<void> => {
    const NS = `valkey-${mode}-pods`;
    const zones = cluster.nodes.map((n) => n.zone);
    const s = await createStack(
      env,
      {
        platform: "byo",
        aws: { zones },
        byo: { kubeconfig: cluster.kubeconfig, nodeSelector: { "karpenter.sh/nodepool": "valkey" }, storageClass: LOCAL_PATH_STORAGE_CLASS },
        valkey: {
          namespace: NS,
          mode,
          image: cluster.images.valkey,
          replication: { replicas: 3, haproxyImage: cluster.images.haproxy },
          cluster: { primaries: 3, replicasPerPrimary: 1 },
          resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "1", memory: "512Mi" } },
          persistence: { size: "1Gi" },
        },
        benchmark: { enabled: false },
        checks: { bootstrap: true, verify: true, connector: "port-forward" },
      },
      { password: PASSWORD },
    );
    try {
      const first = await s.stack.up({ onOutput: (o) => s.log.push(o) });
      expect(first.summary.result, tail(s.log)).toBe("succeeded");
      const report = first.outputs.report?.value as {
        topology: { ok: boolean; primaries: Array<{ zone: string; slotRanges: string[]; replicas: Array<{ zone: string; crossAz: boolean }> }> } | null;
        sentinels?: Array<{ zone: string; reachable: boolean; agrees: boolean }> | null;
      };
      expect(report.topology?.ok, tail(s.log)).toBe(true);
      const primaries = report.topology?.primaries ?? [];
      for (const p of primaries) {
        expect(zones).toContain(p.zone);
        expect(p.replicas.some((r) => r.crossAz && r.zone !== p.zone)).toBe(true);
      }
      if (mode === "cluster") {
        expect(primaries.map((p) => p.zone).sort()).toEqual([...zones].sort());
        expect(primaries.flatMap((p) => p.slotRanges).sort()).toEqual(["0-5460", "10922-16383", "5461-10921"]);
      } else {
        expect(primaries).toHaveLength(1);
        // The post-deploy check went through the three Sentinels, one per zone, all agreeing.
        const sentinels = report.sentinels ?? [];
        expect(sentinels.map((x) => [x.reachable, x.agrees])).toEqual([
          [true, true],
          [true, true],
          [true, true],
        ]);
        expect(new Set(sentinels.map((x) => x.zone))).toEqual(new Set(zones));
      }

      interface PodList {
        items: Array<{
          metadata: { labels?: Record<string, string> };
          spec: { nodeName?: string; containers: Array<{ image: string }> };
          status: { containerStatuses?: Array<{ ready: boolean }> };
        }>;
      }
      const pods = (await api<PodList>("GET", `/api/v1/namespaces/${NS}/pods`)).body.items;
      // Cluster: 3 x (1 + 1) members. Replication: 4 members, 3 Sentinels, 2 HAProxy pods.
      expect(pods).toHaveLength(mode === "cluster" ? 6 : 9);
      for (const p of pods) {
        const haproxy = p.metadata.labels?.["app.kubernetes.io/component"] === "haproxy";
        expect(p.spec.containers[0]?.image).toBe(haproxy ? cluster.images.haproxy : cluster.images.valkey);
        expect(p.status.containerStatuses?.every((c) => c.ready)).toBe(true);
      }
      expect(new Set(pods.map((p) => p.spec.nodeName)).size).toBe(3);

      const second = await s.stack.up({ onOutput: (o) => s.log.push(o) });
      expect(second.summary.resourceChanges?.update ?? 0, tail(s.log)).toBe(0);
      expect(second.summary.resourceChanges?.create ?? 0, tail(s.log)).toBe(0);
    } finally {
      await s.dispose();
    }
    const pvs = (await api<{ items: Array<{ spec: { claimRef?: { namespace?: string } } }> }>("GET", "/api/v1/persistentvolumes")).body.items;
    expect(pvs.filter((pv) => pv.spec.claimRef?.namespace === NS)).toEqual([]);
    expect((await api("GET", `/api/v1/namespaces/${NS}`)).status).toBe(404);
  };

  it("cluster mode: up with real pods, bootstrap and topology check through port-forward; up again no-op; destroy leaves nothing", { timeout: 1_200_000 }, () =>
    lifecycle("cluster"),
  );
  it("replication mode: the same, with the Sentinels and the HAProxy endpoint in real pods", { timeout: 1_200_000 }, () => lifecycle("replication"));
});
