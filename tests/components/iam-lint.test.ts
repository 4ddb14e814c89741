/**
 * Every IAM policy the builders write (tests/support/iam-policies.ts), through parliament (PyPI,
 * $PARLIAMENT from .ci/setup) with its community auditors: what it reports must be exactly the
 * findings accepted below, each with why. A new finding fails (fix it or accept it with a reason);
 * an accepted finding that no longer appears fails too (drop it).
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { PolicyDocument } from "../../components/aws/iam.js";
import { TEST_QUEUE_POLICY, TEST_ROLES } from "../support/iam-policies.js";

/** Findings accepted, as `<policy> <issue>[ <actions>]`, with the reason. */
const ACCEPTED: Record<string, string> = {
  "controller PERMISSIONS_MANAGEMENT_ACTIONS":
    "Karpenter creates, tags and deletes the instance profiles of its nodes and passes the node role to them (as Karpenter v1.14's CloudFormation); the iam: statements are scoped to the cluster's tags and the node role",
  "controller PRIVILEGE_ESCALATION":
    "iam:PassRole with ec2:RunInstances is how Karpenter launches nodes; PassRole is limited to the node role's ARN and to ec2.amazonaws.com",
  "controller RESOURCE_MISMATCH ec2:RunInstances":
    "RunInstances is granted over several statements by resource type (the cluster's launch templates; instances, volumes and interfaces with the cluster's tag; images, subnets and security groups), as Karpenter's CloudFormation does: each statement names only some of the types the action touches",
  "controller RESOURCE_MISMATCH ec2:CreateFleet,ec2:RunInstances":
    "the same split for the statement that lets CreateFleet and RunInstances create tagged fleets, instances, volumes and interfaces: the images, subnets and security groups they also use are granted in another statement",
  "controller RESOURCE_MISMATCH ssm:GetParameter":
    "the AMI parameters are AWS's public ones, whose ARN has no account (arn:aws:ssm:<region>::parameter/aws/service/*); parliament's format expects one",
  "controller RESOURCE_STAR arc-zonal-shift:GetManagedResource":
    "the action has no resource ARN to name; the statement's condition limits it to the cluster (arc-zonal-shift:ResourceIdentifier)",
};

const PARLIAMENT = process.env.PARLIAMENT;
function parliamentMissing(): string | undefined {
  let why: string | undefined;
  if (PARLIAMENT === undefined || PARLIAMENT === "") why = "PARLIAMENT is not set";
  else
    try {
      accessSync(PARLIAMENT, constants.X_OK);
    } catch {
      why = `PARLIAMENT=${PARLIAMENT} is not executable`;
    }
  if (why === undefined) return undefined;
  why += " (run through .ci/setup, which installs parliament from PyPI)";
  if (process.env.CI === "true") throw new Error(`the IAM lint needs parliament: ${why}`);
  return why;
}

/**
 * parliament 1.6.4's CLI opens the fixed path /tmp/parliament.log for writing before anything else, so a second user
 * on the machine (a CI runner as another user after a root run) makes it crash with exit 1, the same exit as "found
 * something". Its `main` is run here by its own Python with that one path sent to /dev/null.
 */
const PRIVATE_LOG = [
  "import builtins, os, sys",
  "real = builtins.open",
  "builtins.open = lambda f, *a, **k: real(os.devnull if f == '/tmp/parliament.log' else f, *a, **k)",
  "from parliament.cli import main",
  "sys.exit(main(sys.argv))",
].join("\n");

/** The Python that runs $PARLIAMENT (its `#!` line: pip's console scripts name their interpreter). */
function parliamentPython(): string {
  const first = readFileSync(PARLIAMENT as string, "utf8").split("\n")[0] ?? "";
  const m = /^#!\s*(\S+)/.exec(first);
  if (m?.[1] === undefined) throw new Error(`PARLIAMENT=${PARLIAMENT} has no #! line naming its Python`);
  return m[1];
}

/** parliament's findings of one policy, as `<name> <issue>[ <actions>]`. */
function findings(name: string, doc: PolicyDocument): string[] {
  // --string: parliament refuses --file when its stdin is not a terminal.
  const r = spawnSync(
    parliamentPython(),
    ["-c", PRIVATE_LOG, "--string", JSON.stringify(doc), "--json", "--include-community-auditors"],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 },
  );
  // Exit 1 is parliament's "found something": only with findings printed and no Python traceback.
  const crashed = r.stderr.includes("Traceback") || (r.status === 1 && r.stdout.trim() === "");
  if (r.error !== undefined || (r.status !== 0 && r.status !== 1) || crashed)
    throw new Error(`parliament on ${name}: ${r.error?.message ?? `exit ${r.status}: ${r.stderr}`}`);
  return r.stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const f = JSON.parse(l) as { issue: string; detail?: unknown };
      const actions = Array.isArray(f.detail)
        ? [
            ...new Set(
              f.detail.map((d: unknown) => (typeof d === "string" ? d : String((d as { action?: string }).action))),
            ),
          ]
        : [];
      return [name, f.issue, ...(actions.length > 0 ? [actions.sort().join(",")] : [])].join(" ");
    });
}

const missing = parliamentMissing();
describe.skipIf(missing !== undefined)("every IAM policy the builders write, through parliament (real linter)", () => {
  it("reports exactly the accepted findings, each with its reason", () => {
    const policies: Array<[string, PolicyDocument]> = [
      ...TEST_ROLES.flatMap((r) => Object.entries(r.inline)),
      ["interruption-queue", TEST_QUEUE_POLICY],
    ];
    expect(policies.map(([n]) => n)).toEqual(["controller", "backup", "restore", "interruption-queue"]);
    const found = [...new Set(policies.flatMap(([name, doc]) => findings(name, doc)))].sort();
    expect(found).toEqual(Object.keys(ACCEPTED).sort());
  }, 180_000);

  it("reports a policy that grants everything (the lint can fail)", () => {
    const open: PolicyDocument = {
      Version: "2012-10-17",
      Statement: [{ Effect: "Allow", Action: "iam:*", Resource: "*" }],
    };
    expect(findings("open", open).length).toBeGreaterThan(0);
  }, 120_000);
});
