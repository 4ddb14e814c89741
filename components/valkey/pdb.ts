/** PodDisruptionBudget: voluntary evictions take at most one Valkey pod of the release at a time. */
import { releaseLabels } from "../shared.js";
import type { PodDisruptionBudget } from "./k8s-types.js";

export function buildPodDisruptionBudget(
  name: string,
  namespace: string,
  release: string,
  selector: Record<string, string>,
): PodDisruptionBudget {
  return {
    metadata: { name, namespace, labels: releaseLabels(release) },
    spec: { maxUnavailable: 1, selector: { matchLabels: { ...selector } } },
  };
}
