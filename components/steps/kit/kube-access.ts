/**
 * How the steps reach a Valkey release on Kubernetes from their shared inputs (kube-target.ts):
 * the PodApi and connector built from them, the usable pods, and the `connectorFor` factory (`direct` = the core's
 * DirectConnector on pod IPs,
 * `port-forward` = PortForwardConnector through the API server).
 */
import type { Connector } from "../../../core/topology/connector.js";
import { DirectConnector } from "../../../core/topology/connector.js";
import type { NodeEndpoint } from "../../../vocabulary/endpoint.js";
import type { CheckConnector } from "../../../config/types.js";
import { KubePodApi, loadKubeConfig, type PodApi, type PodRecord } from "../../kubernetes/pod-api.js";
import { discoverPods, PodsNotUsableError, unusablePods, type DiscoveredPod } from "../../kubernetes/pod-discovery.js";
import { KubePortForwarder, PortForwardConnector, type Forwarder } from "../../kubernetes/port-forward-connector.js";
import type { Parsed } from "./inputs.js";
import type { kubeTargetFields } from "./kube-target.js";

/** The shared target inputs as the implementations read them (kube-target.ts declares them). */
export type KubeTargetInputs = Parsed<typeof kubeTargetFields>;

/** What the implementations need from the outside world; tests pass fakes. */
export interface KubeDeps {
  podApi: PodApi;
  /** The connector for the discovered pods. */
  connector: (pods: readonly DiscoveredPod[]) => Connector;
  /** Client and bus port of a pod. @default 6379 / 16379 */
  portsOf?: (pod: PodRecord) => { port: number; busPort: number };
}

export interface ConnectorForOptions {
  namespace: string;
  pods: readonly DiscoveredPod[] | (() => Promise<readonly DiscoveredPod[]>);
  password?: string;
  headlessService?: string;
  /** Needed for `port-forward`; called only then. */
  forwarder: () => Forwarder;
}

export function connectorFor(kind: CheckConnector, o: ConnectorForOptions): Connector {
  if (kind === "direct") return new DirectConnector({ password: o.password });
  return new PortForwardConnector({
    namespace: o.namespace,
    pods: o.pods,
    headlessService: o.headlessService,
    forwarder: o.forwarder(),
    connect: { password: o.password },
  });
}

/** The real API server and connector named by the inputs. */
export function kubeDeps(i: KubeTargetInputs): KubeDeps {
  const kc = loadKubeConfig(i.kubeconfig, i.context);
  return {
    podApi: new KubePodApi(kc),
    connector: (pods) =>
      connectorFor(i.connector, {
        namespace: i.namespace,
        pods,
        password: i.password,
        headlessService: i.headlessService,
        forwarder: () => new KubePortForwarder(kc),
      }),
  };
}

/** Discovers the release's pods and insists on `expected` usable ones (when given). */
export async function usablePods(i: KubeTargetInputs, deps: KubeDeps, expected?: number): Promise<DiscoveredPod[]> {
  const pods = await discoverPods(deps.podApi, { namespace: i.namespace, selector: i.selector, portsOf: deps.portsOf });
  const where = `namespace ${i.namespace} with selector '${i.selector}'`;
  if (expected !== undefined && pods.length !== expected) {
    throw new Error(
      `expected ${expected} Valkey pods in ${where}, found ${pods.length}${pods.length ? ` (${pods.map((p) => p.name).join(", ")})` : ""}`,
    );
  }
  if (pods.length === 0) throw new Error(`no Valkey pods in ${where}`);
  const bad = unusablePods(pods);
  if (bad.length > 0) throw new PodsNotUsableError(`Valkey pods in ${where} are not usable yet: ${bad.join("; ")}`);
  return pods;
}

/** The endpoint a pod's Valkey announces itself by: its pod IP and client port. */
export function podEndpoint(p: DiscoveredPod): NodeEndpoint {
  if (p.podIP === undefined) throw new Error(`${p.name} has no pod IP`);
  return { host: p.podIP, port: p.port };
}
