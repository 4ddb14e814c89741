/**
 * What the files deploying the byo stack on the local real cluster share: why they are skipped
 * (not root, or a tool not built), the cluster they run on (the stack's three zones plus a fourth
 * node in a zone the stack does not use, for the pods the stack keeps off Valkey nodes: the
 * benchmark Job and the drills' load Job, as Karpenter adds a node for them on EKS), and the stack
 * config of one mode on it.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, expect } from "vitest";
import { LOCAL_PATH_STORAGE_CLASS } from "../../../apps/kube-local/addons.js";
import { apiClient, type Api } from "../../../apps/kube-local/api.js";
import { STATE_DIR, up, type ClusterStatus } from "../../../apps/kube-local/cluster.js";
import { clusterPlan, DEFAULT_ZONES } from "../../../apps/kube-local/plan.js";
import { createPulumiEnv, toolchainPaths, type PulumiEnv } from "../../e2e/support/pulumi-harness.js";
import { realClusterDirs } from "../../support/toolchain.js";

/** "" when the byo stack can run on real pods here; otherwise why not. */
export function podsSkipReason(options: { pulumi: boolean }): string {
  const needed: Array<readonly [string, string]> = [
    ...Object.entries(realClusterDirs),
    ...(options.pulumi
      ? ([
          ["pulumi", toolchainPaths.pulumi] as const,
          ["pulumi-kubernetes", toolchainPaths.kubernetesProvider] as const,
        ] as const)
      : []),
  ];
  const missing = needed.filter(([, d]) => !existsSync(d)).map(([k]) => k);
  if (process.getuid?.() !== 0) return "needs root";
  return missing.length > 0 ? `not built: ${missing.join(", ")} (bash .ci/setup --pods)` : "";
}

export const CLIENT_ZONE = "us-west-2d";
export const STACK_ZONES = [...DEFAULT_ZONES];
/** The cluster every file of the project shares (one `up` for all of them). */
export const PODS_PLAN = clusterPlan(STATE_DIR, [...DEFAULT_ZONES, CLIENT_ZONE]);

export interface PodsContext {
  cluster: ClusterStatus;
  api: Api;
  env: PulumiEnv;
  /** The node of CLIENT_ZONE. */
  clientNode: string;
}

/** kube:local's budget for one `up` in the pods files; their hooks allow `UP_HOOK_MS`, so `up`'s own error comes first. */
const UP_BUDGET_MS = 600_000;
export const UP_HOOK_MS = UP_BUDGET_MS + 300_000;

/**
 * The shared cluster, started when none runs (`up` is a no-op on a healthy one), its steps printed with the
 * seconds since the call, so that a slow or stuck start in CI says where it was.
 */
export async function upPodsCluster(): Promise<ClusterStatus> {
  const t0 = Date.now();
  return up(
    (m) => console.log(`[kube:local +${Math.round((Date.now() - t0) / 1000)} s] ${m}`),
    PODS_PLAN,
    UP_BUDGET_MS,
  );
}

/**
 * Starts the four-node cluster (a no-op when it runs), labels the workers as the byo stack selects
 * them (like the Karpenter pool's nodes) and makes a Pulumi environment; disposes it afterwards.
 */
export function usePodsCluster(): PodsContext {
  const ctx = {} as PodsContext;
  beforeAll(async () => {
    ctx.cluster = await upPodsCluster();
    ctx.api = apiClient(ctx.cluster.kubeconfig);
    for (const n of ctx.cluster.nodes) {
      const r = await ctx.api(
        "PATCH",
        `/api/v1/nodes/${n.name}`,
        { metadata: { labels: { "karpenter.sh/nodepool": "valkey" } } },
        "application/merge-patch+json",
      );
      expect(r.status).toBe(200);
    }
    await deleteLeftoverNamespaces(ctx.api);
    ctx.clientNode = ctx.cluster.nodes.find((n) => n.zone === CLIENT_ZONE)?.name ?? "";
    ctx.env = await createPulumiEnv();
  }, UP_HOOK_MS + 300_000);
  afterAll(() => ctx.env?.dispose());
  return ctx;
}

/**
 * The stacks' namespaces (`valkey-…-pods`) a previous run left on a cluster that kept running
 * (a run killed or timed out before its destroy): deleted, and waited for, before this run
 * deploys into the same names (pods files run one at a time, so none is in use).
 */
async function deleteLeftoverNamespaces(api: Api): Promise<void> {
  const list = await api<{ items: Array<{ metadata: { name: string } }> }>("GET", "/api/v1/namespaces");
  const leftover = list.body.items.map((n) => n.metadata.name).filter((n) => /^valkey-[a-z-]+-pods$/.test(n));
  if (leftover.length === 0) return;
  console.log(`[pods] deleting the namespaces a previous run left: ${leftover.join(", ")}`);
  for (const n of leftover) await api("DELETE", `/api/v1/namespaces/${n}`);
  const deadline = Date.now() + 300_000;
  for (;;) {
    const still = [];
    for (const n of leftover) if ((await api("GET", `/api/v1/namespaces/${n}`)).status !== 404) still.push(n);
    if (still.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`the namespaces a previous run left are still there after 300 s: ${still.join(", ")}`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/** Labels of the pod that scrapes a stack on real pods (metrics.scrapeFrom.podLabels; support/metrics-checks.ts). */
export const SCRAPER_LABELS = { "probe.test/role": "scraper" };

/** The namespace a stack in `namespace` is scraped from (metrics.scrapeFrom.namespace); leftovers are cleaned like the stacks'. */
export function scrapeNamespace(namespace: string): string {
  return namespace.replace(/-pods$/, "") + "-scrape-pods";
}

/**
 * The byo stack's config of `mode` on the cluster: the local images, small pods on local-path volumes, checks through
 * port-forward, the exporters from the local image scraped from scrapeNamespace(namespace) by SCRAPER_LABELS only.
 */
export function podsStackConfig(
  cluster: ClusterStatus,
  mode: "cluster" | "replication",
  namespace: string,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  return {
    platform: "byo",
    aws: { zones: STACK_ZONES },
    byo: {
      kubeconfig: cluster.kubeconfig,
      nodeSelector: { "karpenter.sh/nodepool": "valkey" },
      storageClass: LOCAL_PATH_STORAGE_CLASS,
    },
    valkey: {
      namespace,
      mode,
      image: cluster.images.valkey,
      replication: { replicas: 3, haproxyImage: cluster.images.haproxy },
      cluster: { primaries: 3, replicasPerPrimary: 1 },
      resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "1", memory: "512Mi" } },
      persistence: { size: "1Gi" },
    },
    checks: { bootstrap: true, verify: true, connector: "port-forward" },
    metrics: {
      exporterImage: localImage(cluster, "exporter"),
      scrapeFrom: { namespace: scrapeNamespace(namespace), podLabels: SCRAPER_LABELS },
    },
    ...extra,
  };
}

/** A locally built image of the running cluster, or an error saying how to get it imported. */
export function localImage(cluster: ClusterStatus, name: string): string {
  const ref = cluster.images[name];
  if (ref === undefined)
    throw new Error(
      `no ${name} image in the running local cluster: restart it (npm run kube:local -- down, then up) to import the images`,
    );
  return ref;
}
