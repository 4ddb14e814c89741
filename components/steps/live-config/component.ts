/**
 * LiveConfig: sets the live valkey.conf directives (pod/live-config.ts: maxmemory-policy,
 * appendfsync, ...) on every running member with `CONFIG SET`, no restart (./implementation.ts).
 * Re-runs when the directives change; the program places it after the RollingRestart step.
 */
import { defineStep, type StepArgs } from "../kit/define-step.js";
import { liveConfigStep } from "./declaration.js";

export type LiveConfigArgs = StepArgs<typeof liveConfigStep>;

export class LiveConfig extends defineStep(liveConfigStep, { implementation: new URL("./implementation.ts", import.meta.url) }) {}

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export const liveConfigProvider = () => LiveConfig.provider();
