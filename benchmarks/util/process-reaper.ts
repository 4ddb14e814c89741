/**
 * Makes sure no child process this Node process started (valkey-server, the benchmark client)
 * outlives it: on normal exit, on failure, and on SIGINT / SIGTERM / SIGHUP. Children are
 * registered with `trackChild`; the hooks are installed on the first registration, never at
 * import time.
 *
 * Signal handling: every tracked child gets SIGKILL, then the registered `onSignal` callbacks
 * run (so a command can print what it was doing), then the process exits with 128 + signal.
 * SIGKILL of this process itself cannot be caught; nothing can clean up after that.
 */
import type { ChildProcess } from "node:child_process";

const live = new Set<ChildProcess>();
const signalCallbacks = new Set<(signal: NodeJS.Signals) => void>();
let installed = false;

const EXIT_CODES: ReadonlyArray<readonly [NodeJS.Signals, number]> = [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
];

/** SIGKILLs every tracked child that is still running. Synchronous: safe inside 'exit'. */
export function killAllTracked(): void {
  for (const child of live) {
    try {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
  live.clear();
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on("exit", killAllTracked);
  for (const [sig, code] of EXIT_CODES) {
    process.on(sig, () => {
      killAllTracked();
      for (const cb of signalCallbacks) {
        try {
          cb(sig);
        } catch {
          /* a failing callback must not keep children or the process alive */
        }
      }
      process.exit(code);
    });
  }
}

/** Registers a child to be killed if this process exits or is signalled; untracked when it exits. */
export function trackChild(child: ChildProcess): void {
  install();
  live.add(child);
  child.once("exit", () => live.delete(child));
  child.once("error", () => live.delete(child));
}

/** Number of tracked children still running. */
export function trackedChildCount(): number {
  return live.size;
}

/**
 * Runs `cb` (after every child has been killed) when SIGINT / SIGTERM / SIGHUP arrive, before
 * the process exits. Returns a function that unregisters it.
 */
export function onTerminatingSignal(cb: (signal: NodeJS.Signals) => void): () => void {
  install();
  signalCallbacks.add(cb);
  return () => signalCallbacks.delete(cb);
}
