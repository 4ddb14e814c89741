/**
 * One benchmark child process (benchmark-runner.ts): spawned with piped stdio and the password in
 * its environment only, registered with the process reaper, killed on abort, on a timeout or on a
 * fatal connect error, timed from spawn to exit, and the CPUs it may run on read once it started
 * (its usable cores: client-cpu.ts).
 */
import { spawn } from "node:child_process";
import { connect } from "node:net";
import type { ResolvedTool } from "./binaries.js";
import { trackChild } from "../../core/util/process-reaper.js";
import { cpusAvailable } from "./client-cpu-probe.js";

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  wallSeconds: number;
  /** Why this module killed the child, if it did. */
  killedFor?: string;
  /** The CPUs the child may run on, read once it started (after onSpawn, which may pin it). */
  cpus: number;
}

/** What spawning a benchmark child needs (RunWorkloadOptions has it all). */
export interface ChildOptions {
  client: Pick<ResolvedTool, "path">;
  password?: string;
  signal?: AbortSignal;
  onSpawn?: (pid: number, args: readonly string[]) => void;
  processTimeoutMs?: number;
}

const CONNECT_FAILURE = /Could not connect to \S+ at \S+: [^\n]*/;
const MAX_CAPTURE = 1 << 20;

function childEnv(password: string | undefined): NodeJS.ProcessEnv {
  if (password === undefined) return { ...process.env };
  return { ...process.env, VALKEYCLI_AUTH: password, REDISCLI_AUTH: password };
}

/** Resolves once `host:port` accepts a TCP connection; rejects with the socket error otherwise. */
export function checkReachable(host: string, port: number, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host, port });
    const fail = (why: string): void => {
      sock.destroy();
      reject(new Error(why));
    };
    sock.setTimeout(timeoutMs, () => fail(`no answer within ${timeoutMs} ms`));
    sock.once("error", (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
    sock.once("connect", () => {
      sock.destroy();
      resolve();
    });
  });
}

/** The signal's reason when it is an Error (AbortController.abort() gives an AbortError DOMException). */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return Object.assign(new Error("The benchmark was aborted", { cause: reason }), { name: "AbortError" });
}

/** Spawns the client with piped stdio; kills it on abort, timeout, or a fatal connect error. */
export function runChild(o: ChildOptions, args: string[]): Promise<ChildResult> {
  const { signal } = o;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(o.client.path, args, { stdio: ["ignore", "pipe", "pipe"], env: childEnv(o.password) });
    trackChild(child);
    let stdout = "";
    let stderr = "";
    let killedFor: string | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    const kill = (why: string, sig: NodeJS.Signals = "SIGTERM"): void => {
      if (killedFor !== undefined) return;
      killedFor = why;
      child.kill(sig);
      graceTimer = setTimeout(() => child.kill("SIGKILL"), 2000);
    };
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length < MAX_CAPTURE) stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < MAX_CAPTURE) stderr += d;
      // redis-benchmark 7 spins forever after a refused connection instead of exiting.
      const m = CONNECT_FAILURE.exec(stderr);
      if (m) kill(m[0], "SIGKILL");
    });
    const onAbort = (): void => kill("aborted");
    signal?.addEventListener("abort", onAbort, { once: true });
    const timeout =
      o.processTimeoutMs === undefined
        ? undefined
        : setTimeout(() => kill(`ran longer than ${o.processTimeoutMs} ms`), o.processTimeoutMs);
    if (child.pid !== undefined) o.onSpawn?.(child.pid, args);
    const cpus = cpusAvailable(child.pid);
    let spawnError: Error | undefined;
    child.once("error", (err) => {
      spawnError = err;
    });
    child.once("close", (code, sig) => {
      clearTimeout(graceTimer);
      clearTimeout(timeout);
      signal?.removeEventListener("abort", onAbort);
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      if (spawnError !== undefined) {
        reject(new Error(`could not start ${o.client.path}: ${spawnError.message}`, { cause: spawnError }));
        return;
      }
      const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      resolve({
        code,
        signal: sig,
        stdout,
        stderr,
        wallSeconds,
        cpus,
        ...(killedFor === undefined ? {} : { killedFor }),
      });
    });
  });
}
