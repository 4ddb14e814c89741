/**
 * kwok's pods run no process. This stand-in makes each Valkey pod of a release real: when the
 * API server gives a pod an IP (kwok assigns them inside 127.0.0.0/8), a real valkey-server is
 * started bound to that IP on the pod's ports (6379, and 16379 for cluster members), with the
 * release's password, as a replica of the primary pod for replication-mode replicas. The
 * post-deploy steps then reach, through the `direct` connector, servers whose identity
 * (pod name, IP, node, zone) is the API server's.
 *
 * Replication mode under Sentinel (pod-sentinels.ts): each Sentinel pod gets a real
 * `valkey-server --sentinel` from the release's rendered sentinel.conf, each member runs the
 * rendered entrypoint with the Sentinel start decision. Pod DNS names become pod IPs (kwok has
 * no cluster DNS): these servers announce their IPs, not the hostnames the real pods announce.
 *
 * A pod deleted through the API (its name gone, or back with another UID) has its server
 * SIGKILLed at once, as the kubelet kills a container deleted with grace period 0 (a destroy);
 * when the StatefulSet controller recreates the pod and it gets an IP, the server is started again
 * the same way in the same per-pod-name directory (the PVC). What a real pod does on deletion
 * (preStop, restarts on a new IP, the drills) is tested on real pods (tests/pods).
 */
import type * as k8s from "@kubernetes/client-node";
import { sleep } from "../../../core/util/poll-until.js";
import { pollInBackground } from "../../support/background-poll.js";
import { LocalFleet, type ValkeyProcess } from "../../../harness/local/valkey-process.js";
import {
  HAPROXY_NAME_LABEL,
  persistenceOf,
  SENTINEL_NAME_LABEL,
  startHaproxyPod,
  startMemberPod,
  startSentinelPod,
} from "./pod-sentinels.js";

export interface PodRestart {
  pod: string;
  /** The deleted pod's UID and IP, and when its server was killed (epoch ms). */
  oldUid: string;
  oldIp: string;
  killedAt: number;
  /** The recreated pod's, once its server answers again. */
  newUid?: string;
  newIp?: string;
  startedAt?: number;
}

export interface PodValkeys {
  /** Pod name → server (the running one: a restarted pod's new server). */
  readonly servers: Map<string, ValkeyProcess>;
  /** Every deletion seen, in order, and the restart that followed it. */
  readonly restarts: PodRestart[];
  /** Errors from starting servers (reported by the test, never swallowed). */
  readonly errors: string[];
  /** What is under way (pods being started, the poll loop), for a test's failure message. */
  describe(): string;
  stop(): Promise<void>;
}

const ROLE = "valkey-on-eks/role";

/** Starts servers for the Valkey pods of `namespace` as they get IPs, until stopped. */
export function standInForPods(core: k8s.CoreV1Api, namespace: string, password: string | undefined): PodValkeys {
  const fleet = new LocalFleet();
  const servers = new Map<string, ValkeyProcess>();
  /** Pod name → UID and IP of the pod its server runs for. */
  const owners = new Map<string, { uid: string; ip: string }>();
  const restarts: PodRestart[] = [];
  const starting = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  const errors: string[] = [];
  let stopped = false;
  let phase = "polling";

  const started = (pod: k8s.V1Pod, server: ValkeyProcess): void => {
    const name = pod.metadata?.name ?? "?";
    const uid = pod.metadata?.uid ?? "";
    servers.set(name, server);
    owners.set(name, { uid, ip: server.host });
    const pending = restarts.find((r) => r.pod === name && r.newUid === undefined);
    if (pending !== undefined) Object.assign(pending, { newUid: uid, newIp: server.host, startedAt: Date.now() });
  };

  /** SIGKILLs the server of every pod that is gone, marked for deletion, or back with another UID. */
  const killDeleted = async (pods: k8s.V1Pod[]): Promise<void> => {
    const byName = new Map(pods.map((p) => [p.metadata?.name ?? "", p]));
    // A snapshot: a server started meanwhile (by an in-flight start) is not judged by this stale list.
    for (const [name, owner] of [...owners]) {
      if (owners.get(name) !== owner) continue;
      const pod = byName.get(name);
      if (pod !== undefined && pod.metadata?.uid === owner.uid && pod.metadata.deletionTimestamp === undefined)
        continue;
      const server = servers.get(name);
      owners.delete(name);
      servers.delete(name);
      server?.signal("SIGKILL");
      restarts.push({ pod: name, oldUid: owner.uid, oldIp: owner.ip, killedAt: Date.now() });
      await server?.stop(0);
    }
  };

  const startFor = async (pod: k8s.V1Pod, primaryIp: string | undefined, ips: Map<string, string>): Promise<void> => {
    const name = pod.metadata?.name ?? "?";
    const ip = pod.status?.podIP as string;
    const role = pod.metadata?.labels?.[ROLE];
    if (role === "replica" && primaryIp === undefined) return; // wait for the primary's IP
    const kind = pod.metadata?.labels?.["app.kubernetes.io/name"];
    const sentinelPod = kind === SENTINEL_NAME_LABEL;
    // A replication member under Sentinel: role "member" without the cluster bus port.
    const clusterMember = (pod.spec?.containers ?? []).some((c) =>
      (c.ports ?? []).some((p) => p.name === "cluster-bus"),
    );
    starting.add(name);
    try {
      if (sentinelPod || kind === HAPROXY_NAME_LABEL || (role === "member" && !clusterMember)) {
        const ctx = { core, namespace, fleet, password, ips };
        const server = sentinelPod
          ? await startSentinelPod(ctx, pod)
          : kind === HAPROXY_NAME_LABEL
            ? await startHaproxyPod(ctx, pod)
            : await startMemberPod(ctx, pod, restarts.findLast((r) => r.pod === name)?.oldIp);
        if (server !== undefined) started(pod, server);
        return;
      }
      const server = await fleet.start({
        name,
        bind: ip,
        port: 6379,
        password,
        ...(await persistenceOf(core, namespace, pod)),
        // Outgoing connections (replication, cluster bus) leave from the pod IP, and the server
        // announces it, as a pod's own network namespace would make it.
        extra: {
          "bind-source-addr": ip,
          ...(role === "member" ? { "cluster-announce-ip": ip } : { "replica-announce-ip": ip }),
        },
        ...(role === "member" ? { clusterEnabled: true, clusterPort: 16379, clusterNodeTimeoutMs: 5000 } : {}),
        ...(role === "replica" ? { replicaOf: { host: primaryIp as string, port: 6379 } } : {}),
      });
      started(pod, server);
    } catch (err) {
      // A start that fails after stop() (its pods being torn down) is not a fault of the test.
      if (!stopped) errors.push(`${name} (${ip}): ${(err as Error).message}`);
    } finally {
      starting.delete(name);
    }
  };

  const tick = async (): Promise<void> => {
    phase = "listing pods";
    const all = (
      await core.listNamespacedPod({
        namespace,
        labelSelector: `app.kubernetes.io/name in (valkey,${SENTINEL_NAME_LABEL},${HAPROXY_NAME_LABEL})`,
      })
    ).items;
    const pods = all;
    phase = "killing deleted pods' servers";
    await killDeleted(pods);
    phase = "starting";
    const ips = new Map(
      all.flatMap((p) =>
        p.status?.podIP === undefined ? [] : [[p.metadata?.name ?? "", p.status.podIP] as [string, string]],
      ),
    );
    const primaryIp = pods.find((p) => p.metadata?.labels?.[ROLE] === "primary")?.status?.podIP;
    // Not awaited: a member under Sentinel may wait long for its start decision, and deletions
    // must be seen (and their servers killed) meanwhile.
    for (const p of pods.filter(
      (p) =>
        p.status?.podIP !== undefined &&
        p.metadata?.deletionTimestamp === undefined &&
        !servers.has(p.metadata?.name ?? "") &&
        !starting.has(p.metadata?.name ?? ""),
    )) {
      const run = startFor(p, primaryIp, ips).finally(() => inFlight.delete(run));
      inFlight.add(run);
    }
  };

  const poll = pollInBackground(tick, 250, () => undefined); // the namespace may not exist yet

  return {
    servers,
    restarts,
    errors,
    describe: () => `loop: ${phase}; starting: [${[...starting].join(", ")}]; ${inFlight.size} start(s) in flight`,
    stop: async () => {
      stopped = true;
      // Bounded: whatever does not finish is named in `errors`, and the servers are stopped anyway.
      const within = async (what: string, p: Promise<unknown>, ms: number): Promise<void> => {
        const late = Symbol("late");
        const r = await Promise.race([p.then(() => undefined), sleep(ms).then(() => late)]);
        if (r === late)
          errors.push(
            `stop: ${what} did not finish within ${ms / 1000} s (${phase}; starting: [${[...starting].join(", ")}])`,
          );
      };
      await within("the poll loop", poll.stop(), 30_000);
      // Starts in flight end within their own start timeout (60 s at the most: HAProxy's).
      phase = "stopped; waiting for the starts in flight";
      await within("the starts in flight", Promise.all([...inFlight]), 100_000);
      phase = "stopping the servers";
      await fleet.stopAll();
      phase = "stopped";
    },
  };
}
