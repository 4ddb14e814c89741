/**
 * A write load around one `pulumi up` on real pods: the FailureDrill's own load Job (the same
 * builder and bundle, a real pod on the node without Valkey) writes through the release's
 * endpoints while `change()` runs; then every acknowledged key is read back through the checks'
 * port-forward connector and the ledger's figures are computed against a 0 bound (a planned
 * change promises to lose nothing acknowledged). Used by the upgrade (upgrade-checks.ts) and the
 * scale checks (scale-checks.ts).
 */
import { readFileSync } from "node:fs";
import { ackedLossBound } from "../../../core/drill/bounds.js";
import { loadFigures, type LoadFigures } from "../../../core/drill/ledger.js";
import { bundleLoadScript } from "../../../core/drill/load-bundle.js";
import { parseRecordLines } from "../../../core/drill/record-lines.js";
import type { Api } from "../../../apps/kube-local/api.js";
import type { ClusterStatus } from "../../../apps/kube-local/cluster.js";
import { kubernetesDrillApi } from "../../../components/steps/failure-drill/kube-api.js";
import {
  buildDrillLoadJob,
  DRILL_LOAD_CONTAINER,
  DRILL_RUN_LABEL,
  type DrillLoadJobArgs,
} from "../../../components/steps/failure-drill/load-job.js";
import { readBackKeys } from "../../../components/steps/failure-drill/read-back.js";
import { kubeDeps } from "../../../components/steps/kit/kube-access.js";
import { toCheckReport } from "../../../core/verify/to-check-report.js";
import {
  kubernetesVerifier,
  type KubernetesVerifier,
  type VerifierInputs,
} from "../../../components/steps/topology-check/implementation.js";
import type { E2eStack } from "../../e2e/support/pulumi-harness.js";

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The FailureDrill step's stored inputs: where its load writes and how the verifier finds the pods. */
export interface DrillInputs extends Pick<DrillLoadJobArgs, "target" | "secretName" | "passwordKey" | "placement"> {
  selector: string;
  headlessService?: string;
  sentinel?: VerifierInputs["sentinel"];
  expect?: VerifierInputs["expect"];
}

export async function drillInputs(s: E2eStack): Promise<DrillInputs> {
  const state = (await s.stack.exportStack()).deployment as {
    resources: Array<{ urn: string; inputs?: Record<string, unknown> }>;
  };
  const run = state.resources.find((r) => r.urn.endsWith("::valkey-drills-run"));
  if (run?.inputs === undefined)
    throw new Error(
      "no valkey-drills-run resource in the stack: the checks under load reuse the drills' load target (drills.enabled)",
    );
  const i = run.inputs as unknown as DrillInputs & { loadTarget: DrillLoadJobArgs["target"] };
  return { ...i, target: i.loadTarget };
}

export interface PodList {
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
export function verifierInputs(c: UpgradeContext, i: DrillInputs): VerifierInputs {
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
export async function verified<T>(vi: VerifierInputs, use: (v: KubernetesVerifier) => Promise<T>): Promise<T> {
  const v = await kubernetesVerifier(vi, kubeDeps(vi));
  try {
    return await use(v);
  } finally {
    await v.close();
  }
}

/**
 * Sets the stack's config keys (JSON values), switching the benchmark and the drills off so that the next `up` is the
 * change alone.
 */
export async function setChangeAlone(s: E2eStack, config: Record<string, unknown>): Promise<void> {
  const all = await s.stack.getAllConfig();
  const off = (key: string) => ({
    value: JSON.stringify({ ...(JSON.parse(all[key]?.value ?? "{}") as object), enabled: false }),
  });
  await s.stack.setAllConfig({
    "valkey-on-eks:benchmark": off("valkey-on-eks:benchmark"),
    "valkey-on-eks:drills": off("valkey-on-eks:drills"),
    ...Object.fromEntries(Object.entries(config).map(([k, v]) => [`valkey-on-eks:${k}`, { value: JSON.stringify(v) }])),
  });
}

export interface UnderLoad<T> {
  result: T;
  figures: LoadFigures;
  /** When `change()` started (Date.now()). */
  changeAt: number;
  changeMs: number;
}

/**
 * Starts the load, runs `change()` once it writes (after `before()`, which sees the load running),
 * stops it 5 s after, reads every acknowledged key back and returns the figures, which the caller
 * asserts. `label` names the Job and the keys.
 */
export async function underWriteLoad<T>(
  c: UpgradeContext,
  i: DrillInputs,
  label: string,
  change: () => Promise<T>,
  before?: () => Promise<void>,
): Promise<UnderLoad<T>> {
  const kube = await kubernetesDrillApi(readFileSync(c.cluster.kubeconfig, "utf8"));
  const runKey = Math.random().toString(36).slice(2, 8);
  const name = `valkey-${label}-${runKey}`;
  await kube.createLoad(
    buildDrillLoadJob({
      namespace: c.NS,
      name,
      runKey,
      mode: c.mode,
      image: c.cluster.images.node as string,
      target: i.target,
      rate: 20,
      // Stopped by SIGTERM once the change is done; this only bounds a hung run.
      loadS: 1800,
      keyPrefix: `${label}:${runKey}`,
      secretName: i.secretName,
      passwordKey: i.passwordKey,
      placement: i.placement,
      script: await bundleLoadScript(),
    }),
  );
  try {
    let loadPod: string | undefined;
    for (let t = 0; t < 120 && loadPod === undefined; t++) {
      loadPod = (await kube.listPods(c.NS, `${DRILL_RUN_LABEL}=${runKey}`)).find((p) => p.phase === "Running")?.name;
      if (loadPod === undefined) await sleep(1000);
    }
    if (loadPod === undefined) throw new Error(`the ${label} load pod (${name}) is not Running after 120 s`);
    await sleep(5000);
    await before?.();
    const changeAt = Date.now();
    const result = await change();
    const changeMs = Date.now() - changeAt;
    await sleep(5000);
    await kube.exec(c.NS, loadPod, DRILL_LOAD_CONTAINER, ["sh", "-c", "kill -TERM 1"]);
    for (let t = 0; t < 120; t++) {
      const st = await kube.jobState(c.NS, name);
      if (st !== undefined && (st.succeeded > 0 || st.failed > 0)) break;
      await sleep(1000);
    }
    const load = parseRecordLines(await kube.podLog(c.NS, loadPod, DRILL_LOAD_CONTAINER));
    const readBack = await verified(verifierInputs(c, i), async (v) =>
      readBackKeys(
        load.records.filter((r) => r.ok).map((r) => r.key),
        toCheckReport(await v.verify()),
        v.connector,
      ),
    );
    const bound = ackedLossBound("upgrade", 0, {
      minReplicasToWrite: 0,
      minReplicasMaxLag: 0,
      appendonly: true,
      appendfsync: "everysec",
    });
    const figures = loadFigures(load.streams, {
      records: load.records,
      readBack,
      faultAt: changeAt,
      loadStart: load.loadStart,
      loadStop: load.loadStop,
      beforeMs: 10_000,
      bound,
    });
    return { result, figures, changeAt, changeMs };
  } finally {
    await kube.deleteLoad(c.NS, name);
  }
}

/** One line of the ledger's figures, for docs. */
export function figuresLine(f: LoadFigures): string {
  return (
    `writes ${f.writes}, failed ${f.failedWrites}, acked ${f.ackedWrites}, lost acked ${f.lostAckedWrites}, WAIT-confirmed ${f.waitedWrites}, ` +
    `lost ${f.lostWaitedWrites}, unknown ${f.unknownWrites}, write outage ${Math.round(f.writeOutageMs)} ms, p99 during ${f.p99MsDuring} ms`
  );
}
