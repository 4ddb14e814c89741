import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../apps/vbench/cli.js";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vbench-config-"));
});

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

/** Runs `vbench <args>` in-process, capturing stdout and stderr. */
async function vbench(...args: string[]): Promise<Run> {
  let stdout = "";
  let stderr = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  const code = await main(args);
  vi.restoreAllMocks();
  return { code, stdout, stderr };
}

function stackFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const INVALID = `config:
  valkey-on-eks:valkey:
    mode: cluster
    cluster: { primaries: 2, replicasPerPrimary: 0 }
  valkey-on-eks:password: hunter2-do-not-print
`;

describe("vbench config", () => {
  it("exits 0 and prints the resolved config of a shipped stack", async () => {
    const run = await vbench("config", "--file", "stacks/Pulumi.cluster.yaml");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("mode: cluster");
    expect(run.stdout).toContain("ioThreads: 1");
    expect(run.stdout).toContain("pods: 6");
    expect(run.stdout).toContain("# password: missing");
    expect(run.stderr).toContain("warning: password:");
  });

  it("prints the resolved config as JSON with --json", async () => {
    const run = await vbench("config", "--file", "stacks/Pulumi.replication.yaml", "--json");
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as {
      ok: boolean;
      stack: string;
      password: string;
      config: { valkey: { pods: number }; benchmark: { tests: string[] } };
    };
    expect(out.ok).toBe(true);
    expect(out.stack).toBe("replication");
    expect(out.password).toBe("missing");
    expect(out.config.valkey.pods).toBe(4);
    expect(out.config.benchmark.tests).toEqual(["set", "get", "incr"]);
  });

  it("exits 1 with --require-password when the password is missing", async () => {
    const run = await vbench("config", "--file", "stacks/Pulumi.replication.yaml", "--require-password");
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^ {2}password: required/m);
  });

  it("exits 1 and lists every problem by key path on stderr", async () => {
    const run = await vbench("config", "--file", stackFile("Pulumi.bad.yaml", INVALID));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("valkey.cluster.primaries: must be ≥ 3");
    expect(run.stderr).toContain("valkey.cluster.replicasPerPrimary: must be ≥ 1");
    expect(run.stderr).toContain("password: valkey-on-eks:password is stored in plain text");
    expect(run.stderr).not.toContain("hunter2-do-not-print");
  });

  it("with --json, prints { ok: false, errors } on stdout and exits 1", async () => {
    const run = await vbench("config", "--file", stackFile("Pulumi.bad.yaml", INVALID), "--json");
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as { ok: boolean; errors: Array<{ path: string; message: string }> };
    expect(out.ok).toBe(false);
    expect(out.errors.map((e) => e.path).sort()).toEqual([
      "password",
      "valkey.cluster.primaries",
      "valkey.cluster.replicasPerPrimary",
    ]);
    for (const e of out.errors) expect(Object.keys(e).sort()).toEqual(["message", "path"]);
    expect(run.stdout).not.toContain("hunter2-do-not-print");
  });

  it("never prints a secret password", async () => {
    const path = stackFile(
      "Pulumi.secret.yaml",
      "config:\n  valkey-on-eks:password:\n    secure: AAABACIPHERTEXTxyz\n",
    );
    const human = await vbench("config", "--file", path);
    const json = await vbench("config", "--file", path, "--json");
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("# password: secret");
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, password: "secret", warnings: [] });
    for (const run of [human, json]) expect(run.stdout + run.stderr).not.toContain("AAABACIPHERTEXTxyz");
  });

  it("exits 2 for a missing file", async () => {
    const run = await vbench("config", "--file", join(dir, "Pulumi.nope.yaml"));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Pulumi.nope.yaml: no such file");
  });

  it("exits 2 for bad YAML", async () => {
    const run = await vbench(
      "config",
      "--file",
      stackFile("Pulumi.broken.yaml", "config:\n  valkey-on-eks:valkey: { mode: [\n"),
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("not valid YAML");
  });

  it("exits 2 for a file that is not a stack file", async () => {
    const run = await vbench("config", "--file", stackFile("Pulumi.list.yaml", "- a\n- b\n"));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("expected a Pulumi stack file");
  });

  it("exits 2 without --file", async () => {
    const run = await vbench("config");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--file");
  });
});
