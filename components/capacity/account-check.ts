/**
 * Pure account checks that only `vbench aws-check` runs (the preview runs the others in
 * preflight.ts): the service-linked roles EKS needs, and where `eks.version` stands in EKS's
 * support window. Each takes what the AWS CLI answered as plain data and returns problems and
 * warnings as messages naming the key, role or version and what to do.
 */
import type { StackConfig } from "../../config/types.js";

export interface CheckVerdict {
  problems: string[];
  warnings: string[];
}

/** A service-linked role the stack needs, by the service that creates and assumes it. */
export interface ServiceLinkedRole {
  /** The AWS service principal (`aws iam create-service-linked-role --aws-service-name`). */
  service: string;
  /** The role's name in a real account (moto names them differently: looked up by path). */
  roleName: string;
  /** What needs it. */
  usedBy: string;
}

/**
 * The service-linked roles the stack's cluster needs: EKS's own (the control plane, Auto Mode's
 * nodes) and, with a system node group, the managed node groups'. Karpenter's NodePool launches
 * On-Demand only (no Spot role).
 */
export function requiredServiceLinkedRoles(config: StackConfig): ServiceLinkedRole[] {
  const eks = { service: "eks.amazonaws.com", roleName: "AWSServiceRoleForAmazonEKS", usedBy: "the EKS cluster" };
  const nodegroup = {
    service: "eks-nodegroup.amazonaws.com",
    roleName: "AWSServiceRoleForAmazonEKSNodegroup",
    usedBy: "the system node group (eks.systemNodes)",
  };
  return config.eks.autoMode ? [eks] : [eks, nodegroup];
}

/** IAM path of a service's linked roles (`aws iam list-roles --path-prefix`). */
export function serviceLinkedRolePath(service: string): string {
  return `/aws-service-role/${service}/`;
}

/**
 * A missing service-linked role is created by the first `up` when the deployer may
 * iam:CreateServiceLinkedRole; without that permission the cluster's creation fails after the
 * VPC is up. So missing is a warning that says both.
 */
export function checkServiceLinkedRoles(
  required: readonly ServiceLinkedRole[],
  found: Readonly<Record<string, { exists: boolean } | { error: string }>>,
): CheckVerdict {
  const warnings = required.flatMap((role) => {
    const probe = found[role.service];
    const create = `aws iam create-service-linked-role --aws-service-name ${role.service}`;
    if (probe === undefined || "error" in probe)
      return [
        `could not list the service-linked role ${role.roleName} (${probe === undefined ? "not asked" : probe.error}); ${role.usedBy} needs it`,
      ];
    return probe.exists
      ? []
      : [
          `service-linked role ${role.roleName} does not exist yet: the first up creates it only if the deployer may iam:CreateServiceLinkedRole (${role.usedBy} needs it); or create it now: ${create}`,
        ];
  });
  return { problems: [], warnings };
}

/** One entry of `aws eks describe-cluster-versions` (the fields read here). */
export interface ClusterVersionInfo {
  clusterVersion: string;
  versionStatus?: string;
  /** Deprecated by EKS in favour of versionStatus; read when versionStatus is absent. */
  status?: string;
  /** An ISO date (CLI output) or epoch seconds (API). */
  endOfStandardSupportDate?: string | number;
  endOfExtendedSupportDate?: string | number;
}

/** Days before the end of standard support from which the check warns. */
export const SUPPORT_WARNING_DAYS = 90;

const asDate = (v: string | number | undefined): Date | undefined => {
  if (v === undefined) return undefined;
  const d = typeof v === "number" ? new Date(v * 1000) : new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d;
};
const day = (d: Date): string => d.toISOString().slice(0, 10);

/**
 * Where `eks.version` stands: not offered or UNSUPPORTED is a problem (EKS creates no such
 * cluster); EXTENDED_SUPPORT is a warning with its price (the control plane bills $0.60/h instead
 * of $0.10/h, which the stack's cost estimate then bills); standard support ending
 * within SUPPORT_WARNING_DAYS is a warning.
 */
export function checkSupportWindow(version: string, versions: readonly ClusterVersionInfo[], now: Date): CheckVerdict {
  const info = versions.find((v) => v.clusterVersion === version);
  const offered = versions.map((v) => v.clusterVersion).join(", ") || "none";
  if (info === undefined)
    return {
      problems: [`eks.version: EKS does not offer ${version} (describe-cluster-versions lists ${offered})`],
      warnings: [],
    };
  const status = (info.versionStatus ?? info.status ?? "").toUpperCase().replace(/-/g, "_");
  const endStandard = asDate(info.endOfStandardSupportDate);
  const endExtended = asDate(info.endOfExtendedSupportDate);
  if (status === "UNSUPPORTED")
    return {
      problems: [`eks.version: ${version} is no longer supported by EKS; pick one of ${offered}`],
      warnings: [],
    };
  if (status === "EXTENDED_SUPPORT")
    return {
      problems: [],
      warnings: [
        `eks.version: ${version} is in EKS extended support${endExtended ? ` until ${day(endExtended)}` : ""}: its control plane bills $0.60/h instead of $0.10/h (the stack's cost estimate bills that too); upgrade to a version in standard support`,
      ],
    };
  if (status !== "STANDARD_SUPPORT")
    return {
      problems: [],
      warnings: [`eks.version: EKS reports ${version} as "${status || "no status"}"; expected STANDARD_SUPPORT`],
    };
  if (endStandard !== undefined && endStandard.getTime() - now.getTime() < SUPPORT_WARNING_DAYS * 86_400_000)
    return {
      problems: [],
      warnings: [
        `eks.version: standard support for ${version} ends ${day(endStandard)}; after that the control plane bills $0.60/h (extended support) until it is upgraded`,
      ],
    };
  return { problems: [], warnings: [] };
}
