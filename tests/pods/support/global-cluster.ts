/**
 * Global setup of the `pods` project: the files start the local real cluster when none runs
 * (kube:local up is idempotent) and leave it running for the next file; once the project is done
 * it is stopped again, unless it was already running before the project started (someone's own
 * `kube:local up`, kept as found). Nothing is done where the files skip (not root).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { down, status } from "../../../apps/kube-local/cluster.js";

/**
 * `.ci/setup --pods` builds the real cluster's toolchain and images in the background when they
 * are missing (VALKEY_ON_EKS_REAL_CLUSTER_BUILD names the build's lock/log/status prefix): wait for
 * it here, before any file looks for them, and fail naming the log when it failed.
 */
export function awaitBackgroundBuild(prefix: string | undefined, say: (m: string) => void): void {
  if (!prefix) return;
  const lock = `${prefix}.lock`;
  if (!existsSync(lock)) throw new Error(`VALKEY_ON_EKS_REAL_CLUSTER_BUILD=${prefix} but ${lock} does not exist`);
  say(`waiting for the real cluster's toolchain and images, building in the background (log: ${prefix}.log)`);
  execFileSync("flock", [lock, "true"], { stdio: "ignore" });
  const statusFile = `${prefix}.status`;
  const code = existsSync(statusFile) ? readFileSync(statusFile, "utf8").trim() : "";
  if (code === "0") return;
  const log = existsSync(`${prefix}.log`) ? readFileSync(`${prefix}.log`, "utf8").trimEnd().split("\n") : [];
  throw new Error(
    `the background build of the real cluster's toolchain ${code ? `failed (exit ${code})` : "ended without a status"}` +
      ` (log: ${prefix}.log); its last lines:\n${log.slice(-20).join("\n")}`,
  );
}

export default async function setup(): Promise<() => Promise<void>> {
  if (process.getuid?.() !== 0) return () => Promise.resolve();
  awaitBackgroundBuild(process.env.VALKEY_ON_EKS_REAL_CLUSTER_BUILD, (m) => process.stderr.write(`[pods] ${m}\n`));
  const runningBefore = (await status()) !== undefined;
  return async () => {
    if (!runningBefore) await down();
  };
}
