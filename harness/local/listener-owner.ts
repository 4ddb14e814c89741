/**
 * Whose server answered? A port asked of the kernel (ports.ts) is released before the launch binds
 * it, and a launch that runs a restore first (the backup tests: two AWS CLI calls against moto)
 * leaves seconds in between: under a CPU hog another test file's server took the port and answered
 * the PING, and a member whose restore was failing counted as started (seen in CI). Linux only: the
 * listening sockets of /proc/net/tcp{,6} on the port, held open by the launched process or one of
 * its descendants. Where /proc cannot tell (another OS), the answer is "unknown" and the caller
 * trusts the PING as before.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";

/** TCP state LISTEN in /proc/net/tcp. */
const LISTEN = "0A";

/** Inodes of the sockets listening on `port` (any address); undefined when /proc/net cannot be read. */
export function listeningInodes(port: number, procNet = "/proc/net"): Set<string> | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const out = new Set<string>();
  let read = false;
  for (const f of ["tcp", "tcp6"]) {
    let text: string;
    try {
      text = readFileSync(`${procNet}/${f}`, "utf8");
    } catch {
      continue;
    }
    read = true;
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (cols.length > 9 && cols[3] === LISTEN && cols[1]?.endsWith(`:${hexPort}`)) out.add(cols[9] as string);
    }
  }
  return read ? out : undefined;
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
export function listenerIsOwn(pid: number, port: number, proc = "/proc"): boolean | undefined {
  if (!existsSync(`${proc}/${pid}`)) return false;
  const inodes = listeningInodes(port, `${proc}/net`);
  if (inodes === undefined) return undefined;
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
