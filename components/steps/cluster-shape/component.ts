/**
 * ClusterShape: the guard that makes `pulumi preview` (and `up`, before any resource changes)
 * refuse a cluster shape the running cluster cannot be moved to: fewer primaries, or another
 * replicas-per-primary (./implementation.ts says why). A dynamic resource whose inputs are the
 * shape; its stored inputs are the last applied shape, which the engine's Check compares with
 * the new one. The cluster's StatefulSet depends on it (components/valkey-cluster.ts), so when
 * the Check refuses, the StatefulSet is never registered and no pod is deleted.
 */
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { resourceInputs } from "../kit/resource-inputs.js";
import { tsModuleProvider } from "../kit/ts-module-provider.js";
import { shapeFields, type ClusterShapeArgs } from "./inputs.js";

export type { ClusterShapeArgs } from "./inputs.js";

/** The dynamic provider: the kit's shell over ./implementation.ts. */
export function clusterShapeProvider(): pulumi.dynamic.ResourceProvider {
  return tsModuleProvider(fileURLToPath(new URL("./implementation.ts", import.meta.url)));
}

export class ClusterShape extends pulumi.dynamic.Resource {
  /** primaries x (1 + replicasPerPrimary): the pods of the shape this guard let through. */
  declare readonly pods: pulumi.Output<number>;
  declare readonly runStamp: pulumi.Output<string>;

  constructor(name: string, args: ClusterShapeArgs, opts?: pulumi.CustomResourceOptions) {
    super(clusterShapeProvider(), name, { ...resourceInputs(shapeFields, args), pods: undefined, runStamp: undefined }, opts, "checks", "ClusterShape");
  }
}
