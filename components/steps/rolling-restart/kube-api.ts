/**
 * What RollingRestart asks of the API server: the release's pods (with their
 * `controller-revision-hash`), evicting one (its PodDisruptionBudget honoured, its preStop run),
 * and a StatefulSet's update revision. Over @kubernetes/client-node 2.x (the drill's pod calls).
 */
import type { DrillPod } from "../failure-drill/kube-api.js";

export type RollPod = Pick<DrillPod, "name" | "uid" | "podIP" | "ready" | "deleting" | "labels">;

export interface RollKubeApi {
  listPods(namespace: string, selector: string): Promise<RollPod[]>;
  /** "blocked" while the PodDisruptionBudget refuses (HTTP 429). */
  evictPod(namespace: string, name: string): Promise<"evicted" | "blocked">;
  /** `status.updateRevision` once `status.observedGeneration` reached `metadata.generation`; undefined until then. */
  updateRevision(namespace: string, name: string): Promise<string | undefined>;
}

export async function kubernetesRollApi(kubeconfig: string, context?: string): Promise<RollKubeApi> {
  const [k8s, { loadKubeConfig }, { kubernetesDrillApi }] = await Promise.all([
    import("@kubernetes/client-node"),
    import("../../kubernetes/pod-api.js"),
    import("../failure-drill/kube-api.js"),
  ]);
  const pods = await kubernetesDrillApi(kubeconfig, context);
  const apps = loadKubeConfig(kubeconfig, context).makeApiClient(k8s.AppsV1Api);
  return {
    listPods: (namespace, selector) => pods.listPods(namespace, selector),
    evictPod: (namespace, name) => pods.evictPod(namespace, name),
    async updateRevision(namespace, name) {
      const s = await apps.readNamespacedStatefulSet({ namespace, name });
      const seen = (s.status?.observedGeneration ?? 0) >= (s.metadata?.generation ?? 0);
      return seen ? s.status?.updateRevision || undefined : undefined;
    },
  };
}
