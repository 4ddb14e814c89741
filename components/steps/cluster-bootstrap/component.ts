/**
 * ClusterBootstrap: forms the cluster-mode Valkey pods into an AZ-aware cluster (P primaries x
 * M replicas, every replica in another zone than its primary) during `pulumi up`, through the
 * core bootstrap executor, and sets each member's `availability-zone` from its pod's zone (pods
 * carry no zone label before Kubernetes 1.35). Its implementation is ./implementation.ts, loaded
 * by the kit's tsx shell. A second `up` with the same inputs changes nothing; adding primaries
 * (with their new pods, the same replicas per primary) scales the running cluster up, moving
 * slots and keys; any other change of shape (fewer primaries, another replica count) fails the
 * update with both shapes named. Each run yields a new `runStamp`: a TopologyCheck `after` it re-runs.
 */
import { defineStep, type StepArgs } from "../kit/define-step.js";
import { bootstrapStep } from "./declaration.js";

export type { PlanSummary, ShardSummary } from "./implementation.js";
export type ClusterBootstrapArgs = StepArgs<typeof bootstrapStep>;

export class ClusterBootstrap extends defineStep(bootstrapStep, {
  implementation: new URL("./implementation.ts", import.meta.url),
  was: { component: "valkey-on-eks:checks:ClusterBootstrap" },
}) {}

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export const clusterBootstrapProvider = () => ClusterBootstrap.provider();
