/**
 * RollingRestart: after `pulumi up` changed the pod template of the release's OnDelete
 * StatefulSets (an image, a restart-only setting, resources), restarts the members and Sentinels
 * one at a time in the order their live roles demand: Sentinels, then per shard the replicas,
 * then the primary's hand-over (./implementation.ts, core/roll/roll-plan.ts). Re-runs when
 * `templateHash` changes; with every pod already at the new revision it touches nothing.
 */
import { defineStep, type StepArgs } from "../kit/define-step.js";
import { rollStep } from "./declaration.js";

export type RollingRestartArgs = StepArgs<typeof rollStep>;

export class RollingRestart extends defineStep(rollStep, {
  implementation: new URL("./implementation.ts", import.meta.url),
}) {}

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export const rollingRestartProvider = () => RollingRestart.provider();
