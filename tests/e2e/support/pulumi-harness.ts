/**
 * The real Pulumi engine for end-to-end tests: the CLI built by .ci/toolchain/install.sh, a
 * temporary `file://` backend and PULUMI_HOME, a random stack name, a test passphrase, the
 * Kubernetes provider plugin registered from its built binary, and the dynamic-provider host
 * on PATH. Programs run inline (`runProgram` from stacks/program.ts), so no Node language
 * host is needed. `E2eStack.dispose()` always destroys and removes the stack.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import {
  LocalWorkspace,
  PulumiCommand,
  type EngineEvent,
  type OutputMap,
  type Stack,
  type UpResult,
} from "@pulumi/pulumi/automation/index.js";
import main from "../../../stacks/index.js";
import { versions } from "../../../versions.js";
import { TOOLCHAIN, toolchainDirs } from "../../support/toolchain.js";

/** From versions.env, without the leading "v" (as `pulumi version` and plugin versions print it). */
export const PULUMI_VERSION = versions.PULUMI_VERSION.replace(/^v/, "");
export const KUBERNETES_PROVIDER_VERSION = versions.K8S_PROVIDER_VERSION;
export const PASSPHRASE = "valkey-on-eks-e2e-passphrase";

const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

export const toolchainPaths = {
  pulumiRoot: toolchainDirs.pulumi,
  pulumi: join(toolchainDirs.pulumi, "bin", "pulumi"),
  kubernetesProvider: join(toolchainDirs["pulumi-kubernetes"], "bin", "pulumi-resource-kubernetes"),
};

/** Throws naming the install script when a toolchain binary is missing (never a silent skip). */
export function requireToolchain(options: { kubernetes?: boolean } = {}): void {
  const missing = Object.entries(toolchainPaths)
    .filter(([k]) => k !== "pulumiRoot" && (k !== "kubernetesProvider" || options.kubernetes !== false))
    .filter(([, p]) => !existsSync(p))
    .map(([, p]) => p);
  if (missing.length > 0) {
    throw new Error(
      `end-to-end toolchain missing (${missing.join(", ")}): run \`bash .ci/toolchain/install.sh\` (cached under ${TOOLCHAIN})`,
    );
  }
}

export interface PulumiEnv {
  dir: string;
  envVars: Record<string, string>;
  command: PulumiCommand;
  dispose(): void;
}

/**
 * A fresh backend + PULUMI_HOME with the Kubernetes plugin (unless `kubernetes: false`, for
 * programs of dynamic resources only) and the dynamic-provider host.
 */
export async function createPulumiEnv(options: { kubernetes?: boolean } = {}): Promise<PulumiEnv> {
  requireToolchain(options);
  const dir = mkdtempSync(join(tmpdir(), "vbench-e2e-pulumi-"));
  const bin = join(dir, "bin");
  mkdirSync(bin);
  // Dynamic providers run in `pulumi-resource-pulumi-nodejs`: node on this project's SDK.
  const host = join(bin, "pulumi-resource-pulumi-nodejs");
  writeFileSync(
    host,
    `#!/bin/sh\nexec "${process.execPath}" "${join(PROJECT_ROOT, "node_modules/@pulumi/pulumi/cmd/dynamic-provider")}" "$@"\n`,
  );
  chmodSync(host, 0o755);
  const envVars: Record<string, string> = {
    PULUMI_BACKEND_URL: `file://${join(dir, "backend")}`,
    PULUMI_HOME: join(dir, "home"),
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PATH: `${bin}:${dirname(toolchainPaths.pulumi)}:${process.env.PATH ?? ""}`,
  };
  mkdirSync(join(dir, "backend"));
  if (options.kubernetes !== false) {
    execFileSync(
      toolchainPaths.pulumi,
      [
        "plugin",
        "install",
        "resource",
        "kubernetes",
        KUBERNETES_PROVIDER_VERSION,
        "--file",
        toolchainPaths.kubernetesProvider,
      ],
      {
        env: { ...process.env, ...envVars },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
  }
  const command = await PulumiCommand.get({ root: toolchainPaths.pulumiRoot, skipVersionCheck: true });
  return { dir, envVars, command, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface E2eStack {
  stack: Stack;
  name: string;
  /** The last up's outputs. */
  outputs: OutputMap | undefined;
  /** Everything the engine printed, for failure messages. */
  log: string[];
  dispose(): Promise<void>;
}

/**
 * An inline stack with a random name whose config is `config` (keys below the `valkey-on-eks:`
 * namespace, set exactly as `pulumi config set` would) and, when given, the password as a
 * secret. The program is the real entry point (stacks/index.ts: load + validate config, then
 * runProgram) unless `program` replaces it.
 */
export async function createStack(
  env: PulumiEnv,
  config: Record<string, unknown>,
  options: { password?: string; program?: () => Promise<Record<string, unknown>> } = {},
): Promise<E2eStack> {
  const name = `e2e${Math.random().toString(36).slice(2, 10)}`;
  const log: string[] = [];
  const program = options.program ?? (() => Promise.resolve(main()));
  const stack = await LocalWorkspace.createOrSelectStack(
    { stackName: name, projectName: "valkey-on-eks", program },
    {
      pulumiCommand: env.command,
      envVars: env.envVars,
      workDir: env.dir,
      secretsProvider: "passphrase",
      projectSettings: { name: "valkey-on-eks", runtime: "nodejs", backend: { url: env.envVars.PULUMI_BACKEND_URL } },
    },
  );
  const all: Record<string, { value: string; secret?: boolean }> = {};
  for (const [key, value] of Object.entries(config))
    all[`valkey-on-eks:${key}`] = { value: typeof value === "string" ? value : JSON.stringify(value) };
  if (options.password !== undefined) all["valkey-on-eks:password"] = { value: options.password, secret: true };
  await stack.setAllConfig(all);
  return {
    stack,
    name,
    outputs: undefined,
    log,
    dispose: async () => {
      try {
        await stack.destroy({ onOutput: (s) => log.push(s) });
      } finally {
        await stack.workspace.removeStack(name, { force: true });
      }
    },
  };
}

/**
 * The `n` resources whose step took longest in an operation's engine events (from the step's pre event to its
 * outputs, at the events' 1 s resolution), slowest first, as "name 123 s": where an `up`'s time went.
 */
function slowestSteps(events: readonly EngineEvent[], n = 8): string {
  const started = new Map<string, number>();
  const took: Array<[string, number]> = [];
  for (const e of events) {
    const pre = e.resourcePreEvent?.metadata.urn;
    if (pre !== undefined) started.set(pre, e.timestamp);
    const done = e.resOutputsEvent?.metadata.urn;
    const from = done === undefined ? undefined : started.get(done);
    if (done !== undefined && from !== undefined) took.push([done.split("::").pop() ?? done, e.timestamp - from]);
  }
  return took
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, s]) => `${name} ${s} s`)
    .join(", ");
}

/** `up`, its output in the stack's log, and its slowest steps (slowestSteps). */
export async function upWithSlowestSteps(s: E2eStack): Promise<{ up: UpResult; slowest: string }> {
  const events: EngineEvent[] = [];
  const up = await s.stack.up({ onOutput: (o) => s.log.push(o), onEvent: (e) => events.push(e) });
  return { up, slowest: slowestSteps(events) };
}

/** Tail of the engine log for assertion messages. */
export function tail(log: readonly string[], lines = 40): string {
  return log.join("").split("\n").slice(-lines).join("\n");
}

export { pulumi };
