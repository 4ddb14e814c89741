/**
 * TopologyCheck: proves during `pulumi up` that a Valkey release has the topology it claims
 * (the core verifier through the chosen connector, zones from pod -> node -> zone label). A
 * failing verdict fails `pulumi up` with the failure codes and the readable table; a passing
 * one becomes the `report` output. Re-runs whenever a step it follows runs again (its
 * `runStamp` changes: the bootstrap, then each benchmark run), whenever another `after` value
 * changes, and whenever `runId` changes, so one check can follow each step.
 */
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { resourceInputs } from "../kit/resource-inputs.js";
import { tsModuleProvider } from "../kit/ts-module-provider.js";
import type { TopologyCheckReport } from "./implementation.js";
import { checkFields, type TopologyCheckFieldArgs } from "./inputs.js";

export type { TopologyCheckReport } from "./implementation.js";

/** A step whose every run yields a new `runStamp` (ClusterBootstrap, BenchmarkResults, TopologyCheck). */
export interface RunStamped {
  readonly runStamp: pulumi.Output<string>;
}

export type TopologyCheckArgs = TopologyCheckFieldArgs & {
  /**
   * Steps this check follows: the check waits for resources and re-runs when any value changes.
   * A resource with a `runStamp` output (a post-deploy step) is followed by that stamp, so each
   * of its runs re-runs the check; any other resource by its URN (i.e. only its creation).
   * @default []
   */
  after?: pulumi.Input<unknown>[];
};

/** What the check follows of one `after` value: a step's run stamp, another resource's URN, or the value. */
export function triggerOf(a: pulumi.Input<unknown>): pulumi.Input<unknown> {
  if (!pulumi.Resource.isInstance(a)) return a;
  const stamp = (a as Partial<RunStamped>).runStamp;
  return pulumi.Output.isInstance(stamp) ? stamp : a.urn;
}

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export function topologyCheckProvider(): pulumi.dynamic.ResourceProvider {
  return tsModuleProvider(fileURLToPath(new URL("./implementation.ts", import.meta.url)));
}

class TopologyCheckResource extends pulumi.dynamic.Resource {
  declare readonly report: pulumi.Output<TopologyCheckReport>;
  declare readonly table: pulumi.Output<string>;
  declare readonly runStamp: pulumi.Output<string>;

  constructor(name: string, args: TopologyCheckFieldArgs & { triggers: pulumi.Input<unknown>[] }, opts?: pulumi.CustomResourceOptions) {
    super(topologyCheckProvider(), name, { ...resourceInputs(checkFields, args), report: undefined, table: undefined, runStamp: undefined }, opts);
  }
}

export class TopologyCheck extends pulumi.ComponentResource {
  /** The passing report, JSON-safe: ok, mode, failures, shards with zones, slot ranges and keys, primaries per zone. */
  readonly report: pulumi.Output<TopologyCheckReport>;
  /** The readable table (formatTopologyReport). */
  readonly table: pulumi.Output<string>;
  /** New each time the check runs. */
  readonly runStamp: pulumi.Output<string>;

  constructor(name: string, args: TopologyCheckArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:checks:TopologyCheck", name, {}, opts);
    const { after = [], ...fields } = args;
    const resources = after.filter((a): a is pulumi.Resource => pulumi.Resource.isInstance(a));
    const run = new TopologyCheckResource(`${name}-run`, { ...fields, triggers: after.map(triggerOf) }, { parent: this, dependsOn: resources });
    this.report = run.report;
    this.table = run.table;
    this.runStamp = run.runStamp;
    this.registerOutputs({ report: this.report, table: this.table, runStamp: this.runStamp });
  }
}
