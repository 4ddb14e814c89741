/**
 * VolumeRelease: on `pulumi destroy`, deletes the Valkey release's PVCs and waits until their
 * PersistentVolumes (and so the EBS disks behind them) are gone, before anything the CSI driver
 * needs is deleted. A dynamic resource that does nothing on create/update but record the
 * namespace, selector and cluster access (./implementation.ts).
 *
 * Ordering is the caller's (stacks/program.ts): this resource depends on the namespace and on
 * everything the platform provides (EBS CSI add-on, node groups, Karpenter and its NodePool), and
 * the Valkey release depends on it. The engine deletes dependents first, so destroy runs
 * Valkey → VolumeRelease (the wait) → namespace → platform.
 */
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { resourceInputs } from "../kit/resource-inputs.js";
import { tsModuleProvider } from "../kit/ts-module-provider.js";
import { volumeReleaseFields, type VolumeReleaseArgs } from "./inputs.js";

export type { VolumeReleaseArgs } from "./inputs.js";

/** The dynamic provider: the kit's shell over ./implementation.ts, whose `destroy` runs on delete. */
export function volumeReleaseProvider(): pulumi.dynamic.ResourceProvider {
  return tsModuleProvider(fileURLToPath(new URL("./implementation.ts", import.meta.url)), undefined, { undoes: true });
}

export class VolumeRelease extends pulumi.dynamic.Resource {
  declare readonly namespace: pulumi.Output<string>;
  declare readonly selector: pulumi.Output<string>;
  declare readonly runStamp: pulumi.Output<string>;

  constructor(name: string, args: VolumeReleaseArgs, opts?: pulumi.CustomResourceOptions) {
    // The kubeconfig is stored for the delete: kept secret in the state whatever the engine infers.
    const options = { ...opts, additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), "kubeconfig"] };
    super(volumeReleaseProvider(), name, { ...resourceInputs(volumeReleaseFields, args), runStamp: undefined }, options, "storage", "VolumeRelease");
  }
}
