/**
 * ClusterScaleIn: before the cluster's StatefulSet shrinks (valkey.cluster.primaries lowered),
 * moves the slots of the pods above the new shape to the pods that stay, re-pairs replicas
 * across zones, makes every member forget the leaving ones and deletes their volumes' claims
 * (./implementation.ts). ValkeyCluster creates it after its ClusterShape guard and makes the
 * StatefulSet depend on it, so no pod goes before its data has moved. With nothing above the
 * shape it does nothing. Each run yields a new `runStamp`.
 */
import { defineStep, type StepArgs } from "../kit/define-step.js";
import { scaleInStep } from "./declaration.js";

export type ClusterScaleInArgs = StepArgs<typeof scaleInStep>;

export class ClusterScaleIn extends defineStep(scaleInStep, {
  implementation: new URL("./implementation.ts", import.meta.url),
}) {}

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export const clusterScaleInProvider = () => ClusterScaleIn.provider();
