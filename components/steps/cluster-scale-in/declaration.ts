/**
 * ClusterScaleIn, declared once (see ../kit/step.ts): the release's pods and how to reach them
 * (kubeTargetFields), the shape the StatefulSet is about to shrink to, and what the scale-in
 * reports. It runs before the StatefulSet changes (components/valkey-cluster.ts).
 */
import { rerun, setting, wholeNumber } from "../kit/inputs.js";
import { kubeTargetFields } from "../kit/kube-target.js";
import { declareStep, output, type InputsOf, type OutputsOf } from "../kit/step.js";
import { z } from "zod";

export const scaleInStep = declareStep({
  type: "ClusterScaleIn",
  fields: {
    ...kubeTargetFields,
    /** P': `valkey.cluster.primaries`, the primaries that stay. */
    primaries: rerun(wholeNumber(1)),
    /** M: `valkey.cluster.replicasPerPrimary` (unchanged: the ClusterShape guard refuses another). */
    replicasPerPrimary: rerun(wholeNumber(0)),
    /** Share of maxmemory a kept primary may fill once the slots arrived. @default 0.8 */
    memoryHeadroom: setting(z.number({ error: "must be a number in (0, 1]" }).gt(0).lte(1).default(0.8)),
  },
  outputs: {
    /** False when no pod was above the shape (a first deployment, the same shape, a scale-up). */
    changed: output<boolean>(),
    /** Pods above P' x (1 + M) that left the cluster (the StatefulSet then deletes them). */
    leavingPods: output<string[]>(),
    /** Their PersistentVolumeClaims, deleted (Kubernetes removes them once the pods are gone). */
    deletedClaims: output<string[]>(),
    /** What the executor did, in order. */
    steps: output<string[]>(),
  },
});

export type ClusterScaleInInputs = InputsOf<typeof scaleInStep>;
export type ClusterScaleInOutputs = OutputsOf<typeof scaleInStep>;
