/**
 * RollingRestart, declared once (see ../kit/step.ts): the release's OnDelete StatefulSets, the
 * hash of their pod templates (a new one is a roll), what the verifier needs between steps, and
 * the roll's steps with their times.
 */
import { z } from "zod";
import type { RollStepTiming } from "../../../core/roll/rolling-restart.js";
import { nonEmptyString, rerun, setting, wholeNumber } from "../kit/inputs.js";
import { declareStep, output, type InputsOf, type OutputsOf } from "../kit/step.js";
import { verifierFields } from "../topology-check/declaration.js";

export const rollStep = declareStep({
  type: "RollingRestart",
  fields: {
    ...verifierFields,
    /**
     * The StatefulSets whose pods it restarts (updateStrategy OnDelete): the members, and the Sentinels in replication
     * mode.
     */
    statefulSets: rerun(
      z
        .array(nonEmptyString(), { error: "must be a list of StatefulSet names" })
        .min(1, { error: "must name at least one StatefulSet" }),
    ),
    /** Hash of those StatefulSets' pod templates (components/valkey/rollout.ts): a new value is a roll. */
    templateHash: rerun(nonEmptyString()),
    /**
     * Longest wait for one step: a pod evicted (its PodDisruptionBudget may refuse for a while), back at the new
     * revision and Ready, and the verifier passing again. @default 600
     */
    stepTimeoutS: setting(wholeNumber(1).default(600)),
    /**
     * Replication mode: the HAProxy pods (label selector) and their status port. Between steps the
     * roll also waits until every one of them counts every Sentinel naming the primary
     * (`/sentinels`), so a Sentinel restart never leaves the write endpoint short of a majority
     * while it still resolves a restarted Sentinel's old pod IP. @default none (cluster mode)
     */
    proxy: setting(
      z
        .object(
          { selector: nonEmptyString(), statusPort: wholeNumber(1) },
          { error: "must be an object { selector, statusPort }" },
        )
        .optional(),
    ),
    /** How often pods and the verifier are polled, ms. @default 2000 */
    pollMs: setting(wholeNumber(1).default(2000)),
  },
  outputs: {
    /**
     * Each step of the last roll (restart a Sentinel / a replica / a primary, or a CLUSTER FAILOVER) with its start and
     * duration; empty when nothing needed a restart.
     */
    steps: output<RollStepTiming[]>(),
    /** The pods restarted, in order. */
    restartedPods: output<string[]>(),
    /** ms from the roll's start until the verifier passed on every restarted pod (zones included). */
    totalMs: output<number>(),
  },
});

export type RollingRestartInputs = InputsOf<typeof rollStep>;
export type RollingRestartOutputs = OutputsOf<typeof rollStep>;
