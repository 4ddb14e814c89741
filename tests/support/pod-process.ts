/**
 * Runs a cluster member the way a pod does: `sh start.sh valkey.conf` with the rendered
 * start/heal scripts and the rendered valkey.conf, the pod's values in environment variables, on
 * one loopback address. Output (server log on stdout, heal log on stderr) goes to `pod.log`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitForPing } from "../../benchmarks/local/valkey-process.js";
import { trackChild } from "../../benchmarks/util/process-reaper.js";

export interface PodFiles {
  /** File name -> content, written into the pod's directory (start.sh, heal.sh, valkey.conf, ...). */
  files: Record<string, string>;
  /** The file `sh start.sh <conf>` gets as its argument. */
  conf: string;
}

export interface PodProcess {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly dir: string;
  alive(): boolean;
  log(): string;
  /** SIGTERM (a graceful shutdown: AOF/RDB and nodes.conf written), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export async function startPod(name: string, dir: string, host: string, port: number, pod: PodFiles, env: Record<string, string>): Promise<PodProcess> {
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(pod.files)) writeFileSync(join(dir, file), text, { mode: 0o600 });
  const logPath = join(dir, "pod.log");
  const fd = openSync(logPath, "a");
  let child: ChildProcess;
  try {
    child = spawn("sh", [join(dir, "start.sh"), join(dir, pod.conf)], { env: { ...process.env, ...env }, stdio: ["ignore", fd, fd], cwd: dir });
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
    stop: async (graceMs = 5000) => {
      if (exited) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}
