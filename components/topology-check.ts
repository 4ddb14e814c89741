/**
 * TopologyCheck: proves during `pulumi up` that a Valkey release has the topology it claims
 * (the core verifier through the chosen connector, zones from pod -> node -> zone label). A
 * failing verdict fails `pulumi up` with the failure codes and the readable table; a passing
 * one becomes the `report` output. Re-runs whenever an `after` value changes (e.g. the
 * bootstrap's node ids, then the benchmark run), so one check can follow each step.
 */
import * as pulumi from "@pulumi/pulumi";
import { targetInputs, type KubeTargetArgs } from "./dynamic/target-inputs.js";
import { TopologyCheckResource } from "./dynamic/topology-check-provider.js";
import type { TopologyCheckReport } from "./kubernetes/topology-check-on-kubernetes.js";

export type { TopologyCheckReport } from "./kubernetes/topology-check-on-kubernetes.js";

/** In replication mode the pod labelled `valkey-on-eks/role=primary` is the seed (else the lowest ordinal). */
export interface TopologyCheckArgs extends KubeTargetArgs {
  mode: pulumi.Input<"cluster" | "replication">;
  /** Expected shape (SHAPE_MISMATCH / REPLICA_COUNT when different). @default {} (not checked) */
  expect?: pulumi.Input<{ primaries?: number; replicasPerPrimary?: number; replicas?: number }>;
  /** Replication mode: largest acceptable replica lag in bytes. @default 1048576 */
  replicaLagBytes?: pulumi.Input<number>;
  /** Count keys (DBSIZE) per primary. @default true */
  countKeys?: pulumi.Input<boolean>;
  /**
   * Steps this check follows: the check waits for them and re-runs when any value changes.
   * Resources are waited for and tracked by URN. @default []
   */
  after?: pulumi.Input<unknown>[];
}

export class TopologyCheck extends pulumi.ComponentResource {
  /** The passing report, JSON-safe: ok, mode, failures, shards with zones, slot ranges and keys, primaries per zone. */
  readonly report: pulumi.Output<TopologyCheckReport>;
  /** The readable table (formatTopologyReport). */
  readonly table: pulumi.Output<string>;

  constructor(name: string, args: TopologyCheckArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:checks:TopologyCheck", name, {}, opts);
    const after = args.after ?? [];
    const resources = after.filter((a): a is pulumi.Resource => pulumi.Resource.isInstance(a));
    const triggers = after.map((a) => (pulumi.Resource.isInstance(a) ? a.urn : a));
    const run = new TopologyCheckResource(
      `${name}-run`,
      {
        ...targetInputs(args),
        mode: args.mode,
        expect: args.expect,
        replicaLagBytes: args.replicaLagBytes,
        countKeys: args.countKeys ?? true,
        triggers,
      },
      { parent: this, dependsOn: resources },
    );
    this.report = run.report;
    this.table = run.table;
    this.registerOutputs({ report: this.report, table: this.table });
  }
}
