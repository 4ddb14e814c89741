/**
 * What the components agree on: label keys, names and the placement every Valkey and benchmark
 * pod gets. Plain values only (no resources, no side effects), so builders, components and tests
 * import them freely.
 */
import type { Toleration } from "../config/types.js";

/** Label every Valkey data-plane pod carries; the benchmark Job's anti-affinity keeps away from it. */
export const DATA_PLANE_LABEL = "valkey-on-eks/data-plane";
/** Label a pod must carry for the NetworkPolicy to let it reach port 6379. */
export const CLIENT_LABEL = "valkey-on-eks/client";
/** Label with the pod's role in replication mode ("primary" | "replica") and in cluster mode ("member"). */
export const ROLE_LABEL = "valkey-on-eks/role";

/** The Karpenter NodePool / EC2NodeClass name for the Valkey data pool, and its taint. */
export const VALKEY_NODE_POOL = "valkey";
export const VALKEY_TAINT = { key: "workload", value: "valkey", effect: "NoSchedule" } as const;

/** Where Valkey and benchmark pods may run and where their volumes come from. */
export interface Placement {
  /** Zones the data pods spread over (hard spread); the first holds the replication primary. */
  zones: string[];
  /** Node labels pods must match (EKS: the Karpenter Valkey pool; byo: `byo.nodeSelector`). */
  nodeSelector: Record<string, string>;
  /** Tolerations pods carry (EKS: the Valkey pool's taint; byo: `byo.tolerations`). */
  tolerations: Toleration[];
  /** StorageClass of the data PVCs; undefined = the cluster's default class. */
  storageClass: string | undefined;
  /**
   * `"one"`: never two Valkey members on one node (a required per-node anti-affinity over the members), where
   * Karpenter launches the nodes for the pods (EKS, Auto Mode, byo with a managed NodePool): with only the soft
   * rule, real Karpenter launched a node per member and kube-scheduler still put two members on one of them
   * (tests/e2e/support/karpenter-decides.ts). Unset: the soft rule only, for a fixed set of nodes that may be fewer
   * than the members (byo, kube:local). @default undefined
   */
  membersPerNode?: "one";
}

/** Whether Karpenter launches the pool's nodes for its pods: EKS (Karpenter, Auto Mode), byo with a managed pool. */
export function karpenterLaunchesNodes(config: {
  platform: string;
  byo: { manageKarpenterNodePool: boolean };
}): boolean {
  return config.platform === "eks" || config.byo.manageKarpenterNodePool;
}

/** Labels shared by everything one Valkey release creates. */
export function releaseLabels(release: string): Record<string, string> {
  return {
    "app.kubernetes.io/name": "valkey",
    "app.kubernetes.io/instance": release,
    "app.kubernetes.io/part-of": "valkey-on-eks",
    "app.kubernetes.io/managed-by": "pulumi",
  };
}

/** Name of the default StorageClass (config `valkey.persistence.storageClass` defaults to it on eks). */
export const GP3_STORAGE_CLASS = "gp3";
