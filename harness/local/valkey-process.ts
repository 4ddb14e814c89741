/**
 * Starts and stops real valkey-server processes on this machine, and makes sure none of
 * them outlives the Node process that started it (normal exit, failure, Ctrl-C, SIGTERM).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { removeOnExit, trackChild } from "../../core/util/process-reaper.js";
import { listenerIsOwn, processTree } from "./listener-owner.js";
import { freePort, freePortForFreshDir } from "./ports.js";
import { renderLocalValkeyConf, type LocalServerOptions } from "./valkey-config-file.js";

export type StartOptions = Omit<LocalServerOptions, "port" | "clusterPort" | "dir" | "logfile"> & {
  /** Fixed port; a free one is chosen when omitted. */
  port?: number;
  /** Fixed cluster bus port (cluster-enabled only); a free one is chosen when omitted. */
  clusterPort?: number;
  /** Label used in directory names and error messages. */
  name?: string;
  /**
   * How to start the process instead of `valkey-server <generated valkey.conf>` (a start
   * script, a Sentinel): writes its files into `dir` and returns the command to run there.
   */
  launch?: (ctx: LaunchContext) => LaunchCommand;
  /** How long to wait for the first PING reply. @default 15000 */
  startTimeoutMs?: number;
  /**
   * A niceness increment for the process and everything it starts (coreutils `nice -n`; the pid stays the
   * launched one's). For many members on few cores whose own work would otherwise starve the Node process that
   * starts and measures them: they keep their shares among themselves. @default 0 (not niced)
   */
  nice?: number;
};

export interface LaunchContext {
  host: string;
  port: number;
  /** The cluster bus port, for cluster-enabled starts. */
  clusterPort?: number;
  dir: string;
  logfile: string;
}

export interface LaunchCommand {
  command: string;
  args: string[];
  /** Merged over process.env. */
  env?: Record<string, string>;
}

export interface ValkeyProcess {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly clusterPort: number | undefined;
  readonly pid: number;
  /** When it was spawned (Date.now()): a pod's start time. */
  readonly startedAt: number;
  readonly dir: string;
  readonly logfile: string;
  /** `host:port`, the key used in zone maps and verifier reports. */
  readonly address: string;
  /** True until the process exits. */
  alive(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** Sends a signal (SIGKILL to crash it, SIGSTOP / SIGCONT to freeze and thaw it). */
  signal(sig: NodeJS.Signals): void;
  /** Last lines of the server log, for error messages. */
  logTail(lines?: number): string;
  /** What the process (or its start script) wrote to stderr. */
  stderr(): string;
}

/** valkey-server children started here and not yet reaped (the reaper kills them on exit or signal). */
const liveServers = new Set<ChildProcess>();

/** Number of valkey-server processes this Node process has started and not yet reaped. */
export function liveServerCount(): number {
  return liveServers.size;
}

/**
 * Resolves when `host:port` answers a PING (any RESP reply, NOAUTH included). With `isOwn`, an
 * answer counts only when it does not say false (the answering server is not the launched one:
 * listener-owner.ts); the wait goes on until the launched one answers, dies or the time is up.
 */
export function waitForPing(
  host: string,
  port: number,
  timeoutMs: number,
  isDead: () => boolean,
  isOwn?: () => Promise<boolean | undefined> | boolean | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      if (isDead()) {
        reject(new Error(`valkey-server on ${host}:${port} exited during start-up`));
        return;
      }
      if (Date.now() > deadline) {
        reject(new Error(`valkey-server on ${host}:${port} did not answer PING within ${timeoutMs} ms`));
        return;
      }
      const sock = connect({ host, port });
      let done = false;
      const retry = (): void => {
        if (done) return;
        done = true;
        sock.destroy();
        setTimeout(attempt, 25);
      };
      sock.setTimeout(500, retry);
      sock.on("error", retry);
      // A proxy with no backend up (HAProxy) accepts and closes at once: no error, no data, and a
      // closed socket's idle timer never fires, so without this the wait never ends.
      sock.on("close", retry);
      sock.on("connect", () => sock.write("PING\r\n"));
      sock.on("data", (buf) => {
        if (done) return;
        const first = buf.toString("latin1", 0, 1);
        if (first !== "+" && first !== "-") return retry();
        done = true;
        sock.destroy();
        // Whose server answered (listener-owner.ts): not the launched one's → ask again.
        Promise.resolve(isOwn?.()).then(
          (own) => (own === false ? setTimeout(attempt, 25) : resolve()),
          (err: unknown) => reject(err as Error),
        );
      });
    };
    attempt();
  });
}

function tail(path: string, lines: number): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

let counter = 0;

/** A spawned server: its child, whether it has exited, what it wrote to stderr. */
interface SpawnedServer {
  child: ChildProcess;
  exitPromise: Promise<void>;
  exited: () => boolean;
  stderr: () => string;
}

/** What to run: `launch`'s command, else valkey-server on a valkey.conf generated into `ctx.dir`. */
function launchCommand(opts: StartOptions, server: string, ctx: LaunchContext): LaunchCommand {
  const { host, port, clusterPort, dir, logfile } = ctx;
  const { name: _n, port: _p, clusterPort: _c, launch, startTimeoutMs: _t, nice, ...rest } = opts;
  let cmd: LaunchCommand;
  if (launch) cmd = launch({ host, port, clusterPort, dir, logfile });
  else {
    const confPath = join(dir, "valkey.conf");
    writeFileSync(confPath, renderLocalValkeyConf({ ...rest, port, clusterPort, dir, logfile }), { mode: 0o600 });
    cmd = { command: server, args: [confPath] };
  }
  if (nice === undefined || nice === 0) return cmd;
  if (!Number.isInteger(nice) || nice < 1 || nice > 19) throw new Error(`nice: ${nice} is not an integer from 1 to 19`);
  return { ...cmd, command: "nice", args: ["-n", String(nice), cmd.command, ...cmd.args] };
}

/**
 * SIGKILL of `pid` and every process below it, as a container's processes all end with it: what its start script left
 * running (heal.sh, rejoin.sh, the failback loop and their children) would otherwise go on until it noticed the server
 * gone, and a rejoin.sh loop asking 199 dead addresses with a 3 s bound each outlived its member by minutes (at 200
 * members, 170 such loops through the next start: docs/measurements.md 2026-12-04). Stopped first, read again until
 * no new process appears (none forks while stopped), then killed. Not a process group of its own: a new session
 * would put each member in a scheduler autogroup of its own, where the `nice` above has no effect against this
 * process's (measured: spawning 60 members took 5.4 s instead of 0.6 s).
 */
function killTree(pid: number): void {
  const seen = new Set<number>();
  for (let round = 0; round < 20; round++) {
    const fresh = processTree(pid).filter((p) => !seen.has(p));
    if (fresh.length === 0) break;
    for (const p of fresh) {
      seen.add(p);
      try {
        process.kill(p, "SIGSTOP");
      } catch {
        /* gone meanwhile */
      }
    }
  }
  for (const p of seen)
    try {
      process.kill(p, "SIGKILL");
    } catch {
      /* gone meanwhile */
    }
}

/** Spawns `cmd` in `dir`, tracked for the reaper until it exits; `onError`: the spawn failed. */
function spawnServer(cmd: LaunchCommand, dir: string, onError: (err: Error) => void): SpawnedServer {
  const child = spawn(cmd.command, cmd.args, {
    stdio: ["ignore", "ignore", "pipe"],
    cwd: dir,
    env: cmd.env === undefined ? process.env : { ...process.env, ...cmd.env },
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  trackChild(child);
  liveServers.add(child);
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => {
    child.once("exit", () => {
      exited = true;
      liveServers.delete(child);
      resolve();
    });
  });
  child.once("error", (err) => {
    exited = true;
    liveServers.delete(child);
    onError(err);
  });
  return { child, exitPromise, exited: () => exited, stderr: () => stderr };
}

/** The ValkeyProcess handle of a server that answers PING. */
function valkeyProcessOf(
  s: SpawnedServer,
  p: { name: string; host: string; port: number; clusterPort: number | undefined; pid: number; startedAt: number },
  dir: string,
  logfile: string,
): ValkeyProcess {
  const { child, exitPromise } = s;
  const { name, host, port, clusterPort, pid, startedAt } = p;
  return {
    name,
    host,
    port,
    clusterPort,
    pid,
    startedAt,
    dir,
    logfile,
    address: `${host}:${port}`,
    alive: () => !s.exited(),
    signal: (sig) => {
      if (s.exited()) return;
      if (sig === "SIGKILL" && pid > 0) killTree(pid);
      else child.kill(sig);
    },
    stop: async (graceMs = 3000) => {
      if (s.exited()) return;
      child.kill("SIGCONT");
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exitPromise;
      clearTimeout(timer);
    },
    logTail: (lines = 20) => tail(logfile, lines),
    stderr: s.stderr,
  };
}

/**
 * Starts one valkey-server with a generated valkey.conf in a fresh directory under
 * `baseDir` (a temporary directory by default) and waits until it answers PING.
 */
export async function startValkeyServer(opts: StartOptions, baseDir?: string): Promise<ValkeyProcess> {
  const server = resolveBinaries().server.path;
  const host = opts.bind ?? "127.0.0.1";
  const name = opts.name ?? `valkey-${++counter}`;
  const root = baseDir ?? mkdtempSync(join(tmpdir(), "valkey-on-eks-"));
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    // A port chosen here is a fresh directory too.
    const port = opts.port ?? (await freePortForFreshDir(root, name, host));
    const clusterPort = opts.clusterEnabled ? (opts.clusterPort ?? (await freePort(host))) : undefined;
    const dir = join(root, `${name}-${port}`);
    mkdirSync(dir, { recursive: true });
    const logfile = join(dir, "valkey.log");
    const cmd = launchCommand(opts, server, { host, port, clusterPort, dir, logfile });
    const startedAt = Date.now();
    const s = spawnServer(cmd, dir, (err) => (lastError = err));
    const pid = s.child.pid;
    try {
      await waitForPing(host, port, opts.startTimeoutMs ?? 15_000, s.exited, () =>
        pid === undefined ? undefined : listenerIsOwn(pid, port),
      );
    } catch (err) {
      const stderr = s.stderr();
      lastError = new Error(
        `${(err as Error).message} (${name}); log tail:\n${tail(logfile, 15)}${stderr ? `\nstderr: ${stderr.trim()}` : ""}`,
      );
      if (!s.exited()) s.child.kill("SIGKILL");
      await s.exitPromise;
      // A port taken between our probe and the server's bind: try again with new ports.
      if (opts.port === undefined && /Address already in use/.test(tail(logfile, 15))) continue;
      throw lastError;
    }
    if (pid === undefined) throw new Error(`valkey-server ${name} has no pid`);
    return valkeyProcessOf(s, { name, host, port, clusterPort, pid, startedAt }, dir, logfile);
  }
  throw lastError ?? new Error(`could not start valkey-server ${name}`);
}

/**
 * A set of servers started together and stopped together; owns its temporary directory (removed
 * by stopAll, or at exit / on a terminating signal when the run never got there).
 */
export class LocalFleet {
  readonly baseDir: string;
  readonly servers: ValkeyProcess[] = [];
  private readonly keepDir: boolean;

  /** Unregisters the temporary directory from removal at exit (util/process-reaper.ts). */
  private readonly forgetDir: () => void;

  constructor(baseDir?: string) {
    this.keepDir = baseDir !== undefined;
    this.baseDir = baseDir ?? mkdtempSync(join(tmpdir(), "valkey-on-eks-fleet-"));
    // A run interrupted by a signal (or exiting without stopAll) still removes its temporary
    // directory: it holds data and the 0600 password file.
    this.forgetDir = this.keepDir ? () => undefined : removeOnExit(this.baseDir);
  }

  async start(opts: StartOptions): Promise<ValkeyProcess> {
    const proc = await startValkeyServer(opts, this.baseDir);
    this.servers.push(proc);
    return proc;
  }

  /** Starts `count` servers concurrently with the same options. */
  async startMany(count: number, opts: (i: number) => StartOptions): Promise<ValkeyProcess[]> {
    return Promise.all(Array.from({ length: count }, (_, i) => this.start(opts(i))));
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.stop()));
    if (!this.keepDir) rmSync(this.baseDir, { recursive: true, force: true });
    this.forgetDir();
  }
}
