/**
 * The inputs every check resource shares (where the release's pods are and how `pulumi up`
 * reaches them), as component args and as dynamic-resource inputs: kubeconfig and password
 * are made secret whatever they were, the connector gets its default.
 */
import * as pulumi from "@pulumi/pulumi";
import type { CheckConnector } from "../../stacks/config-types.js";

export interface KubeTargetArgs {
  /** Namespace of the release's Valkey pods. */
  namespace: pulumi.Input<string>;
  /** Label selector of the release's Valkey pods, e.g. `app.kubernetes.io/instance=valkey`. */
  selector: pulumi.Input<string>;
  /** How `pulumi up` reaches the pods. @default "port-forward" */
  connector?: pulumi.Input<CheckConnector>;
  /** Kubeconfig of the cluster (made secret here whatever it was). */
  kubeconfig: pulumi.Input<string>;
  /** The Valkey password (made secret here); undefined when Valkey runs without auth. */
  password?: pulumi.Input<string>;
  /** Kubeconfig context. @default the kubeconfig's current context */
  context?: pulumi.Input<string>;
  /** Headless Service of the pods' DNS names. @default each pod's spec.subdomain */
  headlessService?: pulumi.Input<string>;
}

/** The same as resource inputs: connector set, secrets wrapped. */
export type KubeTargetInputs = KubeTargetArgs & { connector: pulumi.Input<CheckConnector> };

export function targetInputs(a: KubeTargetArgs): KubeTargetInputs {
  return {
    namespace: a.namespace,
    selector: a.selector,
    connector: a.connector ?? "port-forward",
    kubeconfig: pulumi.secret(a.kubeconfig),
    password: a.password === undefined ? undefined : pulumi.secret(a.password),
    context: a.context,
    headlessService: a.headlessService,
  };
}
