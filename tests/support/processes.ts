/**
 * Test helpers shared by the integration and e2e suites: running the vbench CLI as a user does,
 * running a shell script or a bundled in-pod script as a pod would,
 * which processes a run left behind, and waiting for a value to appear.
 */
import { dirname } from "node:path";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { sleep } from "../../core/util/poll-until.js";
import { openClient } from "../../core/topology/connector.js";

/** PIDs of live (non-zombie) processes whose environment carries `marker` ("KEY=value"). */
export function processesWithMarker(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").split("\0").includes(marker)) {
        if (!/\) Z /.test(readFileSync(`/proc/${entry}/stat`, "latin1"))) pids.push(Number(entry));
      }
    } catch {
      /* exited while we looked, or not ours to read */
    }
  }
  return pids;
}

/**
 * processesWithMarker once none is left, or what is left after `graceMs`: a pod's background loop
 * (sentinel-start.sh's failover nudge) checks its server every tenth of a second and ends within
 * that of it, after the server's own exit has been reported.
 */
export async function processesLeftWithMarker(marker: string, graceMs = 1000): Promise<number[]> {
  const deadline = Date.now() + graceMs;
  let left = processesWithMarker(marker);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(50);
    left = processesWithMarker(marker);
  }
  return left;
}

/**
 * Polls `probe` until it returns a value (not undefined) and returns it. A probe that throws is
 * polled again; on timeout the error names `what` and the last failure.
 */
export async function eventually<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
  intervalMs = 300,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ""}`);
    await sleep(intervalMs);
  }
}

/** What a vbench run printed and how it ended; `marker` ("KEY=value") tags every process it started. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  marker: string;
}

/**
 * Runs `vbench <args>` in a child node process (from the repository root, the tests' cwd), its
 * environment tagged with a fresh `<markerName>=<random>` (see processesWithMarker).
 * `interruptWhen` sends SIGINT (or `opts.signal`) once stderr matches it; `opts.env` adds to its environment.
 */
export function runVbench(
  args: string[],
  markerName: string,
  interruptWhen?: RegExp,
  opts: { signal?: NodeJS.Signals; env?: Record<string, string> } = {},
): Promise<CliRun> {
  const value = Math.random().toString(36).slice(2);
  const child = spawn(process.execPath, ["--import", "tsx", "apps/vbench/cli.ts", ...args], {
    env: { ...process.env, ...opts.env, [markerName]: value },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let interrupted = false;
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    if (interruptWhen && !interrupted && interruptWhen.test(stderr)) {
      interrupted = true;
      child.kill(opts.signal ?? "SIGINT");
    }
  });
  return new Promise((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr, marker: `${markerName}=${value}` })),
  );
}

/**
 * Runs `script` with `/bin/sh -c` in an environment of only `env` (plus this process's PATH unless
 * `env` sets one), as a container's command runs; resolves once it closed.
 */
export async function runShellScript(
  script: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn("/bin/sh", ["-c", script], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out: string[] = [];
  const err: string[] = [];
  child.stdout.setEncoding("utf8").on("data", (d: string) => out.push(d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => err.push(d));
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout: out.join(""), stderr: err.join("") };
}

/**
 * Runs a bundled in-pod script (`node <script>`) as a container runs it: cwd its own directory (so
 * it cannot lean on the repository's node_modules) and an environment of only `env` plus PATH.
 * `sigtermAfterMs`: sends SIGTERM then (a pod stopped early). Resolves once it closed.
 */
export async function runNodeBundle(
  script: string,
  env: Record<string, string>,
  sigtermAfterMs?: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [script], {
    cwd: dirname(script),
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const timer = sigtermAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGTERM"), sigtermAfterMs);
  const out: string[] = [];
  const err: string[] = [];
  child.stdout.setEncoding("utf8").on("data", (d: string) => out.push(d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => err.push(d));
  const [code] = (await once(child, "close")) as [number | null];
  clearTimeout(timer);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

/** One command on a real server with its own short-lived connection; the reply as text. */
export async function callOn(
  n: { host: string; port: number; address: string },
  password: string,
  command: string,
  ...args: string[]
): Promise<string> {
  const cl = await openClient(n.host, n.port, n.address, { password });
  try {
    return String(await cl.call(command, ...args));
  } finally {
    cl.disconnect();
  }
}
