/** What the metrics processes (redis_exporter, Prometheus) share: finding the binary, ending it. */
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { which } from "../../benchmarks/run/binaries.js";

/**
 * The binary `$<envName>` names, else `name` on PATH (Debian's package, which .ci/setup installs);
 * an error naming both otherwise.
 */
export function debianBinary(name: string, envName: string, env: NodeJS.ProcessEnv = process.env): string {
  const named = env[envName];
  if (named !== undefined) {
    if (!existsSync(named)) throw new Error(`${envName} names ${named}, which does not exist`);
    return named;
  }
  const found = which(name, env.PATH ?? "");
  if (found === undefined)
    throw new Error(`${name} not found on PATH: .ci/setup installs Debian's; ${envName} names another binary`);
  return found;
}

/** SIGTERM, resolved once the process has exited (at once if it already has). */
export function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** Throws the process's exit with the last lines of its stderr. */
export function exitedEarly(what: string, child: ChildProcess, stderr: string): never {
  throw new Error(`${what} exited (${child.exitCode}): ${stderr.trim().split("\n").slice(-3).join(" | ")}`);
}
