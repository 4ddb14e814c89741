/**
 * The ClusterBootstrap dynamic resource: a thin shell over
 * components/kubernetes/bootstrap-on-kubernetes.ts (see ts-module-provider.ts for why a shell).
 */
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import type { PlanSummary } from "../kubernetes/bootstrap-on-kubernetes.js";
import type { KubeTargetInputs } from "./target-inputs.js";
import { tsModuleProvider } from "./ts-module-provider.js";

/** The resource's inputs, as the implementation's `parseBootstrapInputs` reads them. */
export interface ClusterBootstrapResourceInputs extends KubeTargetInputs {
  expectedPods: pulumi.Input<number>;
  primaries: pulumi.Input<number>;
  replicasPerPrimary: pulumi.Input<number>;
  timeoutMs?: pulumi.Input<number>;
}

export function clusterBootstrapProvider(): pulumi.dynamic.ResourceProvider {
  return tsModuleProvider(fileURLToPath(new URL("../kubernetes/bootstrap-on-kubernetes.ts", import.meta.url)));
}

export class ClusterBootstrapResource extends pulumi.dynamic.Resource {
  declare readonly plan: pulumi.Output<PlanSummary>;
  declare readonly changed: pulumi.Output<boolean>;
  declare readonly nodeIds: pulumi.Output<Record<string, string>>;

  constructor(name: string, inputs: ClusterBootstrapResourceInputs, opts?: pulumi.CustomResourceOptions) {
    super(clusterBootstrapProvider(), name, { ...inputs, plan: undefined, changed: undefined, nodeIds: undefined }, opts);
  }
}
