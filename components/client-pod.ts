/**
 * The pod-spec pieces every run-once client Job pod shares (the benchmark Job,
 * components/benchmark/job-manifest.ts; the drill's load Job, components/steps/failure-drill/load-job.ts):
 * no service-account token, no service links, the placement's selector and tolerations, never on a
 * Valkey (data-plane) node, and the restricted security profile for the image's non-root `uid`.
 */
import { DATA_PLANE_LABEL, type Placement } from "./shared.js";
import type { TopologySpreadConstraint } from "./valkey/k8s-types.js";
import { HOSTNAME_LABEL, toKubeTolerations } from "./valkey/pod-placement.js";

/** The `node` user of the official Node images (the drill's load pod, the benchmark Job running a mix). */
export const NODE_IMAGE_UID = 1000;

/** A required pod anti-affinity term (kept off the nodes running the pods it selects). */
export interface AntiAffinityTerm {
  labelSelector: { matchLabels: Record<string, string> };
  topologyKey: string;
}

export interface ClientPodOptions {
  /** Required anti-affinity terms added after "not on a Valkey node". */
  antiAffinity?: readonly AntiAffinityTerm[];
  /** Set on the pod when given (the spec's keys keep their order: the benchmark Job's name hashes it). */
  topologySpreadConstraints?: TopologySpreadConstraint[];
}

/** The client pod's spec without its containers and volumes. */
export function clientPodBase(placement: Placement, uid: number, o: ClientPodOptions = {}) {
  return {
    restartPolicy: "Never",
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    nodeSelector: { ...placement.nodeSelector },
    tolerations: toKubeTolerations(placement),
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { labelSelector: { matchLabels: { [DATA_PLANE_LABEL]: "true" } }, topologyKey: HOSTNAME_LABEL },
          ...(o.antiAffinity ?? []),
        ],
      },
    },
    ...(o.topologySpreadConstraints === undefined ? {} : { topologySpreadConstraints: o.topologySpreadConstraints }),
    securityContext: {
      runAsNonRoot: true,
      runAsUser: uid,
      runAsGroup: uid,
      seccompProfile: { type: "RuntimeDefault" },
    },
  };
}

/** The client container's security context (restricted profile, read-only root). */
export function clientContainerSecurity() {
  return { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } };
}
