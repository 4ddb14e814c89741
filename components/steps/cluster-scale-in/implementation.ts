/**
 * The ClusterScaleIn resource's implementation (loaded by its dynamic-provider shell, and
 * called directly by tests). It runs in `pulumi up` before the cluster's StatefulSet changes:
 * when the release has pods above P' x (1 + M) (valkey.cluster.primaries was lowered), it runs
 * the core's `scaleIn` (core/bootstrap/cluster-scale-in.ts) with the pods below that
 * ordinal kept: slots migrated off, replicas re-paired, the leaving members reset and
 * forgotten. Then it deletes the leaving pods' PersistentVolumeClaims, as VolumeRelease does on
 * destroy; Kubernetes holds each (pvc-protection) until its pod is gone, and the volumes go
 * with their reclaim policy. With no pods (first deployment) or no pod above the shape it does
 * nothing; run again after an interruption, it finishes the job from the live cluster.
 */
import { scaleIn } from "../../../core/bootstrap/cluster-scale-in.js";
import { loadKubeConfig } from "../../kubernetes/pod-api.js";
import { discoverPods } from "../../kubernetes/pod-discovery.js";
import { memberFor } from "../cluster-bootstrap/implementation.js";
import { kubeDeps, type KubeDeps } from "../kit/kube-access.js";
import { dynamicProtocol } from "../kit/protocol.js";
import { KubeVolumeApi, type VolumeApi } from "../volume-release/volume-api.js";
import { scaleInStep, type ClusterScaleInInputs, type ClusterScaleInOutputs } from "./declaration.js";

export type { ClusterScaleInInputs, ClusterScaleInOutputs } from "./declaration.js";

export interface ScaleInDeps {
  kube: KubeDeps;
  volumes: VolumeApi;
}

function realDeps(i: ClusterScaleInInputs): ScaleInDeps {
  return { kube: kubeDeps(i), volumes: new KubeVolumeApi(loadKubeConfig(i.kubeconfig, i.context)) };
}

export async function scaleInOnKubernetes(
  i: ClusterScaleInInputs,
  deps: ScaleInDeps = realDeps(i),
): Promise<ClusterScaleInOutputs> {
  const pods = await discoverPods(deps.kube.podApi, {
    namespace: i.namespace,
    selector: i.selector,
    portsOf: deps.kube.portsOf,
  });
  const wanted = i.primaries * (1 + i.replicasPerPrimary);
  const leaving = pods.filter((p) => p.ordinal === undefined || p.ordinal >= wanted);
  if (leaving.length === 0) return { changed: false, leavingPods: [], deletedClaims: [], steps: [] };
  const kept = pods.filter((p) => !leaving.includes(p));
  const unusable = kept.filter((p) => !p.ready || p.podIP === undefined || p.zone === undefined).map((p) => p.name);
  if (unusable.length > 0)
    throw new Error(
      `ClusterScaleIn: kept pods ${unusable.join(", ")} are not ready (or have no IP or zone); scale-in needs every kept member`,
    );
  const connector = deps.kube.connector(pods);
  let steps: string[];
  try {
    const members = pods.filter((p) => p.podIP !== undefined).map(memberFor);
    const result = await scaleIn({
      members,
      kept: kept.map((p) => p.name),
      primaries: i.primaries,
      replicasPerPrimary: i.replicasPerPrimary,
      connector,
      password: i.password,
      memoryHeadroom: i.memoryHeadroom,
      timeoutMs: i.timeoutMs,
    });
    steps = result.steps;
  } finally {
    await connector.close();
  }
  const claims = await deps.volumes.listClaims(i.namespace);
  const deletedClaims: string[] = [];
  for (const pod of leaving) {
    for (const name of claims.filter((c) => c.name.endsWith(`-${pod.name}`) && !c.deleting).map((c) => c.name)) {
      await deps.volumes.deleteClaim(i.namespace, name);
      deletedClaims.push(name);
    }
  }
  return { changed: true, leavingPods: leaving.map((p) => p.name), deletedClaims, steps };
}

export const { check, create, diff, update } = dynamicProtocol(scaleInStep, {
  run: (i) => scaleInOnKubernetes(i),
  idOf: (i) => `${i.namespace}/${i.selector}`,
});
