/**
 * The LiveConfig resource's implementation (loaded by its dynamic-provider shell, and called
 * directly by tests): `CONFIG SET` of the live valkey.conf directives on every member pod, each
 * confirmed with `CONFIG GET` (benchmarks/roll/live-config.ts). A change of only live directives
 * leaves the pod template alone (the members' config-hash leaves them out), so nothing restarts:
 * this step is how the running servers get the new values; the ConfigMap already holds them for a
 * pod that restarts later. A refused or mismatched value fails `pulumi up` naming the pod's address
 * and the directive.
 */
import { applyLiveConfig } from "../../../benchmarks/roll/live-config.js";
import { dynamicProtocol } from "../kit/protocol.js";
import { kubeDeps, podEndpoint, usablePods, type KubeDeps } from "../kit/kube-access.js";
import { liveConfigStep, type LiveConfigInputs, type LiveConfigOutputs } from "./declaration.js";

export type { LiveConfigInputs, LiveConfigOutputs } from "./declaration.js";

export async function runLiveConfig(i: LiveConfigInputs, deps: KubeDeps): Promise<LiveConfigOutputs> {
  const pods = await usablePods(i, deps);
  const connector = deps.connector(pods);
  try {
    await applyLiveConfig(pods.map(podEndpoint), i.directives, connector);
    return { applied: i.directives.map((d) => `${d.name} ${d.value}`), pods: pods.map((p) => p.name) };
  } finally {
    await connector.close();
  }
}

// --- the dynamic-provider protocol (called by ../kit/ts-module-provider.ts) ---

export const { check, create, diff, update } = dynamicProtocol(liveConfigStep, {
  run: (i, deps?: KubeDeps) => runLiveConfig(i, deps ?? kubeDeps(i)),
  idOf: (i) => `${i.namespace}/${i.selector}/live-config`,
});
