/**
 * FailureDrill: runs the configured failure drills during `pulumi up`, after the steps it follows
 * (the benchmark results and the topology check after them): per fault an in-cluster load Job,
 * the fault through the Kubernetes API, the verifier until the topology heals, and the figures.
 * A topology that does not heal within `timeoutS` fails `pulumi up` naming the fault; lost
 * WAIT-confirmed writes do not, they show as `ok: false` in `drills`. Re-runs whenever a step it
 * follows runs again (its `runStamp`), whenever a drill setting changes, and whenever `runId`
 * changes. The load's ConfigMap and Job are created and deleted through the API by the step
 * itself (they live for one drill), not as Pulumi resources.
 */
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { resourceInputs } from "../kit/resource-inputs.js";
import { tsModuleProvider } from "../kit/ts-module-provider.js";
import { triggerOf } from "../topology-check/component.js";
import type { DeployedDrill } from "./implementation.js";
import { drillFields, type FailureDrillFieldArgs } from "./inputs.js";

export type { DeployedDrill } from "./implementation.js";

export type FailureDrillArgs = FailureDrillFieldArgs & {
  /** Steps the drills follow (each one's runStamp re-runs them). @default [] */
  after?: pulumi.Input<unknown>[];
};

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export function failureDrillProvider(): pulumi.dynamic.ResourceProvider {
  return tsModuleProvider(fileURLToPath(new URL("./implementation.ts", import.meta.url)));
}

class FailureDrillResource extends pulumi.dynamic.Resource {
  declare readonly drills: pulumi.Output<DeployedDrill[]>;
  declare readonly csv: pulumi.Output<string>;
  declare readonly note: pulumi.Output<string>;
  declare readonly runStamp: pulumi.Output<string>;

  constructor(name: string, args: FailureDrillFieldArgs & { triggers: pulumi.Input<unknown>[] }, opts?: pulumi.CustomResourceOptions) {
    super(
      failureDrillProvider(),
      name,
      { ...resourceInputs(drillFields, args), drills: undefined, csv: undefined, note: undefined, runStamp: undefined },
      opts,
    );
  }
}

export class FailureDrill extends pulumi.ComponentResource {
  /** One row per fault, in order: the local drills' figures (recoveryMs, writeOutageMs, lost writes, latencies). */
  readonly drills: pulumi.Output<DeployedDrill[]>;
  /** drills.csv (renderDrillsCsv). */
  readonly csv: pulumi.Output<string>;
  /** Which clock each time comes from. */
  readonly note: pulumi.Output<string>;
  /** New each time the drills run. */
  readonly runStamp: pulumi.Output<string>;

  constructor(name: string, args: FailureDrillArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:checks:FailureDrill", name, {}, opts);
    const { after = [], ...fields } = args;
    const resources = after.filter((a): a is pulumi.Resource => pulumi.Resource.isInstance(a));
    const run = new FailureDrillResource(`${name}-run`, { ...fields, triggers: after.map(triggerOf) }, { parent: this, dependsOn: resources });
    this.drills = run.drills;
    this.csv = run.csv;
    this.note = run.note;
    this.runStamp = run.runStamp;
    this.registerOutputs({ drills: this.drills, csv: this.csv, note: this.note, runStamp: this.runStamp });
  }
}
