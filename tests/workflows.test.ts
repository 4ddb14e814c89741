/**
 * The GitHub workflows: actionlint (built by .ci/toolchain/install.sh) accepts them, and they
 * do what the README says: preview every EKS stack on pull requests with the diff commented on
 * the PR, `up` on main for the chosen stacks.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const ACTIONLINT = join(process.env.VALKEY_ON_EKS_TOOLCHAIN ?? join(homedir(), ".cache/valkey-on-eks/toolchain"), "actionlint-v1.7.12", "bin", "actionlint");

interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, { strategy?: { matrix?: { stack?: unknown } }; steps?: { uses?: string; with?: Record<string, unknown> }[] }>;
}

const load = (name: string): Workflow => parse(readFileSync(join(".github/workflows", name), "utf8")) as Workflow;

describe("GitHub workflows", () => {
  it("pass actionlint", () => {
    if (!existsSync(ACTIONLINT)) throw new Error(`actionlint not found at ${ACTIONLINT}: run \`bash .ci/toolchain/install.sh\``);
    const out = execFileSync(ACTIONLINT, ["-color=false", ".github/workflows/preview.yml", ".github/workflows/up.yml"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    expect(out.trim()).toBe("");
  });

  it("preview runs pulumi preview per EKS stack on pull requests and comments the diff", () => {
    const w = load("preview.yml");
    expect(Object.keys(w.on)).toEqual(["pull_request"]);
    const job = w.jobs.preview;
    expect(job?.strategy?.matrix?.stack).toEqual(["replication", "cluster"]);
    const step = job?.steps?.find((s) => s.uses?.startsWith("pulumi/actions@"));
    expect(step?.with).toMatchObject({ command: "preview", "comment-on-pr": true });
    for (const stack of ["replication", "cluster"]) expect(existsSync(`stacks/Pulumi.${stack}.yaml`)).toBe(true);
  });

  it("up runs pulumi up on main for the chosen stacks", () => {
    const w = load("up.yml");
    expect(w.on).toHaveProperty("push");
    expect(w.on).toHaveProperty("workflow_dispatch");
    const step = w.jobs.up?.steps?.find((s) => s.uses?.startsWith("pulumi/actions@"));
    expect(step?.with).toMatchObject({ command: "up" });
  });
});
