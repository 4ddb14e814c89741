/**
 * ClusterBootstrap: forms the cluster-mode Valkey pods into an AZ-aware cluster (P primaries x
 * M replicas, every replica in another zone than its primary) during `pulumi up`, through the
 * core bootstrap executor. A dynamic resource (no provider plugin) whose implementation is
 * components/kubernetes/bootstrap-on-kubernetes.ts. A second `up` with the same inputs changes
 * nothing; changing the shape of a formed cluster fails (scaling is not supported yet).
 */
import * as pulumi from "@pulumi/pulumi";
import { ClusterBootstrapResource } from "./dynamic/cluster-bootstrap-provider.js";
import { targetInputs, type KubeTargetArgs } from "./dynamic/target-inputs.js";
import type { PlanSummary } from "./kubernetes/bootstrap-on-kubernetes.js";

export type { PlanSummary, ShardSummary } from "./kubernetes/bootstrap-on-kubernetes.js";

export interface ClusterBootstrapArgs extends KubeTargetArgs {
  /** Pods the selector must find, all ready and scheduled in a zone (usually P x (1 + M)). */
  expectedPods: pulumi.Input<number>;
  /** P: primaries (shards). */
  primaries: pulumi.Input<number>;
  /** M: replicas per primary. */
  replicasPerPrimary: pulumi.Input<number>;
  /** Upper bound of each wait (gossip, slot propagation, replica sync), ms. @default 60000 */
  timeoutMs?: pulumi.Input<number>;
}

export class ClusterBootstrap extends pulumi.ComponentResource {
  /** The cluster after the bootstrap: shards with primary pod + zone, replicas + zones, slot ranges. */
  readonly plan: pulumi.Output<PlanSummary>;
  /** False when the pods already formed a healthy cluster of this shape. */
  readonly changed: pulumi.Output<boolean>;
  /** Pod name -> cluster node id. */
  readonly nodeIds: pulumi.Output<Record<string, string>>;

  constructor(name: string, args: ClusterBootstrapArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:checks:ClusterBootstrap", name, {}, opts);
    const run = new ClusterBootstrapResource(
      `${name}-run`,
      {
        ...targetInputs(args),
        expectedPods: args.expectedPods,
        primaries: args.primaries,
        replicasPerPrimary: args.replicasPerPrimary,
        timeoutMs: args.timeoutMs,
      },
      { parent: this },
    );
    this.plan = run.plan;
    this.changed = run.changed;
    this.nodeIds = run.nodeIds;
    this.registerOutputs({ plan: this.plan, changed: this.changed, nodeIds: this.nodeIds });
  }
}
