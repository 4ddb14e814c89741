/**
 * The slice of the Kubernetes API the checks need (list pods by label, read a node), behind a
 * small interface so discovery, zones and the bootstrap run against fake data in tests and
 * against the API server (client-node's CoreV1Api) in `pulumi up`.
 */
import { CoreV1Api, KubeConfig, type V1Node, type V1Pod } from "@kubernetes/client-node";

/** What discovery reads from a pod. */
export interface PodRecord {
  name: string;
  /** Empty until the pod has been scheduled and given an address. */
  podIP: string | undefined;
  /** Empty until the pod has been scheduled. */
  nodeName: string | undefined;
  /** The pod's `Ready` condition is `True`. */
  ready: boolean;
  labels: Record<string, string>;
  /** spec.subdomain: the headless Service of a StatefulSet pod's stable DNS name. */
  subdomain: string | undefined;
  /** Named container ports of all containers: name -> containerPort. */
  ports: Record<string, number>;
  /**
   * Init containers' termination messages, by container: the last run's (`state.terminated`), then
   * the one before (`lastState.terminated`, after a restart); only non-empty ones, only containers with one.
   */
  initMessages: Record<string, string[]>;
}

/** What discovery reads from a node. */
export interface NodeRecord {
  name: string;
  labels: Record<string, string>;
}

export interface PodApi {
  /** Pods in `namespace` matching the label `selector` (e.g. `app.kubernetes.io/instance=valkey`). */
  listPods(namespace: string, selector: string): Promise<PodRecord[]>;
  /** One node by name; rejects when it does not exist. */
  getNode(name: string): Promise<NodeRecord>;
}

export function podRecordFromV1(pod: V1Pod): PodRecord {
  const ready = (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
  return {
    name: pod.metadata?.name ?? "",
    podIP: pod.status?.podIP || undefined,
    nodeName: pod.spec?.nodeName || undefined,
    ready,
    labels: { ...(pod.metadata?.labels ?? {}) },
    subdomain: pod.spec?.subdomain || undefined,
    ports: Object.fromEntries(
      (pod.spec?.containers ?? []).flatMap((c) =>
        (c.ports ?? []).flatMap((p) => (p.name ? [[p.name, p.containerPort] as const] : [])),
      ),
    ),
    initMessages: Object.fromEntries(
      (pod.status?.initContainerStatuses ?? []).flatMap((c) => {
        const messages = [c.state?.terminated?.message, c.lastState?.terminated?.message].filter(
          (m): m is string => m !== undefined && m !== "",
        );
        return messages.length > 0 ? [[c.name, messages] as const] : [];
      }),
    ),
  };
}

export function nodeRecordFromV1(node: V1Node): NodeRecord {
  return { name: node.metadata?.name ?? "", labels: { ...(node.metadata?.labels ?? {}) } };
}

/**
 * Parses a kubeconfig's text and selects `context` (default: its current context). The
 * kubeconfig usually carries credentials: errors name the context, never the text.
 */
export function loadKubeConfig(kubeconfig: string, context?: string): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromString(kubeconfig);
  } catch (err) {
    throw new Error(`the kubeconfig could not be parsed (${(err as Error).name})`, { cause: err });
  }
  if (context !== undefined && context !== "") {
    if (!kc.getContexts().some((c) => c.name === context)) {
      throw new Error(
        `the kubeconfig has no context named '${context}' (has: ${
          kc
            .getContexts()
            .map((c) => c.name)
            .join(", ") || "none"
        })`,
      );
    }
    kc.setCurrentContext(context);
  }
  return kc;
}

/** A PodApi over the API server the kubeconfig points at. */
export class KubePodApi implements PodApi {
  private readonly core: CoreV1Api;

  constructor(kc: KubeConfig) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  async listPods(namespace: string, selector: string): Promise<PodRecord[]> {
    const list = await this.core.listNamespacedPod({ namespace, labelSelector: selector });
    return list.items.map(podRecordFromV1);
  }

  async getNode(name: string): Promise<NodeRecord> {
    return nodeRecordFromV1(await this.core.readNode({ name }));
  }
}
