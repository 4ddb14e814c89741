/**
 * LiveConfig, declared once (see ../kit/step.ts): the release's members and how to reach them
 * (kubeTargetFields), and the members' LIVE valkey.conf directives (pod/conf-directives.ts) with
 * their rendered values (components/valkey/rollout.ts `Rollout.live`): a change of any of them
 * re-runs the step. The outputs say what it set, on which members.
 */
import { z } from "zod";
import { nonEmptyString, rerun } from "../kit/inputs.js";
import { kubeTargetFields } from "../kit/kube-target.js";
import { declareStep, output, type InputsOf, type OutputsOf } from "../kit/step.js";

export const liveConfigStep = declareStep({
  type: "LiveConfig",
  fields: {
    ...kubeTargetFields,
    /**
     * The members' LIVE valkey.conf directives and their values as CONFIG SET takes them (quotes removed); a RESTART or
     * unknown key is refused at preview.
     */
    directives: rerun(
      z.record(nonEmptyString(), z.string({ error: "each value must be a string" }), {
        error: "must be an object of directive → value",
      }),
    ),
  },
  outputs: {
    /**
     * The directives set and confirmed (CONFIG GET) on every member, sorted; empty when the step was created (the
     * members started from the file).
     */
    keys: output<string[]>(),
    /** The member pods they were set on; empty when the step was created. */
    pods: output<string[]>(),
  },
});

export type LiveConfigInputs = InputsOf<typeof liveConfigStep>;
export type LiveConfigOutputs = OutputsOf<typeof liveConfigStep>;
