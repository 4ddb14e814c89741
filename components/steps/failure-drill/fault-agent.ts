/**
 * The deployed `freeze` and `partition` faults: a privileged pod on the victim's node, sharing the
 * host's PID namespace, runs pod/fault-agent-script.ts (SIGSTOP of the primary's valkey-server, or
 * iptables DROP between it and its peers, for `holdS`, then undone). Not a Pulumi resource: it
 * lives for one drill and the step deletes it afterwards (SIGTERM undoes the fault first).
 *
 * What it needs: the namespace must admit privileged pods with hostPID (Pod Security Admission
 * `privileged`, or no enforcement), the image must have sh, GNU date, nsenter (util-linux) and
 * kill (the Debian-based Valkey image does), and for partition the node itself must have
 * `iptables` (EKS nodes do: kube-proxy uses it), run from the node's root mounted at /host. The drill's identity must
 * be allowed to create
 * pods and read their logs. Listing `freeze` or `partition` in `drills.faults` is the opt-in.
 */
import { AGENT_INJECTED, AGENT_RESTORED, faultAgentScript, HOST_ROOT } from "../../../pod/fault-agent-script.js";
import type { DrillKubeApi, DrillPod } from "./kube-api.js";

export const FAULT_AGENT_LABEL = "valkey-on-eks/drill-agent";
export const FAULT_AGENT_CONTAINER = "fault";
/**
 * How long the agent may take to be scheduled, started and to inject (its image is the release's, already on the node).
 */
export const AGENT_START_PATIENCE_MS = 120_000;
/** How long the undo may take once the agent is asked to stop (SIGTERM). */
export const AGENT_UNDO_PATIENCE_MS = 20_000;

export interface FaultAgentArgs {
  namespace: string;
  /** The pod's name (DNS-1123, ≤ 63 characters). */
  name: string;
  fault: "freeze" | "partition";
  victim: DrillPod;
  /** partition: the pod IPs the victim is cut off from. */
  peers: readonly string[];
  holdS: number;
  image: string;
}

/** The agent pod (pure): on the victim's node, hostPID, privileged, the node's root at HOST_ROOT, never restarted. */
export function buildFaultAgentPod(a: FaultAgentArgs): Record<string, unknown> {
  if (a.victim.nodeName === undefined)
    throw new Error(`the ${a.fault} fault needs the node of ${a.victim.name}, and it has none`);
  if (a.fault === "partition" && a.peers.length === 0)
    throw new Error(`the partition fault found no peer of ${a.victim.name} to cut it off from`);
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: a.name,
      namespace: a.namespace,
      labels: {
        "app.kubernetes.io/part-of": "valkey-on-eks",
        "app.kubernetes.io/name": "valkey-drill-agent",
        [FAULT_AGENT_LABEL]: a.name,
      },
    },
    spec: {
      nodeName: a.victim.nodeName,
      hostPID: true,
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: AGENT_UNDO_PATIENCE_MS / 1000,
      tolerations: [{ operator: "Exists" }],
      containers: [
        {
          name: FAULT_AGENT_CONTAINER,
          image: a.image,
          imagePullPolicy: "IfNotPresent",
          command: ["sh", "-c", faultAgentScript()],
          env: [
            { name: "FAULT", value: a.fault },
            { name: "TARGET_POD_UID", value: a.victim.uid },
            { name: "HOLD_S", value: String(a.holdS) },
            { name: "PEERS", value: a.peers.join(" ") },
          ],
          securityContext: { privileged: true, runAsUser: 0, runAsNonRoot: false },
          volumeMounts: [{ name: "host-root", mountPath: HOST_ROOT }],
        },
      ],
      // partition runs the node's own iptables (chroot into it): the image need not have one.
      volumes: [{ name: "host-root", hostPath: { path: "/", type: "Directory" } }],
    },
  };
}

/** `fault-agent: injected <ms>` → ms; undefined when the log has no such line yet. */
export function injectedAt(log: string): number | undefined {
  const m = new RegExp(`^${AGENT_INJECTED} (\\d+) `, "m").exec(log);
  return m === null ? undefined : Number(m[1]);
}

export const restoredIn = (log: string): boolean => new RegExp(`^${AGENT_RESTORED} \\d+`, "m").test(log);

export interface RunningAgent {
  /** When the fault took effect (the agent's clock, the node's). */
  at: number;
  /** Why the fault still holds (the agent has not undone it yet); undefined once undone. */
  holding: () => Promise<string | undefined>;
  /** Stops the agent (SIGTERM: it undoes the fault first) and insists the undo happened. Safe to call twice. */
  stop: () => Promise<void>;
}

const tail = (log: string): string => log.trimEnd().split("\n").slice(-10).join("\n") || "(empty log)";

/** Creates the agent and waits until it has injected the fault (or fails naming why). */
export async function startFaultAgent(
  api: DrillKubeApi,
  a: FaultAgentArgs,
  sleep: (ms: number) => Promise<void>,
  now: () => number,
): Promise<RunningAgent> {
  await api.createPod(a.namespace, buildFaultAgentPod(a));
  const where = `the ${a.fault} fault's agent pod ${a.namespace}/${a.name} on ${a.victim.nodeName ?? "?"}`;
  const read = async (): Promise<{ pod: DrillPod | undefined; log: string }> => {
    const pod = (await api.listPods(a.namespace, `${FAULT_AGENT_LABEL}=${a.name}`))[0];
    const log =
      pod === undefined || pod.phase === "Pending"
        ? ""
        : await api.podLog(a.namespace, a.name, FAULT_AGENT_CONTAINER).catch(() => "");
    return { pod, log };
  };
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    const before = await read();
    if (before.pod !== undefined && before.pod.phase !== "Succeeded" && before.pod.phase !== "Failed") {
      await api.deletePod(a.namespace, a.name, undefined);
      const by = now() + AGENT_UNDO_PATIENCE_MS;
      for (;;) {
        const r = await read();
        if (restoredIn(r.log) || r.pod === undefined) break;
        if (now() >= by)
          throw new Error(
            `${where} did not report undoing the fault within ${AGENT_UNDO_PATIENCE_MS / 1000} s of SIGTERM: check ${a.victim.name} by hand; log:\n${tail(r.log)}`,
          );
        await sleep(500);
      }
    } else if (before.pod !== undefined && injectedAt(before.log) !== undefined && !restoredIn(before.log)) {
      throw new Error(
        `${where} ended (${before.pod.phase}) without undoing the fault: check ${a.victim.name} by hand; log:\n${tail(before.log)}`,
      );
    }
    await api.deletePod(a.namespace, a.name, 0);
  };
  const by = now() + AGENT_START_PATIENCE_MS;
  for (;;) {
    const { pod, log } = await read();
    const at = injectedAt(log);
    if (at !== undefined) {
      const holding = async (): Promise<string | undefined> => {
        const r = await read();
        if (restoredIn(r.log)) return undefined;
        if (r.pod?.phase === "Failed" || r.pod === undefined)
          throw new Error(
            `${where} stopped before undoing the fault (${r.pod?.phase ?? "gone"}); log:\n${tail(r.log)}`,
          );
        return `the ${a.fault} of ${a.victim.name} is held (${a.holdS} s)`;
      };
      return { at, holding, stop };
    }
    if (pod?.phase === "Failed" || pod?.phase === "Succeeded") {
      await stop().catch(() => undefined);
      throw new Error(`${where} ended (${pod.phase}) before injecting the fault; log:\n${tail(log)}`);
    }
    if (now() >= by) {
      await stop().catch(() => undefined);
      throw new Error(
        `${where} has not injected the fault within ${AGENT_START_PATIENCE_MS / 1000} s (${pod?.phase ?? "no pod"})`,
      );
    }
    await sleep(500);
  }
}
