/**
 * The LiveConfig resource's implementation (loaded by its dynamic-provider shell, and called
 * directly by tests with a static pod API and real valkey-server processes). A change of only
 * LIVE valkey.conf directives (pod/conf-directives.ts) leaves the pod template alone (the members'
 * config-hash covers only the RESTART part), so nothing restarts: on an update (new `directives`)
 * this step discovers the members and runs the core's core/roll/live-config.ts through the
 * chosen connector: `CONFIG SET` of each directive on every member, `CONFIG GET` to confirm. A
 * member or key that did not take fails `pulumi up` naming both; Pulumi keeps the old inputs, so
 * the next `up` tries again. The ConfigMap already holds the values for a pod that restarts later.
 *
 * It acts on an update only. Created (a new stack, or a stack from before this step), the members
 * started from the ConfigMap that already holds these values, so there is nothing to set and no
 * member to reach yet (the e2e stacks on kwok without stand-in servers have none).
 */
import { applyLiveConfig } from "../../../core/roll/live-config.js";
import { CONF_DIRECTIVES, type DirectiveClass } from "../../../pod/conf-directives.js";
import { kubeDeps, podEndpoint, usablePods, type KubeDeps } from "../kit/kube-access.js";
import { dynamicProtocol } from "../kit/protocol.js";
import { liveConfigStep, type LiveConfigInputs, type LiveConfigOutputs } from "./declaration.js";

export type { LiveConfigInputs, LiveConfigOutputs } from "./declaration.js";

export async function runLiveConfig(
  i: LiveConfigInputs,
  deps: KubeDeps,
  log: (line: string) => void = (l) => console.error(l),
): Promise<LiveConfigOutputs> {
  const pods = await usablePods(i, deps);
  const connector = deps.connector(pods);
  try {
    const members = pods.map((p) => ({ name: p.name, endpoint: podEndpoint(p) }));
    const done = await applyLiveConfig(members, i.directives, connector, log);
    return { keys: done.keys, pods: done.members };
  } finally {
    await connector.close();
  }
}

/**
 * Refuses, at preview, a directive that is not LIVE (or not classified): CONFIG SET cannot apply
 * it. The program only ever passes the LIVE ones (a RESTART change is in the template hash and
 * rolled by RollingRestart); this guards the step's own contract.
 */
export function refuseRestartDirectives(directives: unknown): { property: string; reason: string }[] {
  if (typeof directives !== "object" || directives === null) return [];
  const table = CONF_DIRECTIVES as Record<string, DirectiveClass>;
  return Object.keys(directives)
    .filter((k) => table[k]?.apply !== "live")
    .map((k) => ({
      property: "directives",
      reason: `${k} ${table[k] === undefined ? "is not a classified valkey.conf directive" : "needs a restart, not CONFIG SET"} (pod/conf-directives.ts)`,
    }));
}

// --- the dynamic-provider protocol (called by ../kit/ts-module-provider.ts) ---

/** What `create` passes instead of the outside world: nothing to set (see the header). */
type Deps = KubeDeps | { fresh: true };

const protocol = dynamicProtocol(liveConfigStep, {
  run: (i, deps?: Deps) =>
    deps !== undefined && "fresh" in deps
      ? Promise.resolve({ keys: [], pods: [] })
      : runLiveConfig(i, deps ?? kubeDeps(i)),
  idOf: (i) => `${i.namespace}/${i.selector}/live-config`,
  check: (_olds, news) => refuseRestartDirectives(news.directives),
});
export const { check, diff, update } = protocol;
/** Created: the members started from the file; nothing to set, no member reached (see the header). */
export const create: typeof protocol.create = (inputs, deps) => protocol.create(inputs, deps ?? { fresh: true });
