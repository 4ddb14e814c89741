/**
 * FailureDrill: runs the configured failure drills during `pulumi up`, after the steps it follows
 * (`after`: the benchmark results and the topology check after them): per fault an in-cluster
 * load Job, the fault through the Kubernetes API, the verifier until the topology heals, and the
 * figures. A topology that does not heal within `timeoutS` fails `pulumi up` naming the fault;
 * lost WAIT-confirmed writes do not, they show as `ok: false` in `drills`. Re-runs whenever a step
 * it follows runs again (its `runStamp`), whenever a drill setting changes, and whenever `runId`
 * changes. The load's ConfigMap and Job are created and deleted through the API by the step
 * itself (they live for one drill), not as Pulumi resources.
 */
import { defineStep, type StepArgs } from "../kit/define-step.js";
import { drillStep } from "./declaration.js";

export type { DeployedDrill } from "./implementation.js";
export type FailureDrillArgs = StepArgs<typeof drillStep>;

export class FailureDrill extends defineStep(drillStep, {
  implementation: new URL("./implementation.ts", import.meta.url),
  was: { component: "valkey-on-eks:checks:FailureDrill" },
}) {}

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export const failureDrillProvider = () => FailureDrill.provider();
