/**
 * Which EKS control-plane rate a stack's estimate bills: standard ($0.10/h) or extended ($0.60/h) support, from
 * what EKS lists for `eks.version` (describe-cluster-versions; the `aws.eks.getClusterVersions` invoke in
 * stacks/cost.ts). The rate is the estimate's largest fixed term after the nodes, so where EKS was not asked or
 * did not say, the line says the standard rate is assumed, and why.
 */
import type { CostInputs } from "./cost-model.js";

/** One version as EKS lists it (versionStatus; `status` is its deprecated name). */
export interface ListedVersion {
  clusterVersion: string;
  versionStatus?: string;
  status?: string;
}

export type ControlPlaneSupport = Pick<CostInputs, "controlPlaneSupport" | "controlPlaneBasis">;

/** The rate for `version` from EKS's list, or from the error of asking for it. */
export function controlPlaneSupportOf(
  version: string,
  listed: readonly ListedVersion[] | { error: string },
): ControlPlaneSupport {
  if (!Array.isArray(listed))
    return {
      controlPlaneSupport: "standard",
      controlPlaneBasis: `assumed, EKS's support window for ${version} not read: ${(listed as { error: string }).error}`,
    };
  const info = (listed as readonly ListedVersion[]).find((v) => v.clusterVersion === version);
  const status = (info?.versionStatus ?? info?.status ?? "").toUpperCase().replace(/-/g, "_");
  if (status === "EXTENDED_SUPPORT")
    return { controlPlaneSupport: "extended", controlPlaneBasis: `EKS lists ${version} in extended support` };
  if (status === "STANDARD_SUPPORT")
    return { controlPlaneSupport: "standard", controlPlaneBasis: `EKS lists ${version} in standard support` };
  return {
    controlPlaneSupport: "standard",
    controlPlaneBasis:
      info === undefined
        ? `assumed, EKS does not list ${version}`
        : `assumed, EKS lists ${version} as "${status || "no status"}"`,
  };
}
