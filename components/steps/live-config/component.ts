/**
 * LiveConfig: after `pulumi up` changed LIVE valkey.conf directives (maxmemory-policy, maxmemory,
 * persistence, fencing, cluster-node-timeout: pod/conf-directives.ts), which are not in the
 * members' pod-template hash and so roll nothing, sets them on every running member with
 * `CONFIG SET` and confirms each with `CONFIG GET` (./implementation.ts,
 * core/roll/live-config.ts). Acts on an update only (created, the members started from the
 * file). The program places it after RollingRestart (a restarted pod already read the new file;
 * CONFIG SET of the same value changes nothing). Re-runs when `directives` changes.
 */
import { defineStep, type StepArgs } from "../kit/define-step.js";
import { liveConfigStep } from "./declaration.js";

export type LiveConfigArgs = StepArgs<typeof liveConfigStep>;

export class LiveConfig extends defineStep(liveConfigStep, {
  implementation: new URL("./implementation.ts", import.meta.url),
}) {}

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export const liveConfigProvider = () => LiveConfig.provider();
