/**
 * The ClusterBootstrap resource's implementation (loaded by its dynamic-provider shell, and
 * called directly by tests): discover the cluster-mode pods, build one ClusterMember per pod
 * (id = pod name, zone = its node's zone, endpoint and MEET address = pod IP), wait (bounded) until
 * every member's server takes a connection (membersAnswering), run the core's
 * AZ-aware `bootstrapCluster` through the chosen connector, set each member's
 * `availability-zone` from its pod's zone (announce-zones.ts), and summarise the cluster as it is.
 * Idempotent: a healthy cluster of the same shape is left alone (`changed: false`); more
 * primaries on new pods scale the running cluster up (the core moves slots and keys).
 */
import type { ClusterMember } from "../../../core/bootstrap/cluster-member.js";
import { bootstrapCluster, type BootstrapResult } from "../../../core/bootstrap/cluster-bootstrap.js";
import { noneJoined, restoreCluster } from "../../../core/backup/restore-bootstrap.js";
import { plannedRanges } from "../../../core/backup/restore-check.js";
import { endpointKey } from "../../../vocabulary/endpoint.js";
import { StaticZoneSource } from "../../../core/topology/zones.js";
import { verifyTopology } from "../../../core/verify/verify-topology.js";
import type { TopologyReport } from "../../../core/verify/verify-types.js";
import type { DiscoveredPod } from "../../kubernetes/pod-discovery.js";
import { zoneMapForPods } from "../../kubernetes/zone-source.js";
import { discoverPods } from "../../kubernetes/pod-discovery.js";
import { pollUntil } from "../../../core/util/poll-until.js";
import { ConnectionError, type Connector } from "../../../core/topology/connector.js";
import { kubeDeps, podEndpoint, usablePods, type KubeDeps } from "../kit/kube-access.js";
import { dynamicProtocol } from "../kit/protocol.js";
import { announceZones } from "../../../core/bootstrap/announce-zones.js";
import { bootstrapStep, type ClusterBootstrapInputs, type ClusterBootstrapOutputs } from "./declaration.js";

export type { ClusterBootstrapInputs, ClusterBootstrapOutputs } from "./declaration.js";
export type { PlanSummary, ShardSummary } from "./types.js";
import type { PlanSummary } from "./types.js";

export function memberFor(p: DiscoveredPod): ClusterMember {
  const e = podEndpoint(p);
  return { id: p.name, zone: p.zone ?? "", endpoint: e, meet: { ip: e.host, port: e.port, busPort: p.busPort } };
}

/** The report's shards by pod name (addresses are the pods' announced `ip:port`). */
export function summarise(report: TopologyReport, pods: readonly DiscoveredPod[]): PlanSummary {
  const byAddress = new Map(pods.map((p) => [endpointKey(podEndpoint(p)), p.name]));
  const pod = (address: string): string => byAddress.get(address) ?? address;
  return {
    shards: report.shards.map((s) => ({
      primary: { pod: pod(s.primary.address), zone: s.primary.zone ?? null, nodeId: s.primary.nodeId ?? null },
      replicas: s.replicas.map((r) => ({ pod: pod(r.address), zone: r.zone ?? null })),
      slotRanges: s.primary.slotRanges,
    })),
    primariesPerZone: report.primariesPerZone,
  };
}

/**
 * After a scale-in the StatefulSet may report ready while its removed pods still terminate:
 * waits (bounded by timeoutMs) until no pod at or above the expected ordinal count is listed.
 */
async function leavingPodsGone(i: ClusterBootstrapInputs, deps: KubeDeps): Promise<void> {
  await pollUntil(
    async () => {
      const pods = await discoverPods(deps.podApi, {
        namespace: i.namespace,
        selector: i.selector,
        portsOf: deps.portsOf,
      });
      const above = pods.filter((p) => p.ordinal !== undefined && p.ordinal >= i.expectedPods).map((p) => p.name);
      return above.length === 0 ? true : `${above.join(", ")} still listed`;
    },
    {
      timeoutMs: i.timeoutMs ?? 60_000,
      intervalMs: 1000,
      what: `the pods above ordinal ${i.expectedPods - 1} to be gone (StatefulSet scale-in)`,
    },
  );
}

/**
 * A restored stack's first bootstrap (`restored` and no member has met another yet): pods 0..P-1
 * hold shards 0..P-1 (restore.sh) and become their primaries; otherwise the ordinary bootstrap.
 */
async function formCluster(
  i: ClusterBootstrapInputs,
  pods: readonly DiscoveredPod[],
  members: ClusterMember[],
  connector: Parameters<typeof bootstrapCluster>[0]["connector"],
): Promise<Pick<BootstrapResult, "changed" | "nodeIds" | "steps">> {
  if (i.restored === true && (await noneJoined(members, connector))) {
    const restored = [...pods]
      .filter((p) => p.ordinal !== undefined && p.ordinal < i.primaries)
      .sort((a, b) => (a.ordinal as number) - (b.ordinal as number))
      .map((p) => p.name);
    const r = await restoreCluster({
      shards: plannedRanges(i.primaries).map((ranges) => ({ ranges })),
      restored,
      members,
      replicasPerPrimary: i.replicasPerPrimary,
      connector,
      timeoutMs: i.timeoutMs,
    });
    return { changed: true, nodeIds: r.nodeIds, steps: r.steps };
  }
  return bootstrapCluster({
    members,
    primaries: i.primaries,
    replicasPerPrimary: i.replicasPerPrimary,
    connector,
    timeoutMs: i.timeoutMs,
    password: i.password,
  });
}

/**
 * Until every member's server takes a connection, bounded by `timeoutMs`: a pod reads Ready from its readiness probe,
 * but one restarted since (or, in the e2e tier, a kwok pod marked Ready before its stand-in server listens) refuses for
 * a moment, and the bootstrap's first read of every member would fail on it at once. Anything but "cannot reach" (a
 * wrong password, a listener that is not Valkey) fails at once; past the bound, the members still silent are named.
 */
export async function membersAnswering(
  members: readonly ClusterMember[],
  connector: Connector,
  timeoutMs: number,
): Promise<void> {
  const answered = new Set<string>();
  await pollUntil(
    async () => {
      const silent: string[] = [];
      await Promise.all(
        members
          .filter((m) => !answered.has(m.id))
          .map(async (m) => {
            try {
              (await connector.connect(m.endpoint)).disconnect();
              answered.add(m.id);
            } catch (err) {
              const transient =
                err instanceof ConnectionError &&
                err.kind === "unreachable" &&
                !/authentication failed/.test(err.message);
              if (!transient) throw err;
              silent.push(`${m.id} (${err.message})`);
            }
          }),
      );
      return silent.length === 0 ? true : `not answering: ${silent.sort().join("; ")}`;
    },
    { timeoutMs, intervalMs: 500, what: "every Valkey pod's server to take a connection" },
  );
}

export async function bootstrapOnKubernetes(
  i: ClusterBootstrapInputs,
  deps: KubeDeps = kubeDeps(i),
): Promise<ClusterBootstrapOutputs> {
  await leavingPodsGone(i, deps);
  const pods = await usablePods(i, deps, i.expectedPods);
  const connector = deps.connector(pods);
  const members = pods.map(memberFor);
  try {
    await membersAnswering(members, connector, i.timeoutMs ?? 60_000);
    const result = await formCluster(i, pods, members, connector);
    // Before the summary, so the verifier reads the zones the members now announce.
    const zones = await announceZones(members, connector);
    const report = await verifyTopology({
      mode: "cluster",
      seeds: pods.map(podEndpoint),
      connector,
      zones: new StaticZoneSource(zoneMapForPods(pods, i)),
      countKeys: false,
    });
    return {
      plan: summarise(report, pods),
      changed: result.changed || zones.set.length > 0,
      nodeIds: result.nodeIds,
      steps: [...result.steps, ...zones.set, ...zones.unsupported],
    };
  } finally {
    await connector.close();
  }
}

// --- the dynamic-provider protocol (called by ../kit/ts-module-provider.ts) ---

type Props = Record<string, unknown>;

/**
 * Refuses every change of shape except a scale-up or a scale-in, naming both shapes: adding
 * primaries (with their new pods, the same replicas per primary) is what the core applies to a
 * formed cluster; fewer primaries (fewer pods) the ClusterScaleIn step applied before the
 * StatefulSet shrank; another replica count is not supported.
 */
export function refuseUnsupportedReshape(olds: Props, news: Props): void {
  const shape = (p: Props): string =>
    `${String(p.primaries)} primaries x ${String(p.replicasPerPrimary)} replicas (${String(p.expectedPods)} pods)`;
  const same =
    olds.primaries === news.primaries &&
    olds.replicasPerPrimary === news.replicasPerPrimary &&
    olds.expectedPods === news.expectedPods;
  const n = (v: unknown): number => (typeof v === "number" ? v : NaN);
  const scaleUp =
    olds.replicasPerPrimary === news.replicasPerPrimary &&
    n(news.primaries) > n(olds.primaries) &&
    n(news.expectedPods) > n(olds.expectedPods);
  // The ClusterScaleIn step scaled the cluster in before the StatefulSet shrank: the kept pods form the new shape.
  const scaleIn =
    olds.replicasPerPrimary === news.replicasPerPrimary &&
    n(news.primaries) < n(olds.primaries) &&
    n(news.expectedPods) < n(olds.expectedPods);
  if (!same && !scaleUp && !scaleIn) {
    throw new Error(
      `scaling an existing cluster from ${shape(olds)} to ${shape(news)} is not supported yet: ` +
        "only adding or removing primaries (with their pods, the same replicas per primary) is",
    );
  }
}

export const { check, create, diff, update } = dynamicProtocol(bootstrapStep, {
  run: (i) => bootstrapOnKubernetes(i),
  idOf: (i) => `${i.namespace}/${i.selector}`,
  checkUpdate: refuseUnsupportedReshape,
});
