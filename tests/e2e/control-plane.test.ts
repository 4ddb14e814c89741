/**
 * The local control plane itself: a real etcd, kube-apiserver, kube-controller-manager and
 * kube-scheduler plus kwok's fake nodes. Proves what the end-to-end suite relies on: /readyz
 * with the admin token, the four nodes as labelled and tainted, the real scheduler placing a
 * StatefulSet with a toleration, nodeSelector, zone spread and PVC template on the zone nodes,
 * kwok running its pods with IPs in 127.0.0.0/8, deletion cleaning up, and no process left; and the
 * version, nodes, StorageClasses and DaemonSets a byo stack's preview reads from it through the
 * kubeconfig (stacks/kube-version.ts, stacks/byo-preflight.ts).
 *
 * Needs the toolchain from `.ci/toolchain/install.sh`; without it this file fails (never skips).
 */
import { existsSync, readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { VALKEY_NODE_POOL, VALKEY_TAINT } from "../../components/shared.js";
import { ZONE_LABEL } from "../../vocabulary/labels.js";
import { versions } from "../../versions.js";
import { parseStackConfig } from "../../config/schema.js";
import { probeKubeVersion } from "../../stacks/kube-version.js";
import { collectByoPreflight, probeByoCluster } from "../../stacks/byo-preflight.js";
import { byoPlatformConfig, SMALL_VALKEY_PODS } from "./support/byo-config.js";
import { eventually, processesWithMarker } from "../support/processes.js";
import {
  DEFAULT_ZONES,
  FAKE_NODE_ANNOTATION,
  KWOK_STORAGE_CLASS,
  SYSTEM_NODE,
  startControlPlane,
  type ControlPlane,
} from "./support/control-plane.js";

interface Meta {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface Node {
  metadata: Meta;
  spec: { taints?: Array<{ key: string; value?: string; effect: string }>; podCIDR?: string };
  status: { conditions?: Array<{ type: string; status: string }> };
}
interface Pod {
  metadata: Meta;
  spec: { nodeName?: string };
  status: { phase?: string; podIP?: string; conditions?: Array<{ type: string; status: string }> };
}
interface Pvc {
  metadata: Meta;
  spec: { storageClassName?: string; volumeName?: string };
  status: { phase?: string };
}
interface List<T> {
  items: T[];
}

const NS = "cp-e2e";
const inCidr = (ip: string, cidr: string) => {
  const [base, bits] = cidr.split("/");
  const toInt = (s: string) => s.split(".").reduce((a, o) => (a << 8) + Number(o), 0) >>> 0;
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return (toInt(ip) & mask) >>> 0 === (toInt(base ?? "") & mask) >>> 0;
};

describe("local Kubernetes control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok)", () => {
  let plane: ControlPlane;
  let startError: Error | undefined;

  // A start-up failure (a missing toolchain included) fails every test with its message: vitest
  // would report a failing beforeAll's tests as skipped.
  beforeAll(async () => {
    try {
      plane = await startControlPlane();
    } catch (e) {
      startError = e instanceof Error ? e : new Error(String(e));
    }
  }, 180_000);
  beforeEach(() => {
    if (startError !== undefined) throw startError;
  });

  afterAll(async () => {
    await plane?.stop();
  }, 60_000);

  it("answers /readyz with the admin token and rejects requests without it", async () => {
    const ready = await plane.api<string>("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(String(ready.body)).toContain("ok");
    const version = await plane.api<{ gitVersion: string }>("GET", "/version");
    expect(version.body.gitVersion).toBe(versions.KUBERNETES_VERSION);
    // What a byo stack's preview reads through its kubeconfig (stacks/kube-version.ts): major.minor.
    const byo = parseStackConfig({ platform: "byo", byo: { kubeconfig: plane.kubeconfigPath } }).config;
    expect(await probeKubeVersion(byo)).toEqual({
      version: /^v(\d+\.\d+)\./.exec(versions.KUBERNETES_VERSION)?.[1],
    });
    // OpenAPI v3 (what server-side apply and clients' schema checks use).
    const openapi = await plane.api<{ paths: Record<string, unknown> }>("GET", "/openapi/v3");
    expect(Object.keys(openapi.body.paths)).toContain("apis/apps/v1");
    expect(plane.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(plane.kubeconfig).toContain(plane.server);
    expect(readFileSync(plane.kubeconfigPath, "utf8")).toBe(plane.kubeconfig);
    // Over TLS verified against the plane's CA, without the token: 401 (anonymous auth is off).
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest(`${plane.server}/api/v1/nodes`, { ca: plane.caPem }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(401);
  });

  it("runs three tainted Valkey-pool nodes in the three zones and one untainted system node, all Ready", async () => {
    const { body } = await plane.api<List<Node>>("GET", "/api/v1/nodes");
    expect(body.items).toHaveLength(4);
    const byName = new Map(body.items.map((n) => [n.metadata.name, n]));
    for (const node of body.items) {
      expect(node.status.conditions?.find((c) => c.type === "Ready")?.status, node.metadata.name).toBe("True");
      expect(node.metadata.annotations?.[FAKE_NODE_ANNOTATION.key]).toBe(FAKE_NODE_ANNOTATION.value);
    }
    const pool = plane.nodes.filter((n) => n.valkeyPool);
    expect(pool.map((n) => n.zone)).toEqual([...DEFAULT_ZONES]);
    for (const n of pool) {
      const node = byName.get(n.name)!;
      expect(node.metadata.labels?.[ZONE_LABEL]).toBe(n.zone);
      expect(node.metadata.labels?.["karpenter.sh/nodepool"]).toBe(VALKEY_NODE_POOL);
      expect(node.spec.taints).toEqual([
        { key: VALKEY_TAINT.key, value: VALKEY_TAINT.value, effect: VALKEY_TAINT.effect },
      ]);
    }
    const system = byName.get(SYSTEM_NODE)!;
    expect(system.spec.taints ?? []).toEqual([]);
    expect(system.metadata.labels?.["karpenter.sh/nodepool"]).toBeUndefined();
    const classes = await plane.api<List<{ metadata: Meta; volumeBindingMode: string }>>(
      "GET",
      "/apis/storage.k8s.io/v1/storageclasses",
    );
    const def = classes.body.items.find(
      (c) => c.metadata.annotations?.["storageclass.kubernetes.io/is-default-class"] === "true",
    );
    expect(def?.metadata.name).toBe(KWOK_STORAGE_CLASS);
  });

  it("schedules a zone-spread StatefulSet with PVCs on the Valkey nodes, runs it with 127/8 pod IPs, and deletes it", async () => {
    const labels = { app: "spread" };
    await plane.api("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    await eventually("the namespace's default ServiceAccount", 30_000, async () =>
      (await plane.api("GET", `/api/v1/namespaces/${NS}/serviceaccounts/default`, undefined, { allow: [404] }))
        .status === 200
        ? true
        : undefined,
    );
    await plane.api("POST", `/api/v1/namespaces/${NS}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "spread" },
      spec: { clusterIP: "None", selector: labels, ports: [{ name: "valkey", port: 6379 }] },
    });
    await plane.api("POST", `/apis/apps/v1/namespaces/${NS}/statefulsets`, {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "spread" },
      spec: {
        serviceName: "spread",
        replicas: 3,
        podManagementPolicy: "Parallel",
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            nodeSelector: { "karpenter.sh/nodepool": VALKEY_NODE_POOL },
            tolerations: [
              { key: VALKEY_TAINT.key, operator: "Equal", value: VALKEY_TAINT.value, effect: VALKEY_TAINT.effect },
            ],
            topologySpreadConstraints: [
              {
                maxSkew: 1,
                topologyKey: ZONE_LABEL,
                whenUnsatisfiable: "DoNotSchedule",
                labelSelector: { matchLabels: labels },
              },
            ],
            containers: [
              {
                name: "valkey",
                image: "valkey/valkey:8.1",
                ports: [{ containerPort: 6379 }],
                resources: { requests: { cpu: "500m", memory: "1Gi" } },
                volumeMounts: [{ name: "data", mountPath: "/data" }],
              },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: "data" },
            spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
          },
        ],
      },
    });
    // An untolerating Deployment lands on the system node only.
    await plane.api("POST", `/apis/apps/v1/namespaces/${NS}/deployments`, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "client" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "client" } },
        template: { metadata: { labels: { app: "client" } }, spec: { containers: [{ name: "c", image: "busybox" }] } },
      },
    });

    const running = await eventually("3 StatefulSet pods and 1 Deployment pod Running and Ready", 90_000, async () => {
      const { body } = await plane.api<List<Pod>>("GET", `/api/v1/namespaces/${NS}/pods`);
      const ok = body.items.filter(
        (p) =>
          p.status.phase === "Running" &&
          p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") &&
          p.status.podIP,
      );
      return ok.length === 4 ? body.items : undefined;
    });
    const zoneOf = new Map(plane.nodes.map((n) => [n.name, n]));
    const spread = running.filter((p) => p.metadata.labels?.app === "spread");
    expect(spread).toHaveLength(3);
    const zones = spread.map((p) => zoneOf.get(p.spec.nodeName ?? "")?.zone).sort();
    expect(zones).toEqual([...DEFAULT_ZONES]);
    for (const p of spread) {
      const node = zoneOf.get(p.spec.nodeName!)!;
      expect(node.valkeyPool).toBe(true);
      expect(inCidr(p.status.podIP!, plane.podCidr), p.status.podIP).toBe(true);
      expect(inCidr(p.status.podIP!, node.podCidr), `${p.status.podIP} in ${node.podCidr}`).toBe(true);
    }
    const client = running.find((p) => p.metadata.labels?.app === "client")!;
    expect(client.spec.nodeName).toBe(SYSTEM_NODE);
    expect(inCidr(client.status.podIP!, plane.podCidr)).toBe(true);
    expect(new Set(running.map((p) => p.status.podIP)).size).toBe(4);

    const pvcs = await plane.api<List<Pvc>>("GET", `/api/v1/namespaces/${NS}/persistentvolumeclaims`);
    expect(pvcs.body.items.map((c) => [c.metadata.name, c.status.phase, c.spec.storageClassName]).sort()).toEqual(
      ["data-spread-0", "data-spread-1", "data-spread-2"].map((n) => [n, "Bound", KWOK_STORAGE_CLASS]),
    );
    const volumes = pvcs.body.items.map((c) => c.spec.volumeName);

    await plane.api("DELETE", `/api/v1/namespaces/${NS}`);
    await eventually("the namespace, its pods and PVCs gone", 90_000, async () =>
      (await plane.api("GET", `/api/v1/namespaces/${NS}`, undefined, { allow: [404] })).status === 404
        ? true
        : undefined,
    );
    await eventually("the released PVs deleted", 60_000, async () => {
      const { body } = await plane.api<List<{ metadata: Meta }>>("GET", "/api/v1/persistentvolumes");
      return body.items.some((v) => volumes.includes(v.metadata.name)) ? undefined : true;
    });
  }, 240_000);

  it("is what the byo preflight reads: the e2e stacks' keys pass; a zone and a StorageClass it lacks are refused", async () => {
    const byo = (over: Record<string, unknown> = {}) => {
      const keys = byoPlatformConfig(plane.kubeconfigPath, DEFAULT_ZONES) as { byo: Record<string, unknown> };
      return parseStackConfig({
        ...keys,
        byo: { ...keys.byo, ...over },
        valkey: SMALL_VALKEY_PODS,
        benchmark: { enabled: false },
      }).config;
    };
    const facts = await probeByoCluster(byo());
    if ("error" in facts) throw new Error(facts.error);
    expect(facts.nodes.map((n) => n.name).sort()).toHaveLength(4);
    expect(collectByoPreflight(byo(), facts).problems).toEqual([]);
    // kwok runs no NetworkPolicy engine: said, not refused.
    expect(collectByoPreflight(byo(), facts).warnings).toEqual([
      expect.stringMatching(/^no NetworkPolicy engine found/),
    ]);
    expect(collectByoPreflight(byo({ storageClass: "io2" }), facts).problems).toEqual([
      expect.stringMatching(
        new RegExp(`^byo\\.storageClass: the cluster has no StorageClass "io2" \\(it has: .*${KWOK_STORAGE_CLASS}`),
      ),
    ]);
    const wrongZone = parseStackConfig({
      ...byoPlatformConfig(plane.kubeconfigPath, ["us-west-2a", "us-west-2b", "us-west-2d"]),
      valkey: SMALL_VALKEY_PODS,
      benchmark: { enabled: false },
    }).config;
    expect(collectByoPreflight(wrongZone, facts).problems).toEqual([
      expect.stringMatching(/^aws\.zones\.2: no node of the cluster carries topology\.kubernetes\.io\/zone=us-west-2d/),
    ]);
  });

  it("stops every process it started and removes its directory", async () => {
    const pids = plane.pids();
    expect(pids).toHaveLength(5);
    expect(processesWithMarker(plane.marker).sort()).toEqual([...pids].sort());
    await plane.stop();
    expect(plane.pids()).toEqual([]);
    expect(processesWithMarker(plane.marker)).toEqual([]);
    expect(existsSync(plane.dir)).toBe(false);
  }, 60_000);
});
