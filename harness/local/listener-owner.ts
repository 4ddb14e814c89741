/**
 * Whose server answered? A port asked of the kernel (ports.ts) is released before the launch binds
 * it, and a launch that runs a restore first (the backup tests: two AWS CLI calls against moto)
 * leaves seconds in between: under a CPU hog another test file's server took the port and answered
 * the PING, and a member whose restore was failing counted as started (seen in CI). Linux only: the
 * listening sockets of /proc/net/tcp{,6} on the port, held open by the launched process or one of
 * its descendants. Where /proc cannot tell (another OS), the answer is "unknown" and the caller
 * trusts the PING as before.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";

/** TCP state LISTEN in /proc/net/tcp. */
const LISTEN = "0A";

/** Listening sockets' inodes by port, from /proc/net/tcp{,6}; undefined when neither can be read. */
export type Listeners = Map<number, Set<string>>;

/** One read of `procNet`'s tcp tables: every LISTEN socket by local port (any address). */
async function readListeners(procNet: string): Promise<Listeners | undefined> {
  const out: Listeners = new Map();
  let read = false;
  for (const f of ["tcp", "tcp6"]) {
    let text: string;
    try {
      text = await readFile(`${procNet}/${f}`, "utf8");
    } catch {
      continue;
    }
    read = true;
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (cols.length <= 9 || cols[3] !== LISTEN) continue;
      const port = Number.parseInt(cols[1]?.split(":").at(-1) ?? "", 16);
      if (!out.has(port)) out.set(port, new Set());
      out.get(port)?.add(cols[9] as string);
    }
  }
  return read ? out : undefined;
}

/**
 * Every LISTEN socket by local port from `ss -Hltne`: iproute2 asks the kernel over netlink (sock_diag) for the
 * listening sockets only, where /proc/net/tcp lists every socket. Restarting the ladder's 200 cluster members, their
 * bus links and their scripts' connections made that file a costly read each time a starting member was checked
 * (about 5 ms per 1,000 sockets here idle; the table held tens of thousands, and at load average 367 a member that
 * answered at once was not seen as started within 200 s, bench:scale 2026-12-01); ss's cost follows the listeners
 * (hundreds). Undefined when ss is missing or fails (the caller reads /proc/net/tcp).
 */
export async function ssListeners(ss = "ss"): Promise<Listeners | undefined> {
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)(ss, ["-Hltne"], { maxBuffer: 64 * 1024 * 1024 }));
  } catch {
    return undefined;
  }
  const out: Listeners = new Map();
  for (const line of stdout.split("\n")) {
    // State Recv-Q Send-Q Local:Port Peer:Port ... ino:<inode> ...
    const cols = line.trim().split(/\s+/);
    const inode = /(?:^|\s)ino:(\d+)/.exec(line)?.[1];
    const port = Number.parseInt(cols[3]?.split(":").at(-1) ?? "", 10);
    if (cols[0] !== "LISTEN" || inode === undefined || !Number.isInteger(port)) continue;
    if (!out.has(port)) out.set(port, new Set());
    out.get(port)?.add(inode);
  }
  return out;
}

/**
 * `read` shared by concurrent callers, each still getting a result whose read started after its call: a caller
 * arriving while a read runs (it may have started before that caller's state existed) joins the next one, which
 * starts when the running one ends and serves every caller queued meanwhile. At most two reads at a time, however
 * many callers.
 */
export function sharedFreshRead<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  let queued: Promise<T> | undefined;
  const begin = (): Promise<T> => {
    const p = read().finally(() => {
      if (running === p) running = undefined;
    });
    running = p;
    return p;
  };
  return () => {
    if (queued !== undefined) return queued;
    if (running === undefined) return begin();
    const next = running.then(
      () => undefined,
      () => undefined,
    );
    queued = next.then(() => {
      queued = undefined;
      return begin();
    });
    return queued;
  };
}

/**
 * The listening sockets, from a read that started after the call (sharedFreshRead): `ss` for the system's own /proc
 * (ssListeners), else /proc/net/tcp. That file lists every socket, TIME_WAIT too, and with 60 members and their
 * scripts' connections it held 20,000 lines that took the kernel 0.1–6 s each to produce under load; one synchronous
 * read per starting member, in turn, made restarting 60 members at once take 57–68 s (the scale ladder's heal step).
 */
const readers = new Map<string, () => Promise<Listeners | undefined>>();

export function freshListeners(procNet = "/proc/net"): Promise<Listeners | undefined> {
  let r = readers.get(procNet);
  if (r === undefined) {
    const own = procNet === "/proc/net";
    r = sharedFreshRead(async () => (own ? await ssListeners() : undefined) ?? readListeners(procNet));
    readers.set(procNet, r);
  }
  return r();
}

/** A /proc directory's entries; none when it is gone (the process ended) or not readable. */
function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** `pid` and every process below it (/proc/<pid>/task/<tid>/children). */
export function processTree(pid: number, proc = "/proc"): number[] {
  const seen: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const p = queue.shift() as number;
    if (seen.includes(p)) continue;
    seen.push(p);
    for (const t of entries(`${proc}/${p}/task`)) {
      try {
        for (const c of readFileSync(`${proc}/${p}/task/${t}/children`, "utf8").trim().split(/\s+/))
          if (c !== "") queue.push(Number(c));
      } catch {
        // the task ended meanwhile
      }
    }
  }
  return seen;
}

/**
 * Whether the server listening on `port` is `pid`'s or a descendant's: true, false, or undefined
 * when this system's /proc cannot say.
 */
export async function listenerIsOwn(pid: number, port: number, proc = "/proc"): Promise<boolean | undefined> {
  if (!existsSync(`${proc}/${pid}`)) return false;
  const listeners = await freshListeners(`${proc}/net`);
  if (listeners === undefined) return undefined;
  const inodes = listeners.get(port) ?? new Set<string>();
  for (const p of processTree(pid, proc)) {
    for (const fd of entries(`${proc}/${p}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`${proc}/${p}/fd/${fd}`));
        if (m && inodes.has(m[1] as string)) return true;
      } catch {
        // closed meanwhile
      }
    }
  }
  return false;
}
