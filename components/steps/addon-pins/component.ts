/**
 * AddonPins: the EKS add-ons' versions, resolved once and kept in the stack's state (./declaration.ts
 * says why). EksCluster hands its `versions` to pulumi-eks's VPC CNI and kube-proxy add-ons and to
 * its own (Pod Identity agent, EBS CSI driver, CoreDNS).
 */
import { defineStep, type StepArgs } from "../kit/define-step.js";
import { addonPinsStep } from "./declaration.js";

export type AddonPinsArgs = StepArgs<typeof addonPinsStep>;

export class AddonPins extends defineStep(addonPinsStep, {
  implementation: new URL("./implementation.ts", import.meta.url),
}) {}

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export const addonPinsProvider = () => AddonPins.provider();
