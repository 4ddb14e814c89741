/**
 * A rolling upgrade on real pods, under a write load (tests/pods/byo-stack.test.ts runs it after
 * the first `up` of each mode, whose pods run the `valkey-previous` image): the stack's
 * `valkey.image` is changed to the `valkey` image (benchmark and drills off) and `pulumi up` runs while the FailureDrill's own
 * load Job (the same builder and bundle, a real pod on the node without Valkey) writes through
 * the release's endpoints. Then:
 *  - every member and Sentinel pod is new, runs the new image, and was started in the order the
 *    RollingRestart step reports (their start times, second resolution, never decreasing along
 *    that order);
 *  - the order is the one roll-plan.ts promises (replication: the Sentinels, the replicas, the
 *    primary of before last; cluster: per shard the replica, CLUSTER FAILOVER to it, the old primary);
 *  - no acknowledged write is lost (the upgrade's bound is 0), nor a WAIT-confirmed one, every
 *    acknowledged key read back through the checks' port-forward connector.
 * The figures are printed for docs/drills.md.
 */
import { expectClusterRollOrder } from "../../support/roll-order.js";
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import { ackedLossBound } from "../../../benchmarks/drill/bounds.js";
import { loadFigures } from "../../../benchmarks/drill/ledger.js";
import { bundleLoadScript } from "../../../benchmarks/drill/load-bundle.js";
import { parseRecordLines } from "../../../benchmarks/drill/record-lines.js";
import type { Api } from "../../../benchmarks/kube-local/api.js";
import type { ClusterStatus } from "../../../benchmarks/kube-local/cluster.js";
import type { RollStepTiming } from "../../../benchmarks/roll/rolling-restart.js";
import { kubernetesDrillApi } from "../../../components/steps/failure-drill/kube-api.js";
import { buildDrillLoadJob, DRILL_LOAD_CONTAINER, DRILL_RUN_LABEL, type DrillLoadJobArgs } from "../../../components/steps/failure-drill/load-job.js";
import { readBackKeys } from "../../../components/steps/failure-drill/read-back.js";
import { kubeDeps } from "../../../components/steps/kit/kube-access.js";
import { kubernetesVerifier, toCheckReport, type KubernetesVerifier, type VerifierInputs } from "../../../components/steps/topology-check/implementation.js";
import { tail, type E2eStack } from "../../e2e/support/pulumi-harness.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The FailureDrill step's stored inputs: where its load writes and how the verifier finds the pods. */
export interface DrillInputs extends Pick<DrillLoadJobArgs, "target" | "secretName" | "passwordKey" | "placement"> {
  selector: string;
  headlessService?: string;
  sentinel?: VerifierInputs["sentinel"];
  expect?: VerifierInputs["expect"];
}

async function drillInputs(s: E2eStack): Promise<DrillInputs> {
  const state = (await s.stack.exportStack()).deployment as { resources: Array<{ urn: string; inputs?: Record<string, unknown> }> };
  const run = state.resources.find((r) => r.urn.endsWith("::valkey-drills-run"));
  if (run?.inputs === undefined)
    throw new Error("no valkey-drills-run resource in the stack: the upgrade check reuses the drills' load target (drills.enabled)");
  const i = run.inputs as unknown as DrillInputs & { loadTarget: DrillLoadJobArgs["target"] };
  return { ...i, target: i.loadTarget };
}

interface PodList {
  items: Array<{
    metadata: { name: string; uid: string };
    spec: { containers: Array<{ image: string }> };
    status: { startTime?: string };
  }>;
}

export interface UpgradeContext {
  api: Api;
  cluster: ClusterStatus;
  stack: E2eStack;
  NS: string;
  mode: "cluster" | "replication";
  password: string;
  /** The stack's `valkey` section as set (its image is the previous one). */
  valkey: Record<string, unknown>;
}

/** The verifier's inputs for the release, through the port-forward connector. */
function verifierInputs(c: UpgradeContext, i: DrillInputs): VerifierInputs {
  return {
    kubeconfig: readFileSync(c.cluster.kubeconfig, "utf8"),
    namespace: c.NS,
    selector: i.selector,
    connector: "port-forward",
    password: c.password,
    mode: c.mode,
    ...(i.headlessService === undefined ? {} : { headlessService: i.headlessService }),
    ...(i.sentinel === undefined ? {} : { sentinel: i.sentinel }),
    ...(i.expect === undefined ? {} : { expect: i.expect }),
  };
}

/** Runs `use` with a verifier on the release's pods as they are now, then releases its connector. */
async function verified<T>(vi: VerifierInputs, use: (v: KubernetesVerifier) => Promise<T>): Promise<T> {
  const v = await kubernetesVerifier(vi, kubeDeps(vi));
  try {
    return await use(v);
  } finally {
    await v.close();
  }
}

/** Returns the release inputs it read from the drills step (the upgrade `up` switches the drills off: later checks reuse them). */
export async function expectUpgradeUnderLoad(c: UpgradeContext): Promise<DrillInputs> {
  const { api, cluster, NS, mode } = c;
  const newImage = cluster.images.valkey as string;
  const i = await drillInputs(c.stack);
  const selectors = [i.selector, ...(i.sentinel === undefined ? [] : [i.sentinel.selector])];
  const pods = async () =>
    (await Promise.all(selectors.map((sel) => api<PodList>("GET", `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(sel)}`)))).flatMap(
      (r) => r.body.items,
    );
  const before = await pods();
  expect(before.map((p) => p.spec.containers[0]?.image)).toEqual(before.map(() => c.valkey.image));

  const kube = await kubernetesDrillApi(readFileSync(cluster.kubeconfig, "utf8"));
  const runKey = Math.random().toString(36).slice(2, 8);
  const name = `valkey-upgrade-${runKey}`;
  await kube.createLoad(
    buildDrillLoadJob({
      namespace: NS,
      name,
      runKey,
      mode,
      image: cluster.images.node as string,
      target: i.target,
      rate: 20,
      // Stopped by SIGTERM once the upgrade is done; this only bounds a hung run.
      loadS: 1800,
      keyPrefix: `upgrade:${runKey}`,
      secretName: i.secretName,
      passwordKey: i.passwordKey,
      placement: i.placement,
      script: await bundleLoadScript(),
    }),
  );
  try {
    let loadPod: string | undefined;
    for (let t = 0; t < 120 && loadPod === undefined; t++) {
      loadPod = (await kube.listPods(NS, `${DRILL_RUN_LABEL}=${runKey}`)).find((p) => p.phase === "Running")?.name;
      if (loadPod === undefined) await sleep(1000);
    }
    if (loadPod === undefined) throw new Error(`the upgrade's load pod (${name}) is not Running after 120 s`);
    await sleep(5000);
    // The primary right before the upgrade (the first up's drills moved it since its report).
    const primaryBefore = await verified(verifierInputs(c, i), (v) => v.verify().then((r) => r.shards[0]?.primary.address ?? ""));
    // Only the image changes for the release; the benchmark (its Job runs valkey.image) and the
    // drills are switched off so that this `up` is the upgrade alone (the benchmark would re-run
    // on the new image, into the first run's keys at maxmemory).
    const all = await c.stack.stack.getAllConfig();
    const off = (key: string) => ({ value: JSON.stringify({ ...(JSON.parse(all[key]?.value ?? "{}") as object), enabled: false }) });
    await c.stack.stack.setAllConfig({
      "valkey-on-eks:valkey": { value: JSON.stringify({ ...c.valkey, image: newImage }) },
      "valkey-on-eks:benchmark": off("valkey-on-eks:benchmark"),
      "valkey-on-eks:drills": off("valkey-on-eks:drills"),
    });
    const upAt = Date.now();
    const up = await c.stack.stack.up({ onOutput: (o) => c.stack.log.push(o) });
    const upMs = Date.now() - upAt;
    expect(up.summary.result, tail(c.stack.log)).toBe("succeeded");
    await sleep(5000);
    await kube.exec(NS, loadPod, DRILL_LOAD_CONTAINER, ["sh", "-c", "kill -TERM 1"]);
    for (let t = 0; t < 120; t++) {
      const st = await kube.jobState(NS, name);
      if (st !== undefined && (st.succeeded > 0 || st.failed > 0)) break;
      await sleep(1000);
    }
    const load = parseRecordLines(await kube.podLog(NS, loadPod, DRILL_LOAD_CONTAINER));
    const rollout = (up.outputs.report?.value as { rollout: { steps: RollStepTiming[]; restartedPods: string[]; totalMs: number } | null }).rollout;
    if (rollout === null) throw new Error("the report has no rollout after the upgrade");

    // Every acknowledged key, read back through the checks' own connector.
    const readBack = await verified(verifierInputs(c, i), async (v) =>
      readBackKeys(
        load.records.filter((r) => r.ok).map((r) => r.key),
        toCheckReport(await v.verify()),
        v.connector,
      ),
    );
    const bound = ackedLossBound("upgrade", 0, { minReplicasToWrite: 0, minReplicasMaxLag: 0, appendonly: true, appendfsync: "everysec" });
    const f = loadFigures(load.streams, {
      records: load.records,
      readBack,
      faultAt: upAt,
      loadStart: load.loadStart,
      loadStop: load.loadStop,
      beforeMs: 10_000,
      bound,
    });
    console.log(
      `[pods] ${mode} upgrade ${String(c.valkey.image)} -> ${newImage}: up ${Math.round(upMs / 1000)} s, roll ${Math.round(rollout.totalMs / 1000)} s; ` +
        `writes ${f.writes}, failed ${f.failedWrites}, acked ${f.ackedWrites}, lost acked ${f.lostAckedWrites}, WAIT-confirmed ${f.waitedWrites}, lost ${f.lostWaitedWrites}, unknown ${f.unknownWrites}, ` +
        `write outage ${Math.round(f.writeOutageMs)} ms, p99 during ${f.p99MsDuring} ms\n` +
        rollout.steps.map((s, n) => `  ${n + 1}. ${s.step}: at ${(s.startMs / 1000).toFixed(1)} s, ${(s.ms / 1000).toFixed(1)} s`).join("\n") +
        "\n" +
        // Each stream's longest gap, on the up's clock (the roll starts a few seconds into the up).
        f.streams
          .map(
            (x) =>
              `  outage of ${x.stream}: ${Math.round(x.writeOutageMs)} ms, from ${(x.outageFromMs / 1000).toFixed(1)} s to ${(x.outageToMs / 1000).toFixed(1)} s after the up started`,
          )
          .join("\n"),
    );
    expect(f.ackedWrites).toBeGreaterThan(100);
    expect(f.lostWaitedWrites, JSON.stringify(f.streams.map((s) => s.lostKeys))).toBe(0);
    expect(f.lostAckedWrites, JSON.stringify(f.streams.map((s) => s.lostKeys))).toBe(0);
    expect(f.unknownWrites).toBe(0);
    // Replication: the only write stop is the primary's hand-over (the switchover drill: ~3 s on
    // these pods). Before the roll waited for HAProxy to count every Sentinel again between
    // Sentinel restarts, the write endpoint was closed for 23.7 s (a majority of stale Sentinel IPs).
    if (mode === "replication") expect(f.writeOutageMs, "write outage through the roll").toBeLessThan(15_000);

    // Every pod new, on the new image, started in the order the step reports.
    const after = await pods();
    expect(after.map((p) => p.spec.containers[0]?.image)).toEqual(after.map(() => newImage));
    expect(after.filter((p) => before.some((b) => b.metadata.uid === p.metadata.uid)).map((p) => p.metadata.name)).toEqual([]);
    expect([...rollout.restartedPods].sort()).toEqual(after.map((p) => p.metadata.name).sort());
    const started = rollout.restartedPods.map((n) => Date.parse(after.find((p) => p.metadata.name === n)?.status.startTime ?? ""));
    started.forEach(
      (t, n) =>
        n > 0 && expect(t, `${rollout.restartedPods[n]} started before ${rollout.restartedPods[n - 1]}`).toBeGreaterThanOrEqual(started[n - 1] as number),
    );
    const kinds = rollout.steps.map((s) => s.kind);
    if (mode === "replication") {
      expect(kinds).toEqual(["sentinel", "sentinel", "sentinel", "replica", "replica", "replica", "primary"]);
      const primaryPod = primaryBefore.split(".")[0];
      expect(rollout.restartedPods.at(-1)).toBe(primaryPod);
    } else {
      expectClusterRollOrder(rollout.steps, 3, false);
    }
  } finally {
    await kube.deleteLoad(NS, name);
  }
  return i;
}

/**
 * A change of a live directive only (`valkey.maxmemoryPolicy`): `pulumi up` restarts no pod (the
 * members' template hash leaves the live lines out) and the LiveConfig step sets it on every
 * member: each member's CONFIG GET answers the new value, every pod keeps its uid.
 */
export async function expectLiveConfigChange(c: UpgradeContext, valkey: Record<string, unknown>, i: DrillInputs): Promise<void> {
  const uids = async () =>
    (await c.api<PodList>("GET", `/api/v1/namespaces/${c.NS}/pods?labelSelector=${encodeURIComponent(i.selector)}`)).body.items
      .map((p) => `${p.metadata.name}/${p.metadata.uid}`)
      .sort();
  const before = await uids();
  await c.stack.stack.setConfig("valkey-on-eks:valkey", { value: JSON.stringify({ ...valkey, maxmemoryPolicy: "allkeys-lru" }) });
  const upAt = Date.now();
  const up = await c.stack.stack.up({ onOutput: (o) => c.stack.log.push(o) });
  expect(up.summary.result, tail(c.stack.log)).toBe("succeeded");
  expect(up.outputs.report?.value, "the report").toBeDefined();
  expect(await uids(), "no member pod restarted").toEqual(before);
  const policies = await verified(verifierInputs(c, i), async (v) => {
    const r = await v.verify();
    const members = r.shards.flatMap((s) => [s.primary.address, ...s.replicas.map((x) => x.address)]);
    return Promise.all(
      members.map(async (m) => {
        const client = await v.connector.connect({ host: m.slice(0, m.lastIndexOf(":")), port: Number(m.slice(m.lastIndexOf(":") + 1)) });
        try {
          return `${m} ${String(((await client.call("CONFIG", "GET", "maxmemory-policy")) as string[])[1])}`;
        } finally {
          client.disconnect();
        }
      }),
    );
  });
  console.log(
    `[pods] ${c.mode} live config (maxmemory-policy allkeys-lru): up ${Math.round((Date.now() - upAt) / 1000)} s, no restart; ${policies.join(", ")}`,
  );
  expect(policies.length).toBe(before.length);
  for (const p of policies) expect(p).toMatch(/ allkeys-lru$/);
}
