/**
 * The LiveConfig resource's implementation (loaded by its dynamic-provider shell, and called
 * directly by tests): `CONFIG SET` of the live valkey.conf directives on every member pod, each
 * confirmed with `CONFIG GET` (benchmarks/roll/live-config.ts). A change of only live directives
 * leaves the pod template alone (the members' config-hash leaves them out), so nothing restarts:
 * this step is how the running servers get the new values; the ConfigMap already holds them for a
 * pod that restarts later. A refused or mismatched value fails `pulumi up` naming the pod's address
 * and the directive. It acts on an update (the directives changed), not on create.
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

/** What `create` passes instead of the outside world: nothing to set (see below). */
type Deps = KubeDeps | { fresh: true };

const protocol = dynamicProtocol(liveConfigStep, {
  run: (i, deps?: Deps) => (deps !== undefined && "fresh" in deps ? Promise.resolve({ applied: [], pods: [] }) : runLiveConfig(i, deps ?? kubeDeps(i))),
  idOf: (i) => `${i.namespace}/${i.selector}/live-config`,
});
export const { check, diff, update } = protocol;
/**
 * Created (a new stack, or a stack from before this step): the members started from the
 * ConfigMap that already holds these values (before this step existed every conf change
 * restarted them), so there is nothing to set and no member to reach yet.
 */
export const create: typeof protocol.create = (inputs, deps) => protocol.create(inputs, deps ?? { fresh: true });
