/**
 * The RollingRestart resource's implementation (loaded by its dynamic-provider shell, and called
 * directly by tests with fakes). The release's StatefulSets use `updateStrategy: OnDelete`
 * (components/valkey/rollout.ts): after `pulumi up` changed their pod template, nothing restarted.
 * This step then:
 * 1. waits until each StatefulSet's controller has seen the new template (its update revision);
 * 2. takes every pod at that revision as rolled, asked before each step (a roll cut short by a
 *    timeout resumes where it stopped on the next `pulumi up`; a Sentinel back on a new pod IP
 *    is known by its pod);
 * 3. drives core/roll/rolling-restart.ts: in the order roll-plan.ts decides from the live
 *    verifier report, each "restart" evicts one pod (its PodDisruptionBudget honoured, its preStop
 *    run: a primary hands over first) and waits until the StatefulSet has recreated it at the new
 *    revision and it is Ready; each failover is a `CLUSTER FAILOVER` on the chosen replica; the
 *    verifier must pass again before the next step.
 * Nothing stale (a fresh stack, or a change that left the templates alone): no pod is touched.
 * A step that does not finish within `stepTimeoutS` fails `pulumi up`, naming the pod or the
 * verifier's failures.
 */
import { parseEndpoint } from "../../../vocabulary/endpoint.js";
import { addressesOf, rollingRestart, type RestartStep } from "../../../core/roll/rolling-restart.js";
import { normalHost } from "../../kubernetes/pod-addresses.js";
import { dynamicProtocol } from "../kit/protocol.js";
import { rollStep, type RollingRestartInputs, type RollingRestartOutputs } from "./declaration.js";
import type { RollPod } from "./kube-api.js";
import type { RollDeps } from "./types.js";

export type { RollingRestartInputs, RollingRestartOutputs } from "./declaration.js";
export type { RollDeps } from "./types.js";

/** The label the StatefulSet controller puts on each pod: the revision it was created from. */
export const REVISION_LABEL = "controller-revision-hash";

/** The StatefulSet a pod belongs to: its name without the ordinal. */
const setOf = (pod: string): string => pod.replace(/-\d+$/, "");

/** The pod an announced address names: by pod IP, or by a DNS name whose first label is the pod's name. */
export function podOfAddress(address: string, pods: readonly RollPod[]): RollPod | undefined {
  const host = normalHost(parseEndpoint(address).host);
  return pods.find((p) => p.podIP === host) ?? pods.find((p) => host === p.name || host.startsWith(`${p.name}.`));
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  what: string,
  timeoutMs: number,
  pollMs: number,
  probe: () => Promise<T | undefined>,
  state: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() >= deadline)
      throw new Error(
        `rolling restart: ${what} not within ${Math.round(timeoutMs / 1000)} s (rollingRestart.stepTimeoutS): ${state()}`,
      );
    await sleep(pollMs);
  }
}

export async function runRoll(i: RollingRestartInputs, deps: RollDeps): Promise<RollingRestartOutputs> {
  const ns = i.namespace;
  const timeoutMs = i.stepTimeoutS * 1000;
  const selectors = [i.selector, ...(i.sentinel === undefined ? [] : [i.sentinel.selector])];
  const listPods = async (): Promise<RollPod[]> =>
    (await Promise.all(selectors.map((s) => deps.api.listPods(ns, s)))).flat();
  const revisions = new Map<string, string>();
  for (const set of i.statefulSets) {
    revisions.set(
      set,
      await until(
        `StatefulSet ${ns}/${set}'s update revision`,
        timeoutMs,
        i.pollMs,
        () => deps.api.updateRevision(ns, set),
        () => "not observed yet",
      ),
    );
  }
  const current = (p: RollPod): boolean =>
    revisions.has(setOf(p.name)) && p.labels[REVISION_LABEL] === revisions.get(setOf(p.name));
  const before = await listPods();
  if (before.every(current)) {
    deps.log?.(`rolling restart: every pod is at its StatefulSet's update revision; nothing to restart`);
    return { steps: [], restartedPods: [], totalMs: 0 };
  }
  const restartedPods: string[] = [];
  const restart = async (step: RestartStep): Promise<void> => {
    const pod = podOfAddress(step.address, await listPods());
    if (pod === undefined)
      throw new Error(`rolling restart: no pod of ${selectors.join(" / ")} in ${ns} is announced as ${step.address}`);
    if (current(pod)) return;
    let last = "";
    await until(
      `the eviction of ${pod.name}`,
      timeoutMs,
      i.pollMs,
      async () => ((last = await deps.api.evictPod(ns, pod.name)) === "evicted" ? true : undefined),
      () => `its PodDisruptionBudget refused (${last})`,
    );
    let seen = "not listed";
    await until(
      `${pod.name} back at revision ${revisions.get(setOf(pod.name))} and Ready`,
      timeoutMs,
      i.pollMs,
      async () => {
        const now = (await listPods()).find((p) => p.name === pod.name);
        seen =
          now === undefined
            ? "not listed"
            : `uid ${now.uid}, revision ${now.labels[REVISION_LABEL] ?? "none"}, ready ${now.ready}, deleting ${now.deleting}`;
        return now !== undefined && now.uid !== pod.uid && !now.deleting && now.ready && current(now)
          ? true
          : undefined;
      },
      () => seen,
    );
    restartedPods.push(pod.name);
  };
  const roll = await rollingRestart(
    { verify: deps.verify, restart, failover: deps.failover, endpointsSettled: deps.endpointsSettled },
    {
      stepTimeoutMs: timeoutMs,
      pollMs: i.pollMs,
      rolledIn: async (report) => {
        const now = await listPods();
        return new Set(
          addressesOf(report).filter((a) => {
            const p = podOfAddress(a, now);
            return p !== undefined && current(p);
          }),
        );
      },
      onStep: (line) => deps.log?.(`rolling restart: ${line}`),
    },
  );
  return { steps: roll.steps, restartedPods, totalMs: roll.totalMs };
}

// --- the dynamic-provider protocol (called by ../kit/ts-module-provider.ts) ---

export const { check, create, diff, update } = dynamicProtocol(rollStep, {
  run: async (i, deps?: RollDeps) => runRoll(i, deps ?? (await (await import("./real-deps.js")).rollDepsFor(i))),
  idOf: (i) => `${i.namespace}/${i.statefulSets.join(",")}/rolling-restart`,
});
