/**
 * A dynamic provider serialized and run as Pulumi's dynamic-provider process runs it: the text
 * from pulumi.runtime.serializeFunction, loaded with require-from-string (as
 * @pulumi/pulumi/cmd/dynamic-provider does) in a separate plain `node` process, with no vitest and
 * no tsx loader.
 */
import { execFile, execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The serialized text of `factory()` exported by the component at `component` (repo-relative),
 * serialized under tsx in a child process (as a program run by `pulumi up` does).
 */
export function serializeProviderUnderTsx(component: string, factory: string): string {
  const dir = mkdtempSync(join(tmpdir(), "valkey-serialize-"));
  try {
    const serialize = join(dir, "serialize.mts");
    writeFileSync(
      serialize,
      [
        `import * as pulumi from ${JSON.stringify(createRequire(import.meta.url).resolve("@pulumi/pulumi"))};`,
        `import { ${factory} } from ${JSON.stringify(join(ROOT, component))};`,
        `const provider = ${factory}();`,
        `const sf = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });`,
        `process.stdout.write(sf.text);`,
      ].join("\n"),
    );
    return execFileSync(process.execPath, ["--import", "tsx", serialize], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs `script` (CommonJS lines in which `p` is the loaded provider's handler) in a plain node
 * process against the serialized provider `text`; resolves with its stdout. The process runs in
 * `options.cwd`, by default the project's `stacks/` directory: where the Pulumi CLI starts the
 * dynamic-provider host for this project (its program directory, Pulumi.yaml `main`).
 */
export async function runSerializedProvider(
  text: string,
  script: string[],
  timeoutMs = 30_000,
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "valkey-provider-"));
  try {
    writeFileSync(join(dir, "provider.js"), text);
    const run = join(dir, "run.cjs");
    writeFileSync(
      run,
      [
        `const load = require(${JSON.stringify(join(ROOT, "node_modules/require-from-string"))});`,
        `const p = load(require("fs").readFileSync(${JSON.stringify(join(dir, "provider.js"))}, "utf8")).handler();`,
        ...script,
      ].join("\n"),
    );
    const { stdout } = await promisify(execFile)(process.execPath, [run], {
      cwd: options.cwd ?? join(ROOT, "stacks"),
      encoding: "utf8",
      timeout: timeoutMs,
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    return stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A copy of the checkout at another path: every tracked file (git ls-files), and `node_modules`
 * as a symlink to this checkout's. What a second clone of the repository looks like to the
 * dynamic providers. The caller removes it.
 */
export function copyCheckout(): string {
  const copy = mkdtempSync(join(tmpdir(), "valkey-checkout-"));
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
    encoding: "utf8",
  })
    .split("\0")
    .filter((f) => f !== "");
  for (const file of files) {
    if (!existsSync(join(ROOT, file))) continue;
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(ROOT, file), join(copy, file));
  }
  symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
  return copy;
}

/** A kubeconfig whose API server is unreachable (127.0.0.1:1), its bearer token `token` (to assert it never leaks). */
export function unreachableKubeconfig(token: string): string {
  return `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: ${token}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;
}
