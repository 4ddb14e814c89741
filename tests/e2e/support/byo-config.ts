/**
 * The byo stack keys every e2e stack shares: the control plane's kubeconfig, the Valkey pool's
 * node selector and taint (the kwok nodes are labelled and tainted like the Karpenter pool), and
 * kwok's storage class; plus pod sizes small enough for the kwok nodes, and one more Valkey-pool
 * node when a test needs it.
 */
import { KWOK_STORAGE_CLASS, type ControlPlane } from "./control-plane.js";

/** `platform`, `aws` and `byo` for a stack on the local control plane. */
export function byoPlatformConfig(kubeconfigPath: string, zones: readonly string[]): Record<string, unknown> {
  return {
    platform: "byo",
    aws: { zones: [...zones] },
    byo: {
      kubeconfig: kubeconfigPath,
      nodeSelector: { "karpenter.sh/nodepool": "valkey" },
      tolerations: [{ key: "workload", operator: "Equal", value: "valkey", effect: "NoSchedule" }],
      storageClass: KWOK_STORAGE_CLASS,
    },
  };
}

/** Burstable Valkey pods that fit the kwok nodes, with a 1Gi volume. */
export const SMALL_VALKEY_PODS = {
  resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "1", memory: "256Mi" } },
  persistence: { size: "1Gi" },
} as const;

/**
 * Adds kwok node `name` in `zone` to the Valkey pool (labelled and tainted as the pool's nodes):
 * what Karpenter would do for a pod that fits nowhere.
 */
export async function addValkeyPoolNode(
  plane: ControlPlane,
  name: string,
  zone: string,
  podCidr?: string,
): Promise<void> {
  await plane.api("POST", "/api/v1/nodes", {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      annotations: { "kwok.x-k8s.io/node": "fake" },
      labels: {
        "karpenter.sh/nodepool": "valkey",
        "topology.kubernetes.io/zone": zone,
        "kubernetes.io/hostname": name,
        "type": "kwok",
      },
    },
    spec: {
      ...(podCidr === undefined ? {} : { podCIDR: podCidr, podCIDRs: [podCidr] }),
      taints: [{ key: "workload", value: "valkey", effect: "NoSchedule" }],
    },
  });
}
