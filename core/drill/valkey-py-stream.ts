/**
 * The drills' second client library: the valkey-py writer (valkey_py_writer.py, PyPI `valkey` in the
 * venv .ci/setup installs, named by $VALKEY_PY_PYTHON) run as a subprocess beside the ioredis
 * streams. It writes unique keys at the drill's rate and prints one WriteRecord per line; this
 * reads them into the same ledger (ledger.ts), so its loss and outage are counted as the ioredis
 * streams' are. It never WAITs: its acknowledged writes are never WAIT-confirmed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { ClientSettings } from "./client-settings.js";
import type { WriteRecord } from "./ledger.js";
import { trackChild } from "../util/process-reaper.js";

/** The writer script, found next to this file (never an absolute machine path). */
export const VALKEY_PY_WRITER = fileURLToPath(new URL("./valkey_py_writer.py", import.meta.url));

type Endpoint = { host: string; port: number };

/**
 * Where the writer connects: through the Sentinels (replication) or to the cluster's seeds (hostnames resolved through
 * `hostsFile`).
 */
export type ValkeyPyTarget =
  | { mode: "replication"; sentinels: readonly Endpoint[]; masterName: string }
  | { mode: "cluster"; seeds: readonly Endpoint[]; hostsFile: string };

export interface ValkeyPyStreamOptions {
  stream: string;
  prefix: string;
  rate: number;
  commandTimeoutMs: number;
  settings: ClientSettings;
  password: string | undefined;
  target: ValkeyPyTarget;
}

/** The python of the venv holding valkey-py: $VALKEY_PY_PYTHON, or an error saying how to get one. */
export function valkeyPyPython(env: Record<string, string | undefined> = process.env): string {
  const python = env["VALKEY_PY_PYTHON"];
  if (python === undefined || python === "")
    throw new Error(
      "VALKEY_PY_PYTHON is not set: run through .ci/setup, which installs valkey-py (PyPI valkey==$VALKEY_PY_VERSION) in a venv and sets it",
    );
  return python;
}

/** The writer's command-line arguments (after the script). */
export function valkeyPyArgs(o: Omit<ValkeyPyStreamOptions, "password">): string[] {
  const where =
    o.target.mode === "replication"
      ? [...o.target.sentinels.flatMap((s) => ["--sentinel", `${s.host}:${s.port}`]), "--master", o.target.masterName]
      : [...o.target.seeds.flatMap((s) => ["--seed", `${s.host}:${s.port}`]), "--hosts-file", o.target.hostsFile];
  return [
    "--mode",
    o.target.mode,
    "--stream",
    o.stream,
    "--prefix",
    o.prefix,
    "--rate",
    String(o.rate),
    "--timeout-ms",
    String(o.commandTimeoutMs),
    "--settings",
    o.settings,
    ...where,
  ];
}

const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** One line of the writer's output as a WriteRecord; throws naming the line when it is not one. */
export function parseWriterLine(line: string): WriteRecord {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new Error(`valkey-py writer: not a JSON line: ${JSON.stringify(line.slice(0, 200))}`);
  }
  const { stream, key, value, sentAt, doneAt, ok, error, unexpectedReply } = v;
  if (
    typeof stream !== "string" ||
    typeof key !== "string" ||
    typeof value !== "string" ||
    !isNum(sentAt) ||
    !isNum(doneAt) ||
    typeof ok !== "boolean"
  )
    throw new Error(`valkey-py writer: not a write record: ${JSON.stringify(line.slice(0, 200))}`);
  if (error !== undefined && typeof error !== "string")
    throw new Error(`valkey-py writer: error must be a string: ${JSON.stringify(line.slice(0, 200))}`);
  if (unexpectedReply !== undefined && (typeof unexpectedReply !== "string" || ok !== false))
    throw new Error(
      `valkey-py writer: unexpectedReply must be a string on a failed write: ${JSON.stringify(line.slice(0, 200))}`,
    );
  return {
    stream,
    key,
    value,
    sentAt,
    doneAt,
    ok,
    waited: false,
    ...(typeof error === "string" ? { error } : {}),
    ...(typeof unexpectedReply === "string" ? { unexpectedReply } : {}),
  };
}

/**
 * The network waits one write can make, each bounded by the command timeout (connect, AUTH, the command): replication
 * asks each Sentinel in turn for the primary, then writes to it; cluster asks each seed for the slots, then the owner,
 * then the node a MOVED names. valkey-py retries none of them (valkey_py_writer.py).
 */
export function writerWaitsPerWrite(target: ValkeyPyTarget): number {
  const perNode = 3;
  return target.mode === "replication" ? perNode * (target.sentinels.length + 1) : perNode * (target.seeds.length + 2);
}

/**
 * How long a stopped writer may take to exit: its writes in flight end within writerWaitsPerWrite command timeouts
 * each (a write queued but not sent is dropped), plus 10 s for a starved machine to run its threads.
 */
export const writerStopBoundMs = (o: Pick<ValkeyPyStreamOptions, "commandTimeoutMs" | "target">): number =>
  o.commandTimeoutMs * writerWaitsPerWrite(o.target) + 10_000;

/** The line the writer prints once its client is built, before its first write. */
export const WRITER_READY_LINE = '{"ready":true}';

/**
 * How long a started writer may take to print WRITER_READY_LINE: building a cluster client asks the seeds in turn
 * (writerWaitsPerWrite command timeouts), plus 30 s for a starved machine to start Python and import the library.
 */
export const writerReadyBoundMs = (o: Pick<ValkeyPyStreamOptions, "commandTimeoutMs" | "target">): number =>
  o.commandTimeoutMs * writerWaitsPerWrite(o.target) + 30_000;

/** What a target offers the writer (DrillTarget.valkeyPyTarget). */
export interface ValkeyPySpec {
  stream: string;
  target: ValkeyPyTarget;
  password: string;
}

/**
 * A cluster's spec: seeded with the members' current addresses, the hostnames they announce resolved through
 * `hostsFile`.
 */
export const valkeyPyClusterSpec = (
  members: readonly Endpoint[],
  hostsFile: string,
  password: string,
): ValkeyPySpec => ({
  stream: "valkey-py-cluster",
  target: { mode: "cluster", seeds: members.map(({ host, port }) => ({ host, port })), hostsFile },
  password,
});

/** The valkey-py stream of a drill: none when the target offers none or it is turned off. */
export function valkeyPyStreams(
  spec: ValkeyPySpec | undefined,
  o: Pick<ValkeyPyStreamOptions, "prefix" | "rate" | "commandTimeoutMs" | "settings"> & { enabled: boolean },
): ValkeyPyStream[] {
  if (!o.enabled || spec === undefined) return [];
  return [new ValkeyPyStream({ ...o, stream: spec.stream, target: spec.target, password: spec.password })];
}

/** A load stream run by the valkey-py writer: start() spawns it, stop() ends it and keeps every record it printed. */
export class ValkeyPyStream {
  readonly records: WriteRecord[] = [];
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stderr = "";
  private bad: Error | undefined;
  /** Settled by the writer: resolved at its ready line, rejected if it exits first (undefined before start()). */
  private readied: Promise<void> | undefined;

  constructor(private readonly o: ValkeyPyStreamOptions) {}

  get stream(): string {
    return this.o.stream;
  }

  start(): void {
    const child = spawn(valkeyPyPython(), [VALKEY_PY_WRITER, ...valkeyPyArgs(this.o)], {
      env: { ...process.env, VALKEY_PASSWORD: this.o.password ?? "", PYTHONUNBUFFERED: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    let markReady = (): void => undefined;
    let failReady = (_: Error): void => undefined;
    this.readied = new Promise<void>((resolve, reject) => ((markReady = resolve), (failReady = reject)));
    this.readied.catch(() => undefined);
    // Killed with every other child if the drill is interrupted (process-reaper.ts).
    trackChild(child);
    child.stderr.on("data", (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-12_000)));
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      if (line === WRITER_READY_LINE) return markReady();
      try {
        this.records.push(parseWriterLine(line));
      } catch (err) {
        this.bad ??= err as Error;
      }
    });
    this.exited = new Promise((resolve) => {
      child.once("close", (code, signal) => {
        if (code !== 0 && this.bad === undefined)
          this.bad = new Error(`valkey-py writer ${this.exitText(code, signal)}: ${this.stderr.trim()}`);
        failReady(this.notReady("exited before it was ready"));
        resolve();
      });
      child.once("error", (err) => {
        this.bad ??= err;
        failReady(this.notReady("exited before it was ready"));
        resolve();
      });
    });
  }

  /**
   * Resolves once the started writer printed WRITER_READY_LINE (its client built); rejects if it exits first or stays
   * silent past writerReadyBoundMs, naming why. The drill counts its warm-up from here: a fault injected while Python
   * was still starting would meet a client that never saw the healthy cluster.
   */
  async ready(): Promise<void> {
    if (this.readied === undefined) throw new Error("valkey-py writer: ready() before start()");
    const boundMs = writerReadyBoundMs(this.o);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(this.notReady(`not ready within ${boundMs} ms of its start (no ${WRITER_READY_LINE} line)`)),
        boundMs,
      );
    });
    try {
      await Promise.race([this.readied, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Why the writer is not ready: its own failure when it has one, else `what` with its stderr. */
  private notReady(what: string): Error {
    return this.bad ?? new Error(`valkey-py writer ${what}: ${this.stderr.trim() || "nothing on stderr"}`);
  }

  /**
   * Stops the writer (stdin closed and SIGTERM; past writerStopBoundMs, SIGUSR1 for its stacks then SIGKILL) and
   * waits for its last records.
   */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null) return this.exited;
    child.stdin?.end();
    child.kill("SIGTERM");
    const boundMs = writerStopBoundMs(this.o);
    let kill: NodeJS.Timeout | undefined;
    const dump = setTimeout(() => {
      // Every thread's stack on stderr first (faulthandler, registered by the writer): where it hung.
      this.killedAfterMs = boundMs;
      child.kill("SIGUSR1");
      kill = setTimeout(() => child.kill("SIGKILL"), 1000);
    }, boundMs);
    await this.exited;
    clearTimeout(dump);
    clearTimeout(kill);
  }

  private killedAfterMs: number | undefined;

  private exitText(code: number | null, signal: NodeJS.Signals | null): string {
    if (this.killedAfterMs !== undefined) return `did not exit within ${this.killedAfterMs} ms of SIGTERM (killed)`;
    return `exited ${code ?? signal}`;
  }

  /** Why the writer's output cannot be trusted (a line that was not a record, a failed exit), or undefined. */
  get failure(): Error | undefined {
    return this.bad;
  }
}
