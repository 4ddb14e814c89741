/**
 * The byo stack under the real Pulumi engine (Automation API, inline program = stacks/index.ts)
 * against a real local Kubernetes control plane (etcd, kube-apiserver, kube-scheduler,
 * kube-controller-manager) whose nodes are kwok's: three Valkey-pool nodes, one per zone,
 * tainted and labelled like the Karpenter pool, and one system node.
 *
 * kwok pods run no process. kwok gives them IPs inside 127.0.0.0/8, and a stand-in
 * (support/pod-valkeys.ts) starts a real valkey-server on each Valkey pod's IP, so the cluster
 * bootstrap and both topology checks run for real, through the `direct` connector, on servers
 * whose pod, node and zone are the API server's. `benchmark.enabled` is false here (an explicit
 * stack setting): post-deploy-reruns.test.ts runs the benchmark Job's pod for real (its script
 * against these servers, its log served through the API server) and checks the re-runs.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openClient } from "../../core/topology/connector.js";
import { eventually } from "../support/processes.js";
import { byoPlatformConfig, SMALL_VALKEY_PODS } from "./support/byo-config.js";
import { useE2eContext } from "./support/e2e-context.js";
import { standInForPods } from "./support/pod-valkeys.js";
import { createStack, tail, type E2eStack } from "./support/pulumi-harness.js";

const PASSWORD = `e2e-${Math.random().toString(36).slice(2)}-secret`;
const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"];

const ctx = useE2eContext();

/** The byo stack's config for this control plane, in the given mode. */
function byoConfig(mode: "replication" | "cluster", namespace: string): Record<string, unknown> {
  return {
    ...byoPlatformConfig(ctx.plane.kubeconfigPath, ZONES),
    valkey: {
      namespace,
      mode,
      replication: { replicas: 3 },
      cluster: { primaries: 3, replicasPerPrimary: 1 },
      ...SMALL_VALKEY_PODS,
    },
    benchmark: { enabled: false },
    checks: { bootstrap: true, verify: true, connector: "direct" },
  };
}

async function zoneOfNode(name: string): Promise<string | undefined> {
  const node = await ctx.core.readNode({ name });
  return node.metadata?.labels?.["topology.kubernetes.io/zone"];
}

async function podsByZone(
  namespace: string,
): Promise<{ name: string; zone: string | undefined; node: string | undefined; role: string | undefined }[]> {
  const pods = await ctx.core.listNamespacedPod({ namespace });
  return Promise.all(
    pods.items.map(async (p) => ({
      name: p.metadata?.name ?? "?",
      node: p.spec?.nodeName,
      role: p.metadata?.labels?.["valkey-on-eks/role"],
      zone: p.spec?.nodeName === undefined ? undefined : await zoneOfNode(p.spec.nodeName),
    })),
  );
}

/** The stack's state file as the `file://` backend stored it (not an export, which decrypts). */
function readStoredState(stack: string): string {
  const root = join(ctx.env.dir, "backend", ".pulumi", "stacks");
  const found = readdirSync(root, { recursive: true, encoding: "utf8" }).find((f) => f.endsWith(`${stack}.json`));
  if (found === undefined) throw new Error(`no state file for ${stack} under ${root}`);
  return readFileSync(join(root, found), "utf8");
}

async function namespaceGone(namespace: string): Promise<boolean> {
  try {
    await ctx.core.readNamespace({ name: namespace });
    return false;
  } catch {
    return true;
  }
}

/** One dynamic step's outputs in the stack's state, by resource name. */
async function stepOutputs(s: E2eStack, name: string): Promise<Record<string, unknown>> {
  const state = (await s.stack.exportStack()) as {
    deployment: { resources: { urn: string; outputs?: Record<string, unknown> }[] };
  };
  const r = state.deployment.resources.find((x) => x.urn.endsWith(`::${name}`));
  if (r?.outputs === undefined) throw new Error(`no ${name} in the state`);
  return r.outputs;
}

/**
 * A LIVE valkey.conf directive alone (maxmemory-policy): `up` re-runs LiveConfig (created, it set
 * nothing: the members started from the file), which sets it on every member's running server;
 * no pod is replaced and RollingRestart does not run.
 */
async function liveConfigChange(
  s: E2eStack,
  mode: "replication" | "cluster",
  namespace: string,
  valkeys: ReturnType<typeof standInForPods>,
): Promise<void> {
  const members = (await podsByZone(namespace)).filter(
    (p) => p.role === "member" || (mode === "cluster" && p.name.startsWith("valkey-cluster-")),
  );
  expect(members.length, "member pods").toBe(mode === "cluster" ? 6 : 4);
  const live = await stepOutputs(s, "valkey-live-config-run");
  expect(live, "created: nothing set").toMatchObject({ keys: [], pods: [] });
  const roll = await stepOutputs(s, "valkey-rolling-restart-run");
  const uids = async () =>
    (await ctx.core.listNamespacedPod({ namespace })).items.map((p) => `${p.metadata?.name}/${p.metadata?.uid}`).sort();
  const before = await uids();
  const configMap = async () =>
    (await ctx.core.listNamespacedConfigMap({ namespace })).items.find((c) => c.metadata?.name?.endsWith("-config"));
  const mapBefore = await configMap();
  const valkey = { ...(byoConfig(mode, namespace).valkey as Record<string, unknown>), maxmemoryPolicy: "volatile-ttl" };
  await s.stack.setConfig("valkey-on-eks:valkey", { value: JSON.stringify(valkey) });
  const res = await s.stack.up({ onOutput: (o) => s.log.push(o) });
  expect(res.summary.result, tail(s.log)).toBe("succeeded");
  // valkey.conf changed in the release's ConfigMap: updated in place (the same object), never
  // deleted and created again (components/kubernetes/provider-args.ts).
  expect(res.summary.resourceChanges?.replace ?? 0, tail(s.log)).toBe(0);
  const mapAfter = await configMap();
  expect(mapAfter?.metadata?.uid, "the ConfigMap's uid").toBe(mapBefore?.metadata?.uid);
  expect(Object.values(mapAfter?.data ?? {}).join("\n")).toContain("maxmemory-policy volatile-ttl");
  const updated = await stepOutputs(s, "valkey-live-config-run");
  expect(updated.runStamp).not.toBe(live.runStamp);
  expect(updated).toMatchObject({ keys: expect.arrayContaining(["maxmemory-policy", "appendonly"]) as unknown });
  expect([...(updated.pods as string[])].sort()).toEqual(members.map((m) => m.name).sort());
  expect((await stepOutputs(s, "valkey-rolling-restart-run")).runStamp).toBe(roll.runStamp);
  expect(await uids()).toEqual(before);
  for (const m of members) {
    const server = valkeys.servers.get(m.name);
    if (server === undefined) throw new Error(`no server for ${m.name}`);
    const c = await openClient(server.host, server.port, m.name, { password: PASSWORD });
    try {
      expect(await c.call("CONFIG", "GET", "maxmemory-policy"), m.name).toEqual(["maxmemory-policy", "volatile-ttl"]);
    } finally {
      c.disconnect();
    }
  }
  expect(valkeys.restarts).toEqual([]);
}

/** preview, up, placement, second up without changes, state encryption, destroy: one mode. */
async function lifecycle(
  mode: "replication" | "cluster",
  checkPlacement: (pods: Awaited<ReturnType<typeof podsByZone>>) => void,
): Promise<void> {
  const namespace = `valkey-${mode}`;
  const s: E2eStack = await createStack(ctx.env, byoConfig(mode, namespace), { password: PASSWORD });
  const valkeys = standInForPods(ctx.core, namespace, PASSWORD);
  try {
    const preview = await s.stack.preview({ onOutput: (o) => s.log.push(o) });
    expect(preview.changeSummary.create ?? 0, tail(s.log)).toBeGreaterThan(5);

    const up = await s.stack.up({ onOutput: (o) => s.log.push(o) });
    expect(up.summary.result, tail(s.log)).toBe("succeeded");
    expect(valkeys.errors).toEqual([]);
    const report = up.outputs.report?.value as {
      mode: string;
      topology: {
        ok: boolean;
        primaries: { zone: string; slotRanges: string[]; replicas: { zone: string; crossAz: boolean }[] }[];
      } | null;
    };
    expect(report.mode).toBe(mode);
    // The check that ran inside `up` saw the real servers, with zones from pod → node → label.
    expect(report.topology?.ok, tail(s.log)).toBe(true);
    const primaries = report.topology?.primaries ?? [];
    expect(primaries).toHaveLength(mode === "cluster" ? 3 : 1);
    for (const p of primaries) {
      expect(ZONES).toContain(p.zone);
      expect(p.replicas.some((r) => r.crossAz && r.zone !== p.zone)).toBe(true);
    }
    if (mode === "cluster")
      expect(primaries.flatMap((p) => p.slotRanges).sort()).toEqual(["0-5460", "10922-16383", "5461-10921"]);
    expect(up.outputs.password?.secret).toBe(true);

    // The objects exist as the components meant them.
    const sets = await ctx.apps.listNamespacedStatefulSet({ namespace });
    const want = mode === "cluster" ? ["valkey-cluster"] : ["valkey", "valkey-sentinel"];
    expect(sets.items.map((x) => x.metadata?.name).sort()).toEqual(want);
    const services = (await ctx.core.listNamespacedService({ namespace })).items.map((x) => x.metadata?.name);
    expect(services).toEqual(
      expect.arrayContaining(
        mode === "cluster"
          ? ["valkey-cluster", "valkey-cluster-headless"]
          : ["valkey-write", "valkey-read", "valkey-headless", "valkey-sentinel", "valkey-sentinel-headless"],
      ),
    );
    if (mode === "replication") {
      // The post-deploy check went through the Sentinels: all three reachable, agreeing, one per zone.
      const sentinels =
        (up.outputs.report?.value as { sentinels: { zone: string; reachable: boolean; agrees: boolean }[] | null })
          .sentinels ?? [];
      expect(sentinels.map((x) => [x.reachable, x.agrees])).toEqual([
        [true, true],
        [true, true],
        [true, true],
      ]);
      expect(new Set(sentinels.map((x) => x.zone))).toEqual(new Set(ZONES));
      expect((await ctx.apps.listNamespacedDeployment({ namespace })).items.map((x) => x.metadata?.name)).toEqual([
        "valkey-haproxy",
      ]);
    }
    const secret = (await ctx.core.listNamespacedSecret({ namespace })).items.find((x) =>
      x.metadata?.name?.endsWith("-auth"),
    );
    expect(secret, "auth Secret").toBeDefined();

    // The real scheduler placed the pods as promised.
    const pods = await eventually(`all ${mode} pods scheduled`, 60_000, async () => {
      const all = await podsByZone(namespace);
      // Replication: 4 members, 3 Sentinels, 2 HAProxy pods.
      const expected = mode === "cluster" ? 6 : 9;
      return all.length === expected && all.every((p) => p.node !== undefined) ? all : undefined;
    });
    checkPlacement(pods);

    // A second up changes nothing.
    const again = await s.stack.up({ onOutput: (o) => s.log.push(o) });
    const changes = Object.entries(again.summary.resourceChanges ?? {}).filter(([k, n]) => k !== "same" && n > 0);
    expect(changes, tail(s.log)).toEqual([]);

    await liveConfigChange(s, mode, namespace, valkeys);

    // The state as the backend stores it holds the password only encrypted.
    const state = readStoredState(s.name);
    expect(state.includes(PASSWORD), "plain-text password in the stored state").toBe(false);
    // Nor the kubeconfig's credentials (VolumeRelease stores the kubeconfig for its delete: secret).
    const token = /token: (\S+)/.exec(ctx.plane.kubeconfig)?.[1];
    expect(token, "the plane's kubeconfig has a token").toBeDefined();
    expect(state.includes(token as string), "plain-text kubeconfig token in the stored state").toBe(false);
    expect(state).toContain("ciphertext");
  } finally {
    await valkeys.stop();
    await s.dispose();
  }
  // destroy returned only once the release's volumes were gone (VolumeRelease waited for them).
  const volumes = (await ctx.core.listPersistentVolume()).items.filter(
    (v) => v.spec?.claimRef?.namespace === namespace,
  );
  expect(volumes.map((v) => `${v.metadata?.name ?? "?"} (${v.status?.phase ?? "?"})`)).toEqual([]);
  // destroy leaves no object of ours behind.
  await eventually(`namespace ${namespace} to be deleted`, 90_000, async () =>
    (await namespaceGone(namespace)) ? true : undefined,
  );
}

describe("byo stack under the real engine against a real API server", () => {
  it("replication under Sentinel: preview, up (check through the Sentinels), members over all zones, one Sentinel per zone, idempotent, encrypted, destroyed", async () => {
    await lifecycle("replication", (pods) => {
      const members = pods.filter((p) => p.role === "member");
      const sentinels = pods.filter((p) => p.name.startsWith("valkey-sentinel-"));
      const proxies = pods.filter((p) => p.name.startsWith("valkey-haproxy-"));
      expect(members).toHaveLength(4);
      expect(new Set(members.map((p) => p.zone))).toEqual(new Set(ZONES));
      expect(sentinels.map((p) => p.zone).sort()).toEqual([...ZONES].sort());
      expect(proxies).toHaveLength(2);
      expect(new Set(proxies.map((p) => p.zone)).size).toBe(2);
    });
  }, 600_000);

  it("cluster: 3 × (1 + 1) lands two pods per zone", async () => {
    await lifecycle("cluster", (pods) => {
      const perZone = new Map<string, number>();
      for (const p of pods) perZone.set(p.zone ?? "none", (perZone.get(p.zone ?? "none") ?? 0) + 1);
      expect(Object.fromEntries(perZone)).toEqual({
        [ZONES[0] as string]: 2,
        [ZONES[1] as string]: 2,
        [ZONES[2] as string]: 2,
      });
    });
  }, 600_000);

  it("a bad config fails up with the schema's message naming the key, and creates nothing", async () => {
    const bad = byoConfig("cluster", "valkey-bad");
    (bad.valkey as { cluster: { primaries: number } }).cluster.primaries = 2;
    const s = await createStack(ctx.env, bad, { password: PASSWORD });
    try {
      await expect(s.stack.up({ onOutput: (o) => s.log.push(o) })).rejects.toThrow(
        /valkey\.cluster\.primaries: must be ≥ 3/,
      );
      const state = (await s.stack.exportStack()) as { deployment?: { resources?: { type: string }[] } };
      const ours = (state.deployment?.resources ?? []).filter((r) => r.type !== "pulumi:pulumi:Stack");
      expect(ours).toEqual([]);
      expect(await namespaceGone("valkey-bad")).toBe(true);
    } finally {
      await s.dispose();
    }
  }, 300_000);
});
