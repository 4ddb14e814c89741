/**
 * ClusterBootstrap: forms the cluster-mode Valkey pods into an AZ-aware cluster (P primaries x
 * M replicas, every replica in another zone than its primary) during `pulumi up`, through the
 * core bootstrap executor, and sets each member's `availability-zone` from its pod's zone (pods
 * carry no zone label before Kubernetes 1.35). A dynamic resource (no provider plugin) whose implementation is
 * ./implementation.ts, loaded by the kit's tsx shell. A second `up` with the same inputs changes
 * nothing; adding primaries (with their new pods, the same replicas per primary) scales the
 * running cluster up, moving slots and keys; any other change of shape (fewer primaries, another
 * replica count) fails the update with both shapes named.
 */
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { resourceInputs } from "../kit/resource-inputs.js";
import { tsModuleProvider } from "../kit/ts-module-provider.js";
import type { PlanSummary } from "./implementation.js";
import { bootstrapFields, type ClusterBootstrapArgs } from "./inputs.js";

export type { PlanSummary, ShardSummary } from "./implementation.js";
export type { ClusterBootstrapArgs } from "./inputs.js";

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export function clusterBootstrapProvider(): pulumi.dynamic.ResourceProvider {
  return tsModuleProvider(fileURLToPath(new URL("./implementation.ts", import.meta.url)));
}

class ClusterBootstrapResource extends pulumi.dynamic.Resource {
  declare readonly plan: pulumi.Output<PlanSummary>;
  declare readonly changed: pulumi.Output<boolean>;
  declare readonly nodeIds: pulumi.Output<Record<string, string>>;
  declare readonly runStamp: pulumi.Output<string>;

  constructor(name: string, args: ClusterBootstrapArgs, opts?: pulumi.CustomResourceOptions) {
    const outputs = { plan: undefined, changed: undefined, nodeIds: undefined, runStamp: undefined };
    super(clusterBootstrapProvider(), name, { ...resourceInputs(bootstrapFields, args), ...outputs }, opts);
  }
}

export class ClusterBootstrap extends pulumi.ComponentResource {
  /** The cluster after the bootstrap: shards with primary pod + zone, replicas + zones, slot ranges. */
  readonly plan: pulumi.Output<PlanSummary>;
  /** False when the pods already formed a healthy cluster of this shape. */
  readonly changed: pulumi.Output<boolean>;
  /** Pod name -> cluster node id. */
  readonly nodeIds: pulumi.Output<Record<string, string>>;
  /** New each time the bootstrap runs: a TopologyCheck `after` this one re-runs when it changes. */
  readonly runStamp: pulumi.Output<string>;

  constructor(name: string, args: ClusterBootstrapArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:checks:ClusterBootstrap", name, {}, opts);
    const run = new ClusterBootstrapResource(`${name}-run`, args, { parent: this });
    this.plan = run.plan;
    this.changed = run.changed;
    this.nodeIds = run.nodeIds;
    this.runStamp = run.runStamp;
    this.registerOutputs({ plan: this.plan, changed: this.changed, nodeIds: this.nodeIds, runStamp: this.runStamp });
  }
}
