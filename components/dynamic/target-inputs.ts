/**
 * The inputs every check resource shares (where the release's pods are and how `pulumi up`
 * reaches them), as component args and as dynamic-resource inputs: kubeconfig and password
 * are made secret whatever they were, the connector gets its default. KubeAccessArgs, the
 * cluster's API server alone, is what every dynamic resource reading the cluster takes.
 */
import * as pulumi from "@pulumi/pulumi";
import type { CheckConnector } from "../../config/types.js";

/** How `pulumi up` reaches the cluster's API server. */
export interface KubeAccessArgs {
  /** Kubeconfig of the cluster (made secret here whatever it was). */
  kubeconfig: pulumi.Input<string>;
  /** Kubeconfig context. @default the kubeconfig's current context */
  context?: pulumi.Input<string>;
}

/** The same as resource inputs: the kubeconfig a secret. */
export function kubeAccessInputs(a: KubeAccessArgs): KubeAccessArgs {
  return { kubeconfig: pulumi.secret(a.kubeconfig), context: a.context };
}

export interface KubeTargetArgs extends KubeAccessArgs {
  /** Namespace of the release's Valkey pods. */
  namespace: pulumi.Input<string>;
  /** Label selector of the release's Valkey pods, e.g. `app.kubernetes.io/instance=valkey`. */
  selector: pulumi.Input<string>;
  /** How `pulumi up` reaches the pods. @default "port-forward" */
  connector?: pulumi.Input<CheckConnector>;
  /** The Valkey password (made secret here); undefined when Valkey runs without auth. */
  password?: pulumi.Input<string>;
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
    ...kubeAccessInputs(a),
    password: a.password === undefined ? undefined : pulumi.secret(a.password),
    headlessService: a.headlessService,
  };
}
