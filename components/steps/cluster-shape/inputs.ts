/**
 * ClusterShape's inputs, declared once (see ../kit/inputs.ts): the cluster-mode shape as the
 * stack config sets it. The guard's stored inputs are the last shape `pulumi up` applied.
 */
import { parserOf, rerun, wholeNumber, type ArgsOf, type Parsed } from "../kit/inputs.js";

export const shapeFields = {
  /** P: `valkey.cluster.primaries`. */
  primaries: rerun(wholeNumber(1)),
  /** M: `valkey.cluster.replicasPerPrimary`. */
  replicasPerPrimary: rerun(wholeNumber(0)),
};

export type ClusterShapeArgs = ArgsOf<typeof shapeFields>;
export type ClusterShapeInputs = Parsed<typeof shapeFields>;

export const parseShapeInputs = parserOf(shapeFields);
