/**
 * The inputs the steps that read the cluster share, declared once: how `pulumi up` reaches the
 * API server (kubeAccessFields) and where the release's pods are and how to reach them
 * (kubeTargetFields). A step spreads them into its own fields (steps/<step>/declaration.ts).
 */
import type { CheckConnector } from "../../../config/types.js";
import { nonEmptyString, oneOf, rerun, secret, setting, wholeNumber } from "./inputs.js";

export const CONNECTOR_KINDS = ["port-forward", "direct"] as const satisfies readonly CheckConnector[];

/** How `pulumi up` reaches the cluster's API server. */
export const kubeAccessFields = {
  /** Kubeconfig of the cluster (secret). */
  kubeconfig: secret(nonEmptyString()),
  /** Kubeconfig context; the kubeconfig's current context when absent. */
  context: rerun(nonEmptyString().optional()),
};

/** Where the release's Valkey pods are and how `pulumi up` reaches them. */
export const kubeTargetFields = {
  ...kubeAccessFields,
  /** Namespace of the release's Valkey pods. */
  namespace: rerun(nonEmptyString()),
  /** Label selector of the release's Valkey pods, e.g. `app.kubernetes.io/instance=valkey`. */
  selector: rerun(nonEmptyString()),
  /** How `pulumi up` reaches the pods. */
  connector: rerun(oneOf(CONNECTOR_KINDS).default("port-forward")),
  /** The Valkey password (secret); absent when Valkey runs without auth. */
  password: secret(nonEmptyString().optional()),
  /** Headless Service of the pods' DNS names; each pod's spec.subdomain when absent. */
  headlessService: rerun(nonEmptyString().optional()),
  /** Upper bound of each wait, in ms. */
  timeoutMs: setting(wholeNumber(1).optional()),
};
