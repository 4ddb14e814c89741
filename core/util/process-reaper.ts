/**
 * Makes sure no child process this Node process started (valkey-server, the benchmark client)
 * outlives it: on normal exit, on failure, and on SIGINT / SIGTERM / SIGHUP. Children are
 * registered with `trackChild`; the hooks are installed on the first registration, never at
 * import time.
 *
 * Signal handling: every tracked child gets SIGKILL, then the registered `onSignal` callbacks
 * run (so a command can print what it was doing), then the process exits with 128 + signal.
 * Directories registered with `removeOnExit` (a fleet's temporary directory: data, configs, the
 * 0600 password file) are removed at exit, after the killed children are gone (waited for, up
 * to 2 s), so an interrupted run leaves no secret or data behind.
 * Synchronous callbacks registered with `runAtExit` (e.g. removing the partition fault's iptables
 * rules) run at exit too, signals included (a signal ends the process through process.exit).
 * SIGKILL of this process itself cannot be caught; nothing can clean up after that.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";

const live = new Set<ChildProcess>();
const killed = new Set<number>();
const dirs = new Set<string>();
const signalCallbacks = new Set<(signal: NodeJS.Signals) => void>();
const exitCallbacks = new Set<() => void>();
let installed = false;

const EXIT_CODES: ReadonlyArray<readonly [NodeJS.Signals, number]> = [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
];

/** The exit code a run stopped by `signal` ends with (128 + its number). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return EXIT_CODES.find(([s]) => s === signal)?.[1] ?? 130;
}

/** SIGKILLs every tracked child that is still running. Synchronous: safe inside 'exit'. */
export function killAllTracked(): void {
  for (const child of live) {
    try {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        process.kill(child.pid, "SIGKILL");
        killed.add(child.pid);
      }
    } catch {
      /* already gone */
    }
  }
  live.clear();
}

/** Whether `pid` is still running (a zombie, killed and not yet reaped, counts as gone). */
export function running(pid: number): boolean {
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "latin1"));
  } catch {
    return false;
  }
}

/**
 * Synchronous (it runs inside 'exit'): waits up to 2 s for the killed children, then removes the registered
 * directories.
 */
function removeRegisteredDirs(): void {
  if (dirs.size === 0) return;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + 2000;
  while ([...killed].some(running) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 20);
  for (const dir of dirs) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      /* nothing more can be done at exit */
    }
  }
  dirs.clear();
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on("exit", () => {
    killAllTracked();
    for (const cb of exitCallbacks) {
      try {
        cb();
      } catch {
        /* a failing callback must not keep the others from running */
      }
    }
    exitCallbacks.clear();
    removeRegisteredDirs();
  });
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

/** Removes `dir` (recursively) when this process exits or is signalled; returns a function that unregisters it. */
export function removeOnExit(dir: string): () => void {
  install();
  dirs.add(dir);
  return () => dirs.delete(dir);
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

/**
 * Runs `cb` (synchronous: it runs inside 'exit') when this process exits, normally, on failure or
 * after SIGINT / SIGTERM / SIGHUP. Returns a function that unregisters it.
 */
export function runAtExit(cb: () => void): () => void {
  install();
  exitCallbacks.add(cb);
  return () => exitCallbacks.delete(cb);
}
