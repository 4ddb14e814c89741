/**
 * The TopologyCheck dynamic resource: a thin shell over
 * components/kubernetes/topology-check-on-kubernetes.ts (see ts-module-provider.ts for why a shell).
 */
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import type { TopologyCheckReport } from "../kubernetes/topology-check-on-kubernetes.js";
import type { KubeTargetInputs } from "./target-inputs.js";
import { tsModuleProvider } from "./ts-module-provider.js";

/** The resource's inputs, as the implementation's `parseCheckInputs` reads them. */
export interface TopologyCheckResourceInputs extends KubeTargetInputs {
  mode: pulumi.Input<"cluster" | "replication">;
  expect?: pulumi.Input<{ primaries?: number; replicasPerPrimary?: number; replicas?: number }>;
  replicaLagBytes?: pulumi.Input<number>;
  countKeys?: pulumi.Input<boolean>;
  triggers?: pulumi.Input<unknown[]>;
}

export function topologyCheckProvider(): pulumi.dynamic.ResourceProvider {
  return tsModuleProvider(fileURLToPath(new URL("../kubernetes/topology-check-on-kubernetes.ts", import.meta.url)));
}

export class TopologyCheckResource extends pulumi.dynamic.Resource {
  declare readonly report: pulumi.Output<TopologyCheckReport>;
  declare readonly table: pulumi.Output<string>;

  constructor(name: string, inputs: TopologyCheckResourceInputs, opts?: pulumi.CustomResourceOptions) {
    super(topologyCheckProvider(), name, { ...inputs, report: undefined, table: undefined }, opts);
  }
}
