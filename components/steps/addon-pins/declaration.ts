/**
 * AddonPins, declared once (see ../kit/step.ts): the version each EKS add-on of the cluster is
 * installed at, stored in the stack's state. EKS's default version for a Kubernetes version is
 * asked at every preview (`resolved`), but it is a setting: a new default does not re-run the
 * step, so the stored versions, and the add-ons, stay where they are until `eks.version` or
 * `eks.addonVersions` changes. pulumi-eks alone would re-resolve its VPC CNI and kube-proxy add-ons
 * to the most recent version at every preview (v4.3.0 nodejs/eks/cluster/cluster.ts and
 * addons/cni-addon.ts: `getAddonVersionOutput({ mostRecent: true })`), so an unrelated `up` could
 * roll aws-node and kube-proxy on the Valkey nodes.
 */
import { z } from "zod";
import { nonEmptyString, rerun, setting } from "../kit/inputs.js";
import { declareStep, output, type InputsOf } from "../kit/step.js";

const versionMap = () => z.record(z.string(), nonEmptyString(), { error: "must map add-on names to versions" });

export const addonPinsStep = declareStep({
  type: "AddonPins",
  fields: {
    /** `eks.version`: its change re-resolves every add-on (an upgrade moves them with the cluster). */
    kubernetesVersion: rerun(nonEmptyString()),
    /** `eks.addonVersions`: the config's versions, over EKS's defaults; a change re-runs. @default {} */
    overrides: rerun(versionMap().default({})),
    /** EKS's default version of each add-on for `kubernetesVersion`, asked at this preview; read when the step runs. */
    resolved: setting(versionMap()),
  },
  outputs: {
    /** The version each add-on is installed at, by the stack's add-on key (`vpcCni`, `kubeProxy`, …). */
    versions: output<Record<string, string>>(),
  },
});

export type AddonPinsInputs = InputsOf<typeof addonPinsStep>;
