/**
 * TopologyCheck: proves during `pulumi up` that a Valkey release has the topology it claims
 * (the core verifier through the chosen connector, zones from pod -> node -> zone label). A
 * failing verdict fails `pulumi up` with the failure codes and the readable table; a passing
 * one becomes the `report` output. Re-runs whenever a step it follows (`after`) runs again (its
 * `runStamp` changes: the bootstrap, then each benchmark run), whenever another `after` value
 * changes, and whenever `runId` changes, so one check can follow each step.
 */
import { defineStep, type StepArgs } from "../kit/define-step.js";
import { checkStep } from "./declaration.js";

export type TopologyCheckArgs = StepArgs<typeof checkStep>;

export class TopologyCheck extends defineStep(checkStep, {
  implementation: new URL("./implementation.ts", import.meta.url),
  was: { component: "valkey-on-eks:checks:TopologyCheck" },
}) {}

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export const topologyCheckProvider = () => TopologyCheck.provider();
