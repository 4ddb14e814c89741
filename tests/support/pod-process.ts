/**
 * Runs a cluster member the way a pod does: its pod definition (pod/cluster-member.ts) written
 * into its directory and its command run (`sh start.sh valkey.conf`), the pod's values in
 * environment variables (each one the definition reads must be given), on one loopback address.
 * Output (server log on stdout, the scripts' logs on stderr) goes to `pod.log`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { launchPod } from "../../harness/local/pod-files.js";
import { waitForPing } from "../../harness/local/valkey-process.js";
import type { PodDefinition } from "../../pod/definition.js";
import { trackChild } from "../../core/util/process-reaper.js";

export interface PodProcess {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly dir: string;
  alive(): boolean;
  log(): string;
  /** Sends a signal to the server (start.sh execs valkey-server: the pod's process is the server). */
  signal(sig: NodeJS.Signals): void;
  /** SIGTERM (a graceful shutdown: AOF/RDB and nodes.conf written), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export async function startPod(
  name: string,
  dir: string,
  host: string,
  port: number,
  pod: PodDefinition,
  env: Record<string, string>,
): Promise<PodProcess> {
  mkdirSync(dir, { recursive: true });
  const launch = launchPod(name, pod, dir, env);
  const logPath = join(dir, "pod.log");
  const fd = openSync(logPath, "a");
  let child: ChildProcess;
  try {
    child = spawn(launch.command, launch.args, {
      env: { ...process.env, ...env },
      stdio: ["ignore", fd, fd],
      cwd: dir,
    });
  } finally {
    closeSync(fd);
  }
  trackChild(child);
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once("exit", () => ((exited = true), resolve())));
  const log = (): string => {
    try {
      return readFileSync(logPath, "utf8");
    } catch {
      return "";
    }
  };
  try {
    await waitForPing(host, port, 20_000, () => exited);
  } catch (e) {
    if (!exited) child.kill("SIGKILL");
    throw new Error(`${name}: ${(e as Error).message}\n${log().split("\n").slice(-20).join("\n")}`, { cause: e });
  }
  return {
    name,
    host,
    port,
    dir,
    alive: () => !exited,
    log,
    signal: (sig) => {
      if (!exited) child.kill(sig);
    },
    stop: async (graceMs = 5000) => {
      if (exited) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}
