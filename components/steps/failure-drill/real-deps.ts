/**
 * FailureDrill's real outside world, from its inputs: the API server (kube-api.ts), the
 * TopologyCheck's verifier through the chosen connector (one attempt per call: the drill polls),
 * the read-back through the same connector (its own verification waits for the verdict to turn),
 * and the esbuild bundle of the load.
 */
import { alertSettleMs, readAlertHistory } from "../../../core/drill/alert-history.js";
import { DURABILITY_KEYS, durabilityFromConfig } from "../../../core/drill/bounds.js";
import { bundleLoadScript } from "../../../core/drill/load-bundle.js";
import { parseEndpoint } from "../../../vocabulary/endpoint.js";
import { discoverPods } from "../../kubernetes/pod-discovery.js";
import { kubeDeps, usablePods } from "../kit/kube-access.js";
import {
  checkTopologyOnKubernetes,
  PodNameConnector,
  SENTINEL_CONVERGE_MS,
  type TopologyCheckInputs,
} from "../topology-check/implementation.js";
import type { DrillDeps } from "./types.js";
import type { FailureDrillInputs } from "./declaration.js";
import { kubernetesDrillApi } from "./kube-api.js";
import { readBackKeys } from "./read-back.js";
import { watchClusterNodes, watchSentinels, type DetectionWatch } from "./detection.js";

/** The TopologyCheck inputs of the drill's verifier: one attempt (the drill does the polling), no key counts. */
export function checkInputsOf(i: FailureDrillInputs): TopologyCheckInputs {
  return {
    kubeconfig: i.kubeconfig,
    context: i.context,
    namespace: i.namespace,
    selector: i.selector,
    connector: i.connector,
    password: i.password,
    headlessService: i.headlessService,
    timeoutMs: 1,
    mode: i.mode,
    expect: i.expect,
    replicaLagBytes: i.replicaLagBytes,
    sentinel: i.sentinel,
    countKeys: false,
    triggers: [],
  };
}

/**
 * `drills.alertsFrom`'s reader: the server's settle, and its ALERTS history at 1 s (coarser past 10,000 points, under
 * Prometheus's 11,000-point limit per series).
 */
export function alertsFrom(url: string): NonNullable<DrillDeps["alerts"]> {
  return {
    settleMs: () => alertSettleMs(url),
    history: (fromMs, toMs) =>
      readAlertHistory(url, fromMs, toMs, Math.max(1, Math.ceil((toMs - fromMs) / 10_000_000))),
  };
}

export async function drillDepsFor(i: FailureDrillInputs): Promise<DrillDeps> {
  const api = await kubernetesDrillApi(i.kubeconfig, i.context);
  const kube = kubeDeps(i);
  const checkInputs = checkInputsOf(i);
  let script: string | undefined;
  return {
    ...(i.alertsFrom === undefined ? {} : { alerts: alertsFrom(i.alertsFrom) }),
    api,
    verify: async () => (await checkTopologyOnKubernetes(checkInputs, kube)).report,
    readBack: async (keys) => {
      const pods = await usablePods(i, kube);
      const reach = kube.connector(pods);
      const connector =
        i.connector === "direct"
          ? new PodNameConnector(reach, pods, { namespace: i.namespace, headlessService: i.headlessService })
          : reach;
      try {
        // The report of a fresh verification: the primaries as they are now. The drill saw the
        // topology heal, but a Sentinel that entered TILT meanwhile keeps its flags frozen for up
        // to 30 s (seen on real pods: a replica flagged s_down 0.7 s after its last good ping), so
        // this one waits for the verdict to turn as the TopologyCheck does, not one attempt.
        const { report } = await checkTopologyOnKubernetes({ ...checkInputs, timeoutMs: SENTINEL_CONVERGE_MS }, kube);
        return await readBackKeys(keys, report, connector);
      } finally {
        await connector.close();
      }
    },
    durability: async (healthy) => {
      const address = healthy.shards[0]?.primary.address;
      if (address === undefined)
        throw new Error("the healthy topology report names no primary to read min-replicas-* / appendfsync from");
      const pods = await usablePods(i, kube);
      const reach = kube.connector(pods);
      const connector =
        i.connector === "direct"
          ? new PodNameConnector(reach, pods, { namespace: i.namespace, headlessService: i.headlessService })
          : reach;
      try {
        const c = await connector.connect(parseEndpoint(address));
        try {
          return durabilityFromConfig(((await c.call("CONFIG", "GET", ...DURABILITY_KEYS)) as unknown[]).map(String));
        } finally {
          c.disconnect();
        }
      } finally {
        await connector.close();
      }
    },
    loadScript: async () => (script ??= await bundleLoadScript()),
    watchDetection: () => watchDetection(i, kube),
  };
}

/** Connects to the survivors-to-be through the connector: every Sentinel (replication) or every member (cluster). */
async function watchDetection(i: FailureDrillInputs, kube: ReturnType<typeof kubeDeps>): Promise<DetectionWatch> {
  const members = await usablePods(i, kube);
  const s = i.sentinel;
  const sentinels =
    s === undefined
      ? []
      : await discoverPods(kube.podApi, {
          namespace: i.namespace,
          selector: s.selector,
          portsOf: () => ({ port: s.port, busPort: 0 }),
        });
  const reach = kube.connector([...members, ...sentinels]);
  const targets = s === undefined ? members : sentinels;
  const clients = await Promise.all(
    targets.map(async (p) => ({ pod: p.name, client: await reach.connect({ host: p.podIP ?? p.name, port: p.port }) })),
  );
  const watch = s === undefined ? await watchClusterNodes(clients) : await watchSentinels(clients);
  return {
    ...watch,
    stop: async () => {
      await watch.stop();
      await reach.close();
    },
  };
}
