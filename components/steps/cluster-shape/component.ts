/**
 * ClusterShape: the guard that makes `pulumi preview` (and `up`, before any resource changes)
 * refuse a cluster shape the running cluster cannot be moved to: fewer primaries, or another
 * replicas-per-primary (./implementation.ts says why). Its inputs are the shape; its stored
 * inputs are the last applied shape, which the engine's Check compares with the new one. The
 * cluster's StatefulSet depends on it (components/valkey-cluster.ts), so when the Check refuses,
 * the StatefulSet is never registered and no pod is deleted.
 */
import { defineStep, type StepArgs } from "../kit/define-step.js";
import { shapeStep } from "./declaration.js";

export type ClusterShapeArgs = StepArgs<typeof shapeStep>;

// Was one dynamic resource `pulumi-nodejs:dynamic/checks:ClusterShape` named `name`.
export class ClusterShape extends defineStep(shapeStep, {
  implementation: new URL("./implementation.ts", import.meta.url),
  was: { resource: "pulumi-nodejs:dynamic/checks:ClusterShape" },
}) {}

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export const clusterShapeProvider = () => ClusterShape.provider();
