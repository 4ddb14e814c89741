/**
 * The Karpenter controller's Helm chart: where it comes from and its values (cluster name,
 * interruption queue, service account, resources, and placement on the system node group).
 */

/** The chart's OCI location; the version is `karpenter.chartVersion`. */
export const KARPENTER_CHART = "oci://public.ecr.aws/karpenter/karpenter";
/**
 * Karpenter's CRDs as their own chart, at the same version. Helm installs a chart's `crds/` once
 * and never upgrades them; karpenter-crd ships them as templates, so `helm upgrade` (a chart
 * version bump here) upgrades the CRDs with the controller, as Karpenter's upgrade guide advises.
 */
export const KARPENTER_CRD_CHART = "oci://public.ecr.aws/karpenter/karpenter-crd";
/** Namespace and service account of the controller (the Pod Identity association names them). */
export const KARPENTER_NAMESPACE = "kube-system";
export const KARPENTER_SERVICE_ACCOUNT = "karpenter";

export interface ChartValuesInput {
  clusterName: string;
  /** Name of the SQS interruption queue. */
  interruptionQueue: string;
  region: string;
  /** Labels of the system nodes the controller must run on. */
  systemNodeLabels: Readonly<Record<string, string>>;
  /** Controller replicas (at most one per system node: the chart spreads them by hostname). */
  replicas: number;
}

/** Values of the Karpenter chart. */
export function buildKarpenterChartValues(input: ChartValuesInput): Record<string, unknown> {
  const systemNode = Object.entries(input.systemNodeLabels).map(([key, value]) => ({
    key,
    operator: "In",
    values: [value],
  }));
  return {
    replicas: input.replicas,
    settings: { clusterName: input.clusterName, interruptionQueue: input.interruptionQueue },
    serviceAccount: { create: true, name: KARPENTER_SERVICE_ACCOUNT },
    controller: {
      env: [{ name: "AWS_REGION", value: input.region }],
      resources: { requests: { cpu: "500m", memory: "512Mi" }, limits: { cpu: "1", memory: "1Gi" } },
    },
    tolerations: [{ key: "CriticalAddonsOnly", operator: "Exists" }],
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          // Never on a node Karpenter itself launched, and only on the system node group.
          nodeSelectorTerms: [
            { matchExpressions: [{ key: "karpenter.sh/nodepool", operator: "DoesNotExist" }, ...systemNode] },
          ],
        },
      },
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          {
            topologyKey: "kubernetes.io/hostname",
            labelSelector: { matchLabels: { "app.kubernetes.io/name": "karpenter" } },
          },
        ],
      },
    },
  };
}
