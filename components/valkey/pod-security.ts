/**
 * The hardening every pod of a release shares (Valkey members, Sentinels, HAProxy): no
 * service-account token (no pod talks to the API server), no service environment links, a
 * non-root user and group with the RuntimeDefault seccomp profile, and containers that cannot
 * escalate, write their root filesystem or keep a capability.
 */
import type { Container, PodSpec } from "./k8s-types.js";

/** The pod-level fields for a pod running as `uid`; `fsGroupChangePolicy` for pods with a data volume. */
export function hardenedPod(
  uid: number,
  terminationGracePeriodSeconds: number,
  fsGroupChangePolicy?: "OnRootMismatch",
): Pick<
  PodSpec,
  "automountServiceAccountToken" | "enableServiceLinks" | "terminationGracePeriodSeconds" | "securityContext"
> {
  return {
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    terminationGracePeriodSeconds,
    securityContext: {
      runAsUser: uid,
      runAsGroup: uid,
      runAsNonRoot: true,
      fsGroup: uid,
      ...(fsGroupChangePolicy === undefined ? {} : { fsGroupChangePolicy }),
      seccompProfile: { type: "RuntimeDefault" },
    },
  };
}

/** A container's securityContext: no privilege escalation, read-only root filesystem, every capability dropped. */
export function restrictedContainer(): NonNullable<Container["securityContext"]> {
  return { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } };
}
