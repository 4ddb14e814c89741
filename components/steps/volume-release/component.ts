/**
 * VolumeRelease: on `pulumi destroy`, deletes the Valkey release's PVCs and waits until their
 * PersistentVolumes (and so the EBS disks behind them) are gone, before anything the CSI driver
 * needs is deleted. Does nothing on create/update but record the namespace, selector and cluster
 * access (./implementation.ts, whose `destroy` runs on delete: `undoes`).
 *
 * Ordering is the caller's (stacks/program.ts): this step depends on the namespace and on
 * everything the platform provides (EBS CSI add-on, node groups, Karpenter and its NodePool), and
 * the Valkey release depends on it. The engine deletes dependents first, so destroy runs
 * Valkey → VolumeRelease (the wait) → namespace → platform.
 */
import { defineStep, type StepArgs } from "../kit/define-step.js";
import { volumeReleaseStep } from "./declaration.js";

export type VolumeReleaseArgs = StepArgs<typeof volumeReleaseStep>;

// Was one dynamic resource `pulumi-nodejs:dynamic/storage:VolumeRelease` named `name`.
export class VolumeRelease extends defineStep(volumeReleaseStep, {
  implementation: new URL("./implementation.ts", import.meta.url),
  undoes: true,
  // The kubeconfig is stored for the delete: kept secret in the state whatever the engine infers.
  secretOutputs: ["kubeconfig"],
  was: { resource: "pulumi-nodejs:dynamic/storage:VolumeRelease" },
}) {}

/** The dynamic provider: the kit's shell over ./implementation.ts, whose `destroy` runs on delete. */
export const volumeReleaseProvider = () => VolumeRelease.provider();
