/**
 * The TopologyCheck resource's implementation (loaded by its dynamic-provider shell, and called
 * directly by tests): discover the release's pods, run the core's `verifyTopology` through the
 * chosen connector with zones from pod -> node -> `topology.kubernetes.io/zone`, and either
 * return a JSON-safe report or throw an error listing the failure codes and the readable table.
 */
import { formatTopologyReport } from "../../../core/verify/format-report.js";
import { verifyTopology } from "../../../core/verify/verify-topology.js";
import type { TopologyReport } from "../../../core/verify/verify-types.js";
import { toCheckReport } from "../../../core/verify/to-check-report.js";
import type { Redis } from "ioredis";
import { ConnectionError, type Connector } from "../../../core/topology/connector.js";
import { sleep } from "../../../core/util/poll-until.js";
import type { NodeEndpoint } from "../../../vocabulary/endpoint.js";
import type { ZoneSource } from "../../../core/topology/zones.js";
import { normalHost, podsByHost } from "../../kubernetes/pod-addresses.js";
import type { PodApi, PodRecord } from "../../kubernetes/pod-api.js";
import { discoverPods, PodsNotUsableError, unusablePods, type DiscoveredPod } from "../../kubernetes/pod-discovery.js";
import { KubernetesZoneSource } from "../../kubernetes/zone-source.js";
import { ROLE_LABEL } from "../../shared.js";
import { kubeDeps, podEndpoint, usablePods, type KubeDeps } from "../kit/kube-access.js";
import { dynamicProtocol } from "../kit/protocol.js";
import type { Parsed } from "../kit/inputs.js";
import { checkStep, type TopologyCheckInputs, type TopologyCheckOutputs, type verifierFields } from "./declaration.js";

export type { TopologyCheckInputs, TopologyCheckOutputs } from "./declaration.js";

export class TopologyCheckError extends Error {
  constructor(readonly report: TopologyReport) {
    const codes = [...new Set(report.failures.map((f) => f.code))].join(", ");
    super(`topology check failed (${report.mode} mode): ${codes}\n${formatTopologyReport(report)}`);
    this.name = "TopologyCheckError";
  }
}

/** Cluster mode: every pod (discovery starts at the first that answers). Replication: the primary. */
export function seedPods(mode: "cluster" | "replication", pods: readonly DiscoveredPod[]): DiscoveredPod[] {
  if (mode === "cluster") return [...pods];
  const primaries = pods.filter((p) => p.labels[ROLE_LABEL] === "primary");
  return primaries.length > 0 ? primaries : pods.slice(0, 1);
}

/** How long a check under Sentinel waits for a failing verdict to turn (timeoutMs overrides). */
export const SENTINEL_CONVERGE_MS = 60_000;

/** Sentinel's TILT period (sentinel.c): after its timer runs ≥ 2 s late it changes no flag for 30 s. */
export const SENTINEL_TILT_PERIOD_MS = 30_000;

/**
 * Whether a failing verdict is asked again. Until `deadline`, always. After it, only while a failure
 * is named on a Sentinel in TILT (its flags, that failure's evidence, are frozen since its timer ran
 * late on a CPU-starved node, so they cannot have turned yet), and for at most two TILT periods past
 * the deadline: a Sentinel that keeps re-entering TILT that long is itself the finding, and the
 * check fails with its table saying so.
 */
export function askAgain(report: TopologyReport, now: number, deadline: number): boolean {
  if (report.ok) return false;
  if (now < deadline) return true;
  const inTilt = new Set((report.sentinels ?? []).filter((s) => s.tilt === true).map((s) => s.address));
  return (
    report.failures.some((f) => f.node !== undefined && inTilt.has(f.node)) &&
    now < deadline + 2 * SENTINEL_TILT_PERIOD_MS
  );
}

/** The check's outside world: the kit's, plus the Sentinel pods' port (tests with local Sentinels map each pod). */
export type CheckDeps = KubeDeps & { sentinelPortsOf?: (pod: PodRecord) => { port: number; busPort: number } };

/** Both zone sources: the data members and the Sentinels (one key space of `host:port`). */
class MergedZoneSource implements ZoneSource {
  constructor(private readonly sources: readonly ZoneSource[]) {}
  async zonesFor(endpoints: readonly NodeEndpoint[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const m of await Promise.all(this.sources.map((s) => s.zonesFor(endpoints))))
      for (const [k, v] of m) if (!out.has(k)) out.set(k, v);
    return out;
  }
}

/**
 * The Sentinels answer with the names members announce (stable pod DNS names); a caller outside
 * the cluster DNS (the `direct` connector) dials the pod IP the API server gives for that name.
 */
export class PodNameConnector implements Connector {
  private readonly byHost: Map<string, DiscoveredPod>;
  constructor(
    private readonly inner: Connector,
    pods: readonly DiscoveredPod[],
    o: { namespace: string; headlessService?: string },
  ) {
    this.byHost = podsByHost(pods, o);
  }
  connect(endpoint: NodeEndpoint): Promise<Redis> {
    const pod = this.byHost.get(normalHost(endpoint.host));
    const ip = pod?.podIP;
    return this.inner.connect(ip === undefined ? endpoint : { host: ip, port: endpoint.port });
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** What the verifier needs of a step's inputs (declaration.ts verifierFields, and whether to count keys). */
export type VerifierInputs = Parsed<typeof verifierFields> & { countKeys?: boolean };

/** A verifier over the release's pods as discovered now; `close` releases its connector (port-forwards). */
export interface KubernetesVerifier {
  verify: () => Promise<TopologyReport>;
  /** Reaches members by the names they announce (pod DNS names too, with the `direct` connector). */
  connector: Connector;
  close: () => Promise<void>;
}

/**
 * Discovers the members (and Sentinels), and builds the core's verifier through the chosen connector with zones from
 * the nodes.
 */
export async function kubernetesVerifier(i: VerifierInputs, deps: CheckDeps): Promise<KubernetesVerifier> {
  const pods = await usablePods(i, deps);
  const s = i.mode === "replication" ? i.sentinel : undefined;
  const sentinelPortsOf = deps.sentinelPortsOf ?? (() => ({ port: s?.port ?? 26379, busPort: 0 }));
  const sentinelPods =
    s === undefined ? [] : await usableSentinels(i.namespace, s.selector, deps.podApi, sentinelPortsOf);
  const reach = deps.connector([...pods, ...sentinelPods]);
  const connector =
    i.connector === "direct"
      ? new PodNameConnector(reach, pods, { namespace: i.namespace, headlessService: i.headlessService })
      : reach;
  const memberZones = new KubernetesZoneSource(deps.podApi, {
    namespace: i.namespace,
    selector: i.selector,
    portsOf: deps.portsOf,
    headlessService: i.headlessService,
  });
  const zones =
    s === undefined
      ? memberZones
      : new MergedZoneSource([
          memberZones,
          new KubernetesZoneSource(deps.podApi, {
            namespace: i.namespace,
            selector: s.selector,
            portsOf: sentinelPortsOf,
            headlessService: s.headlessService,
          }),
        ]);
  const verify = (): Promise<TopologyReport> =>
    verifyTopology({
      mode: i.mode,
      seeds: s === undefined ? seedPods(i.mode, pods).map(podEndpoint) : [],
      connector,
      zones,
      expect: i.expect ?? {},
      replicaLagBytes: i.replicaLagBytes,
      countKeys: i.countKeys ?? false,
      ...(s === undefined
        ? {}
        : { sentinel: { endpoints: sentinelPods.map(podEndpoint), masterName: s.masterName, connector } }),
    });
  return { verify, connector, close: () => connector.close() };
}

export async function checkTopologyOnKubernetes(
  i: TopologyCheckInputs,
  deps: CheckDeps = kubeDeps(i),
): Promise<TopologyCheckOutputs> {
  const s = i.mode === "replication" ? i.sentinel : undefined;
  // Fresh Sentinels learn their peers (hello, every 2 s) and the replicas (INFO, every second:
  // pod/sentinel-start-script.ts) after they start, and a loaded node may fail a Sentinel's readiness
  // probe for a while: under Sentinel, until timeoutMs, a pod not usable yet, a look no Sentinel
  // answered at all (restored Sentinels whose servers are still starting: ConnectionError) and a
  // failing verdict are asked again (a verdict resting on a Sentinel in TILT, a little past it: askAgain).
  const deadline = Date.now() + (s === undefined ? 0 : (i.timeoutMs ?? SENTINEL_CONVERGE_MS));
  // Each look discovers the pods afresh (a restored or rescheduled pod may have a new IP).
  const look = () =>
    untilDeadline(
      async () => {
        const v = await kubernetesVerifier(i, deps);
        try {
          return await v.verify();
        } finally {
          await v.close();
        }
      },
      deadline,
      (err) => err instanceof PodsNotUsableError || (err instanceof ConnectionError && err.kind === "unreachable"),
    );
  let report = await look();
  while (askAgain(report, Date.now(), deadline)) {
    await sleep(2000);
    report = await look();
  }
  if (!report.ok) throw new TopologyCheckError(report);
  return { report: toCheckReport(report), table: formatTopologyReport(report) };
}

/** `attempt` again every 2 s while it fails with an error `transient` accepts, until `deadline`; then its error. */
async function untilDeadline<T>(
  attempt: () => Promise<T>,
  deadline: number,
  transient: (err: unknown) => boolean,
): Promise<T> {
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (!transient(err) || Date.now() >= deadline) throw err;
      await sleep(2000);
    }
  }
}

/** The Sentinel pods (every one must have an IP: a Sentinel without one is reported, not skipped). */
async function usableSentinels(
  namespace: string,
  selector: string,
  podApi: PodApi,
  portsOf: NonNullable<CheckDeps["sentinelPortsOf"]>,
): Promise<DiscoveredPod[]> {
  const pods = await discoverPods(podApi, { namespace, selector, portsOf });
  if (pods.length === 0) throw new Error(`no Sentinel pods in namespace ${namespace} with selector '${selector}'`);
  const bad = unusablePods(pods);
  if (bad.length > 0)
    throw new PodsNotUsableError(`Sentinel pods in namespace ${namespace} are not usable yet: ${bad.join("; ")}`);
  return pods;
}

// --- the dynamic-provider protocol (called by ../kit/ts-module-provider.ts) ---

export const { check, create, diff, update } = dynamicProtocol(checkStep, {
  run: (i) => checkTopologyOnKubernetes(i),
  idOf: (i) => `${i.namespace}/${i.selector}/${i.mode}`,
});
