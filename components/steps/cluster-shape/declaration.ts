/**
 * ClusterShape, declared once (see ../kit/step.ts): the cluster-mode shape as the stack config
 * sets it, and the pod count it lets through. The guard's stored inputs are the last shape
 * `pulumi up` applied.
 */
import { z } from "zod";
import { rerun, setting, wholeNumber } from "../kit/inputs.js";
import { declareStep, output, type InputsOf } from "../kit/step.js";

export const shapeStep = declareStep({
  type: "ClusterShape",
  fields: {
    /** P: `valkey.cluster.primaries`. */
    primaries: rerun(wholeNumber(1)),
    /** M: `valkey.cluster.replicasPerPrimary`. */
    replicasPerPrimary: rerun(wholeNumber(0)),
    /** Whether a ClusterScaleIn step runs before the StatefulSet shrinks (then fewer primaries pass). @default false */
    scaleIn: setting(z.boolean({ error: "must be true or false" }).default(false)),
  },
  outputs: {
    /** primaries x (1 + replicasPerPrimary): the pods of the shape this guard let through. */
    pods: output<number>(),
  },
});

export type ClusterShapeInputs = InputsOf<typeof shapeStep>;
