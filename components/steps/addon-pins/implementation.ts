/**
 * AddonPins' run: the versions it stores are EKS's defaults as resolved when it runs, with the
 * config's own versions over them. It runs at creation and when `eks.version` or
 * `eks.addonVersions` changes, never because EKS published a new default (./declaration.ts).
 */
import { dynamicProtocol } from "../kit/protocol.js";
import { addonPinsStep, type AddonPinsInputs } from "./declaration.js";

/** The versions to store: resolved, then the overrides. */
export function pinnedVersions(i: AddonPinsInputs): { versions: Record<string, string> } {
  return { versions: { ...i.resolved, ...i.overrides } };
}

export const { check, create, diff, update } = dynamicProtocol(addonPinsStep, {
  run: (i) => Promise.resolve(pinnedVersions(i)),
  idOf: (i) => `addons-${i.kubernetesVersion}`,
});
