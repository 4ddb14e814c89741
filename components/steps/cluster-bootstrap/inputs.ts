/**
 * ClusterBootstrap's inputs, declared once: the component's args, the provider's parser, the
 * keys whose change re-runs the bootstrap and the secret keys all come from these fields
 * (see ../kit/inputs.ts).
 */
import { parserOf, rerun, wholeNumber, type ArgsOf, type Parsed } from "../kit/inputs.js";
import { kubeTargetFields } from "../kit/kube-target.js";

export const bootstrapFields = {
  ...kubeTargetFields,
  /** Pods the selector must find, all ready and scheduled in a zone (usually P x (1 + M)). */
  expectedPods: rerun(wholeNumber(1)),
  /** P: primaries (shards). */
  primaries: rerun(wholeNumber(1)),
  /** M: replicas per primary. */
  replicasPerPrimary: rerun(wholeNumber(0)),
};

/**
 * The component's args. kubeconfig and password are made secret whatever they were; connector
 * defaults to "port-forward"; timeoutMs bounds each wait (gossip, slot propagation, replica
 * sync; the core's default 60000 when absent).
 */
export type ClusterBootstrapArgs = ArgsOf<typeof bootstrapFields>;
/** The inputs as the implementation reads them. */
export type ClusterBootstrapInputs = Parsed<typeof bootstrapFields>;

export const parseBootstrapInputs = parserOf(bootstrapFields);
