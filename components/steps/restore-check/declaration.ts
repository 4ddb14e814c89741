/**
 * RestoreCheck, declared once (see ../kit/step.ts): the release's pods and how to reach them, the
 * mode and the Sentinels (to find the primaries as the TopologyCheck does), and `restore.from`.
 * Only `from` re-runs it: it checks one restore, once; every other field is read as a setting.
 */
import { nonEmptyString, asSettings, rerun } from "../kit/inputs.js";
import { kubeTargetFields } from "../kit/kube-target.js";
import { declareStep, output, type InputsOf, type OutputsOf } from "../kit/step.js";
import { verifierFields } from "../topology-check/declaration.js";
import type { RestoreCheckReport } from "./types.js";

export const restoreCheckStep = declareStep({
  type: "RestoreCheck",
  fields: {
    ...asSettings({ ...kubeTargetFields, mode: verifierFields.mode, sentinel: verifierFields.sentinel }),
    /** `restore.from` (s3://bucket/prefix/<backup id>): the restore to check; a new value checks again. */
    from: rerun(nonEmptyString()),
  },
  outputs: {
    /**
     * The backup id and, per shard, its slots, the manifest's keys and expires, DBSIZE on its primary and the primary.
     */
    report: output<RestoreCheckReport>(),
  },
});

export type RestoreCheckInputs = InputsOf<typeof restoreCheckStep>;
export type RestoreCheckOutputs = OutputsOf<typeof restoreCheckStep>;
