/**
 * Platform byo's preview-time checks of the cluster you bring (components/capacity/byo-preflight.ts):
 * its nodes, StorageClasses and DaemonSets read through the stack's kubeconfig and context, before
 * any resource is registered. A cluster that cannot be read is a warning here: the Kubernetes
 * provider fails on it anyway, with its own message.
 */
import * as k8s from "@kubernetes/client-node";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../config/types.js";
import { parseCpuQuantity, parseMemoryQuantity } from "../config/quantity.js";
import {
  checkByoCluster,
  DEFAULT_CLASS_ANNOTATION,
  type ByoClusterFacts,
  type ByoPreflightResult,
} from "../components/capacity/byo-preflight.js";
import { byoKubeConfig } from "./kube-version.js";

export type ByoFactsProbe = ByoClusterFacts | { error: string };

/** The nodes, StorageClasses and DaemonSets of the byo cluster. */
export async function probeByoCluster(config: StackConfig): Promise<ByoFactsProbe> {
  try {
    const kc = byoKubeConfig(config);
    const [nodes, classes, daemonSets, ciliumNodes] = await Promise.all([
      kc.makeApiClient(k8s.CoreV1Api).listNode(),
      kc.makeApiClient(k8s.StorageV1Api).listStorageClass(),
      kc.makeApiClient(k8s.AppsV1Api).listDaemonSetForAllNamespaces(),
      // No Cilium CRD (404): none.
      kc
        .makeApiClient(k8s.CustomObjectsApi)
        .listClusterCustomObject({ group: "cilium.io", version: "v2", plural: "ciliumnodes" })
        .then((list: { items?: unknown[] }) => list.items?.length ?? 0)
        .catch(() => 0),
    ]);
    return {
      nodes: nodes.items.map((n) => ({
        name: n.metadata?.name ?? "",
        labels: { ...n.metadata?.labels },
        annotationKeys: Object.keys(n.metadata?.annotations ?? {}),
        taints: (n.spec?.taints ?? []).map((t) => ({
          key: t.key,
          effect: t.effect,
          ...(t.value === undefined ? {} : { value: t.value }),
        })),
        unschedulable: n.spec?.unschedulable === true,
        allocatable: {
          cpuMillicores: parseCpuQuantity(n.status?.allocatable?.cpu ?? "0"),
          memoryBytes: parseMemoryQuantity(n.status?.allocatable?.memory ?? "0"),
        },
      })),
      storageClasses: classes.items.map((c) => ({
        name: c.metadata?.name ?? "",
        isDefault: c.metadata?.annotations?.[DEFAULT_CLASS_ANNOTATION] === "true",
      })),
      ciliumNodes,
      daemonSets: daemonSets.items.map((d) => ({
        name: `${d.metadata?.namespace ?? ""}/${d.metadata?.name ?? ""}`,
        containers: (d.spec?.template.spec?.containers ?? []).map((c) => ({ name: c.name, args: c.args ?? [] })),
      })),
    };
  } catch (err) {
    return { error: (err as Error).message.split("\n")[0] ?? String(err) };
  }
}

/** The checks on what the probe read; an unreadable cluster is one warning. */
export function collectByoPreflight(config: StackConfig, facts: ByoFactsProbe): ByoPreflightResult {
  if ("error" in facts)
    return {
      problems: [],
      warnings: [`could not read the byo cluster's nodes and StorageClasses (${facts.error}); nothing was checked`],
    };
  return checkByoCluster(config, facts);
}

/** @throws pulumi.RunError listing every problem, before any resource is registered. */
export function preflightByo(config: StackConfig, facts: ByoFactsProbe): void {
  const { problems, warnings } = collectByoPreflight(config, facts);
  for (const warning of warnings) void pulumi.log.warn(warning);
  if (problems.length > 0)
    throw new pulumi.RunError(
      `byo preflight failed (nothing was created):\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
}
