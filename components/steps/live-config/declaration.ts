/**
 * LiveConfig, declared once (see ../kit/step.ts): the release's members and how to reach them
 * (kubeTargetFields), and the live valkey.conf directives (pod/live-config.ts) to set on each. A
 * new list re-runs it; the outputs say what it set, on which members.
 */
import { z } from "zod";
import { LIVE_DIRECTIVES } from "../../../pod/live-config.js";
import { rerun } from "../kit/inputs.js";
import { kubeTargetFields } from "../kit/kube-target.js";
import { declareStep, output, type InputsOf, type OutputsOf } from "../kit/step.js";

export const liveConfigStep = declareStep({
  type: "LiveConfig",
  fields: {
    ...kubeTargetFields,
    /** The members' live directives as their valkey.conf renders them (name, value as CONFIG SET takes it). */
    directives: rerun(
      z.array(z.strictObject({ name: z.enum(LIVE_DIRECTIVES), value: z.string() }), {
        error: `must be a list of { name, value } with name one of ${LIVE_DIRECTIVES.join(", ")}`,
      }),
    ),
  },
  outputs: {
    /** `name value` of each directive set, in order; empty when the step was created (the members started from the file). */
    applied: output<string[]>(),
    /** The pods it was set and confirmed on (CONFIG GET). */
    pods: output<string[]>(),
  },
});

export type LiveConfigInputs = InputsOf<typeof liveConfigStep>;
export type LiveConfigOutputs = OutputsOf<typeof liveConfigStep>;
