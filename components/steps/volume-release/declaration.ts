/**
 * VolumeRelease, declared once (see ../kit/step.ts): how the delete reaches the API server,
 * whose PVCs it deletes (namespace + label selector), and how long it waits for their volumes;
 * no outputs but the recorded inputs. Nothing here re-runs anything on `up` (the resource does nothing then); a change
 * of
 * namespace/selector/context is recorded by an update, so the delete acts on the latest ones.
 */
import { nonEmptyString, rerun, setting, wholeNumber } from "../kit/inputs.js";
import { kubeAccessFields } from "../kit/kube-target.js";
import { declareStep, type InputsOf } from "../kit/step.js";

/** How long the delete waits, by default, for the released volumes to be gone: 10 minutes. */
export const DEFAULT_RELEASE_TIMEOUT_MS = 600_000;

export const volumeReleaseStep = declareStep({
  type: "VolumeRelease",
  fields: {
    ...kubeAccessFields,
    /** Namespace of the release's PersistentVolumeClaims. */
    namespace: rerun(nonEmptyString()),
    /** Label selector of the release's PVCs, e.g. `app.kubernetes.io/instance=valkey`. */
    selector: rerun(nonEmptyString()),
    /** Upper bound of the wait for the volumes on delete, in ms. */
    timeoutMs: setting(wholeNumber(1).default(DEFAULT_RELEASE_TIMEOUT_MS)),
    /** Interval between two looks at the volumes, in ms. */
    pollMs: setting(wholeNumber(1).default(2_000)),
  },
  outputs: {},
});

export type VolumeReleaseInputs = InputsOf<typeof volumeReleaseStep>;
