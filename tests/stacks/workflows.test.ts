/**
 * The GitHub workflows: actionlint (built by .ci/toolchain/install.sh) accepts every one of them,
 * and they do what the README says: ci runs the README's test command on pushes and pull requests
 * with the toolchain cache keyed like install.sh's directories, preview every EKS stack on pull
 * requests with the diff commented on the PR, `up` on main for the chosen stacks; the deploying
 * workflows take Node and the Pulumi CLI versions from versions.env.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { versions as manifest } from "../../versions.js";
import { toolchainDirs } from "../support/toolchain.js";

const ACTIONLINT = join(toolchainDirs.actionlint, "bin", "actionlint");
const WORKFLOWS = readdirSync(".github/workflows")
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();

interface Step {
  id?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}

interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, { "runs-on"?: string; "strategy"?: { matrix?: { stack?: unknown } }; "steps"?: Step[] }>;
}

const load = (name: string): Workflow => parse(readFileSync(join(".github/workflows", name), "utf8")) as Workflow;

describe("GitHub workflows", () => {
  it("all pass actionlint", () => {
    expect(WORKFLOWS).toEqual(["ci.yml", "preview.yml", "up.yml"]);
    if (!existsSync(ACTIONLINT))
      throw new Error(`actionlint not found at ${ACTIONLINT}: run \`bash .ci/toolchain/install.sh\``);
    const out = execFileSync(ACTIONLINT, ["-color=false", ...WORKFLOWS.map((f) => join(".github/workflows", f))], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    expect(out.trim()).toBe("");
  });

  it("ci runs the README's test command on pushes and pull requests, with the cache keyed like install.sh", () => {
    const w = load("ci.yml");
    expect(Object.keys(w.on).sort()).toEqual(["pull_request", "push"]);
    const job = w.jobs.test;
    expect(job?.["runs-on"]).toMatch(/^ubuntu-/);
    const steps = job?.steps ?? [];
    const runs = steps.map((s) => s.run);
    // .ci/run is the README's command, and the workflow runs .ci/run.
    expect(readFileSync("README.md", "utf8")).toContain("bash .ci/setup --pods npm test");
    expect(readFileSync(".ci/run", "utf8")).toMatch(/^exec bash \.ci\/setup --pods npm test$/m);
    const test = steps.find((s) => s.run === "bash .ci/run");
    expect(test).toBeDefined();
    // Karpenter's CRDs and the Kubernetes schemas come from install.sh (before the tests), not from
    // a shared/ folder: no step or env var refers to one.
    const install = runs.indexOf("bash .ci/toolchain/install.sh --prune");
    expect(install).toBeGreaterThanOrEqual(0);
    expect(install).toBeLessThan(steps.indexOf(test as Step));
    expect(test?.env).toBeUndefined();
    expect(readFileSync(".github/workflows/ci.yml", "utf8")).not.toMatch(
      /VALKEY_ON_EKS_SHARED|karpenter-crds\.sh|shared\//,
    );
    // The cache: install.sh's whole cache root, keyed by every input of install.sh's keys.
    const cache = steps.find((s) => s.uses?.startsWith("actions/cache@"));
    expect(cache?.with?.path).toBe("~/.cache/valkey-on-eks");
    expect(cache?.with?.key).toBe(
      "valkey-on-eks-${{ runner.os }}-${{ hashFiles('versions.env', '.ci/toolchain/*/go.mod', '.ci/toolchain/*/go.sum') }}",
    );
  });

  it("preview and up take Node and the Pulumi CLI versions from versions.env", () => {
    for (const name of ["preview.yml", "up.yml"]) {
      const jobs = Object.values(load(name).jobs).filter((j) =>
        j.steps?.some((s) => s.uses?.startsWith("pulumi/actions@")),
      );
      expect(jobs.length, name).toBe(1);
      for (const job of jobs) {
        const steps = job.steps ?? [];
        const pulumi = steps.find((s) => s.uses?.startsWith("pulumi/actions@")) as Step;
        const versions = steps.find((s) => s.id === "versions");
        expect(versions?.run, name).toContain("versions.env");
        expect(steps.indexOf(versions as Step), name).toBeLessThan(
          steps.findIndex((s) => s.uses?.startsWith("actions/setup-node@")),
        );
        expect(steps.find((s) => s.uses?.startsWith("actions/setup-node@"))?.with?.["node-version"], name).toBe(
          "${{ steps.versions.outputs.NODE_VERSION }}",
        );
        expect(pulumi.with?.["pulumi-version"], name).toBe("${{ steps.versions.outputs.PULUMI_VERSION }}");
        // The step's script, run as the runner runs it, gives those outputs their manifest values.
        const dir = mkdtempSync(join(tmpdir(), "vbench-workflow-"));
        try {
          const out = join(dir, "output");
          execFileSync("bash", ["-e", "-c", versions?.run ?? "false"], {
            env: { ...process.env, GITHUB_OUTPUT: out },
            stdio: "ignore",
          });
          const outputs: Record<string, string> = Object.fromEntries(
            readFileSync(out, "utf8")
              .trim()
              .split("\n")
              .map((l): [string, string] => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
          );
          expect(outputs, name).toMatchObject({
            NODE_VERSION: manifest.NODE_VERSION,
            PULUMI_VERSION: manifest.PULUMI_VERSION.replace(/^v/, ""),
          });
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }
  });

  it("preview runs pulumi preview per EKS stack on pull requests and comments the diff", () => {
    const w = load("preview.yml");
    expect(Object.keys(w.on)).toEqual(["pull_request"]);
    const job = w.jobs.preview;
    expect(job?.strategy?.matrix?.stack).toEqual(["replication", "cluster"]);
    const step = job?.steps?.find((s) => s.uses?.startsWith("pulumi/actions@"));
    expect(step?.with).toMatchObject({ "command": "preview", "comment-on-pr": true });
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
