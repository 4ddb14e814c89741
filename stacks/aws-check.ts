/**
 * `vbench aws-check`: what an account must have before the first `up` of a stack, read with the
 * AWS CLI and the stack file alone (no Pulumi, nothing created). The same pure checks the preview
 * runs (zones, instance type offerings, the vCPU quota, the AMI release) plus two only this runs
 * (the service-linked roles, where `eks.version` stands in EKS's support window), each one a row:
 * ok, warning or problem, with what to do.
 */
import {
  ON_DEMAND_STANDARD_VCPU_QUOTA,
  checkAmiAlias,
  checkOfferings,
  checkQuota,
  checkZonesAvailable,
  estimateVcpus,
} from "../components/capacity/preflight.js";
import {
  checkServiceLinkedRoles,
  checkSupportWindow,
  requiredServiceLinkedRoles,
  serviceLinkedRolePath,
  type CheckVerdict,
  type ClusterVersionInfo,
} from "../components/capacity/account-check.js";
import type { StackConfig } from "../config/types.js";
import { jsonField as field, type AwsCli } from "./aws-cli.js";
import { probeAmiParameterWith, requiredInstanceTypes } from "./preflight.js";

export interface AccountCheckRow {
  check: "credentials" | "zones" | "instance-types" | "vcpu-quota" | "service-linked-roles" | "eks-version" | "ami";
  verdict: "ok" | "warning" | "problem";
  /** What was found (ok) or every problem and warning, each naming the key and the fix. */
  messages: string[];
}

export interface AccountCheckReport {
  /** The identity the CLI acts as; undefined when the credentials did not work. */
  caller?: string;
  region: string;
  rows: AccountCheckRow[];
}

const rowOf = (check: AccountCheckRow["check"], v: CheckVerdict, ok: string): AccountCheckRow =>
  v.problems.length > 0
    ? { check, verdict: "problem", messages: [...v.problems, ...v.warnings] }
    : v.warnings.length > 0
      ? { check, verdict: "warning", messages: v.warnings }
      : { check, verdict: "ok", messages: [ok] };

/** Every check of the stack's account; stops after the credentials row when they do not work. */
export function collectAwsCheck(config: StackConfig, cli: AwsCli, now: Date = new Date()): AccountCheckReport {
  const { region, zones } = config.aws;
  const identity = cli(["sts", "get-caller-identity"]);
  if (!identity.ok)
    return {
      region,
      rows: [
        { check: "credentials", verdict: "problem", messages: [`aws sts get-caller-identity: ${identity.error}`] },
      ],
    };
  const caller = String(field(identity.json, "Arn"));
  const rows: AccountCheckRow[] = [{ check: "credentials", verdict: "ok", messages: [`acting as ${caller}`] }];

  const az = cli(["ec2", "describe-availability-zones", "--filters", "Name=state,Values=available"]);
  const available = az.ok
    ? ((field(az.json, "AvailabilityZones") as unknown[] | undefined)?.map((z) => String(field(z, "ZoneName"))) ?? [])
    : [];
  rows.push(
    az.ok
      ? rowOf("zones", { problems: checkZonesAvailable(region, zones, available), warnings: [] }, zones.join(", "))
      : { check: "zones", verdict: "problem", messages: [`aws ec2 describe-availability-zones: ${az.error}`] },
  );
  rows.push(instanceTypesRow(config, cli, available));
  rows.push(quotaRow(config, cli));
  rows.push(serviceLinkedRolesRow(config, cli));
  rows.push(supportWindowRow(config, cli, now));
  if (!config.eks.autoMode) {
    const { amiAlias } = config.karpenter;
    const ami = checkAmiAlias(
      amiAlias,
      config.eks.version,
      region,
      probeAmiParameterWith(cli, amiAlias, config.eks.version),
    );
    rows.push(
      rowOf(
        "ami",
        {
          problems: ami.error === undefined ? [] : [ami.error],
          warnings: ami.warning === undefined ? [] : [ami.warning],
        },
        `karpenter.amiAlias ${amiAlias} exists for ${config.eks.version}`,
      ),
    );
  }
  return { caller, region, rows };
}

function instanceTypesRow(config: StackConfig, cli: AwsCli, available: readonly string[]): AccountCheckRow {
  const required = requiredInstanceTypes(config);
  const types = [...new Set(required.flatMap((r) => r.types))];
  const offered: Record<string, string[]> = {};
  for (const zone of config.aws.zones.filter((z) => available.includes(z))) {
    const r = cli([
      "ec2",
      "describe-instance-type-offerings",
      "--location-type",
      "availability-zone",
      "--filters",
      `Name=location,Values=${zone}`,
      `Name=instance-type,Values=${types.join(",")}`,
    ]);
    if (!r.ok)
      return {
        check: "instance-types",
        verdict: "problem",
        messages: [`aws ec2 describe-instance-type-offerings: ${r.error}`],
      };
    offered[zone] = ((field(r.json, "InstanceTypeOfferings") as unknown[] | undefined) ?? []).map((o) =>
      String(field(o, "InstanceType")),
    );
  }
  const checked = Object.keys(offered);
  if (checked.length === 0)
    return {
      check: "instance-types",
      verdict: "warning",
      messages: [`not checked: none of aws.zones (${config.aws.zones.join(", ")}) is an available zone read above`],
    };
  const skipped = config.aws.zones.filter((z) => !checked.includes(z));
  return rowOf(
    "instance-types",
    { problems: checkOfferings(required, offered), warnings: [] },
    `${types.join(", ")} offered in ${checked.join(", ")}${skipped.length > 0 ? ` (not checked in ${skipped.join(", ")}: not available)` : ""}`,
  );
}

function quotaRow(config: StackConfig, cli: AwsCli): AccountCheckRow {
  const estimate = estimateVcpus(config);
  const r = cli([
    "service-quotas",
    "get-service-quota",
    "--service-code",
    "ec2",
    "--quota-code",
    ON_DEMAND_STANDARD_VCPU_QUOTA,
  ]);
  const value = r.ok ? field(field(r.json, "Quota"), "Value") : undefined;
  if (typeof value !== "number")
    return {
      check: "vcpu-quota",
      verdict: "warning",
      messages: [
        `could not read EC2 quota ${ON_DEMAND_STANDARD_VCPU_QUOTA} in ${config.aws.region} (${r.ok ? "no Quota.Value in the answer" : r.error}); this stack needs ${estimate.min}–${estimate.max} vCPUs of it`,
      ],
    };
  const v = checkQuota(config.aws.region, value, estimate);
  return rowOf(
    "vcpu-quota",
    { problems: v.error === undefined ? [] : [v.error], warnings: v.warning === undefined ? [] : [v.warning] },
    `EC2 quota ${ON_DEMAND_STANDARD_VCPU_QUOTA} is ${value} vCPUs; this stack needs ${estimate.min}–${estimate.max}`,
  );
}

function serviceLinkedRolesRow(config: StackConfig, cli: AwsCli): AccountCheckRow {
  const required = requiredServiceLinkedRoles(config);
  const found = Object.fromEntries(
    required.map((role) => {
      const r = cli(["iam", "list-roles", "--path-prefix", serviceLinkedRolePath(role.service)]);
      const roles = r.ok ? field(r.json, "Roles") : undefined;
      return [role.service, r.ok ? { exists: Array.isArray(roles) && roles.length > 0 } : { error: r.error }];
    }),
  );
  return rowOf(
    "service-linked-roles",
    checkServiceLinkedRoles(required, found),
    required.map((r) => r.roleName).join(", "),
  );
}

function supportWindowRow(config: StackConfig, cli: AwsCli, now: Date): AccountCheckRow {
  const version = config.eks.version;
  const r = cli(["eks", "describe-cluster-versions", "--cluster-versions", version]);
  const list = r.ok ? field(r.json, "clusterVersions") : undefined;
  if (!Array.isArray(list))
    return {
      check: "eks-version",
      verdict: "warning",
      messages: [
        `could not read EKS's support window for eks.version ${version} (${r.ok ? "no clusterVersions in the answer" : r.error}); the stack's cost estimate, which asks the same at preview, then assumes standard support ($0.10/h) and says so`,
      ],
    };
  const versions = list.filter((v): v is ClusterVersionInfo => typeof field(v, "clusterVersion") === "string");
  return rowOf("eks-version", checkSupportWindow(version, versions, now), `${version} is in standard support`);
}

/** Exit code of a report: 1 when any row is a problem. */
export function awsCheckFailed(report: AccountCheckReport): boolean {
  return report.rows.some((r) => r.verdict === "problem");
}

/** The report as lines: one per row and message. */
export function renderAwsCheck(report: AccountCheckReport): string {
  const mark = { ok: "ok     ", warning: "WARNING", problem: "PROBLEM" } as const;
  const head = `aws-check in ${report.region}${report.caller === undefined ? "" : ` as ${report.caller}`}`;
  const lines = report.rows.flatMap((r) =>
    r.messages.map((m, i) => `${i === 0 ? mark[r.verdict] : "       "} ${r.check}: ${m}`),
  );
  return [head, ...lines].join("\n");
}
