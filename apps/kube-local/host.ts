/**
 * What kube:local does to the machine: network namespaces and their links, cgroup subtrees,
 * detached processes, and the inverse of all of it (`teardown`), plus `leftovers()`, which lists
 * whatever of it still exists (the test of `down` asserts it is empty). Needs root.
 */
import { execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { sleep } from "../../core/util/poll-until.js";
import { API_IP, BRIDGE, CGROUP_CONTROLLERS, NODE_NET, OUTER_NETNS, PREFIX, type ClusterPlan } from "./plan.js";

const CGROUP_FS = "/sys/fs/cgroup";

export function sh(cmd: string, args: string[], input?: string): string {
  return execFileSync(cmd, args, {
    encoding: "utf8",
    input,
    stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
}

function netnsList(): string[] {
  return existsSync("/run/netns") ? readdirSync("/run/netns") : [];
}

/** The outer namespace with its bridge, and one namespace per node joined to it by a veth. */
export function createNetwork(plan: ClusterPlan): void {
  const ip = (...a: string[]) => sh("ip", a);
  ip("netns", "add", OUTER_NETNS);
  ip("-n", OUTER_NETNS, "link", "set", "lo", "up");
  ip("-n", OUTER_NETNS, "link", "add", BRIDGE, "type", "bridge");
  ip("-n", OUTER_NETNS, "addr", "add", `${API_IP}/24`, "dev", BRIDGE);
  ip("-n", OUTER_NETNS, "link", "set", BRIDGE, "up");
  for (const n of plan.nodes) {
    ip("netns", "add", n.netns);
    ip("-n", n.netns, "link", "set", "lo", "up");
    ip("-n", OUTER_NETNS, "link", "add", n.veth, "type", "veth", "peer", "name", "eth0", "netns", n.netns);
    ip("-n", OUTER_NETNS, "link", "set", n.veth, "master", BRIDGE, "up");
    ip("-n", n.netns, "addr", "add", `${n.ip}/24`, "dev", "eth0");
    ip("-n", n.netns, "link", "set", "eth0", "up");
    // Everything beyond the segment goes to the outer namespace, which routes nothing further.
    ip("-n", n.netns, "route", "add", "default", "via", API_IP);
  }
  // The outer namespace reaches pod CIDRs through the nodes: Cilium's auto-direct-node-routes
  // installs them in the nodes; here one route per node's /24 is added once the CIDRs are known.
}

/** Routes in the outer namespace to each node's pod CIDR (the API server reaches pods: webhooks, proxy). */
export function routePodCidrs(cidrs: Array<{ cidr: string; via: string }>): void {
  for (const r of cidrs) sh("ip", ["-n", OUTER_NETNS, "route", "replace", r.cidr, "via", r.via]);
}

/** Creates `path` in every v1 hierarchy (cpuset: copies cpus/mems from the parent, as v1 requires). */
export function createCgroup(path: string): void {
  for (const c of CGROUP_CONTROLLERS) {
    const parts = path.split("/").filter(Boolean);
    let cur = join(CGROUP_FS, c);
    for (const p of parts) {
      const next = join(cur, p);
      if (!existsSync(next)) {
        mkdirSync(next);
        if (c === "cpuset") {
          for (const f of ["cpuset.cpus", "cpuset.mems"])
            writeFileSync(join(next, f), readFileSync(join(cur, f), "utf8"));
        }
      }
      cur = next;
    }
  }
}

/**
 * Starts `argv` detached (own session, stdio to `log`) in network namespace `netns` (or the host's
 * when undefined), inside cgroup `cgroup` of every v1 hierarchy; returns its pid.
 */
export function spawnDetached(argv: string[], log: string, cgroup: string, netns?: string): number {
  const join_ = CGROUP_CONTROLLERS.map((c) => `echo $$ > ${CGROUP_FS}/${c}${cgroup}/cgroup.procs`).join("; ");
  const inner = ["sh", "-c", `${join_}; exec "$@"`, "sh", ...argv];
  const full = netns === undefined ? inner : ["nsenter", `--net=/run/netns/${netns}`, "--", ...inner];
  const fd = openSync(log, "a");
  const child = spawn(full[0]!, full.slice(1), { detached: true, stdio: ["ignore", fd, fd] });
  closeSync(fd);
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${argv[0]}`);
  return child.pid;
}

/** Pids of every task in the cgroup subtree `path` (pids hierarchy). */
export function cgroupPids(path: string): number[] {
  const root = join(CGROUP_FS, "pids", path);
  if (!existsSync(root)) return [];
  const out: number[] = [];
  const walk = (dir: string): void => {
    for (const line of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n"))
      if (line.trim()) out.push(Number(line));
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name));
  };
  walk(root);
  return out;
}

/** Freezes the subtree, SIGKILLs every task in it, thaws it, and waits until it is empty. */
async function killCgroup(path: string): Promise<void> {
  const freezer = join(CGROUP_FS, "freezer", path, "freezer.state");
  for (let round = 0; round < 50; round++) {
    const pids = cgroupPids(path);
    if (pids.length === 0) return;
    if (existsSync(freezer)) writeFileSync(freezer, "FROZEN");
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
    if (existsSync(freezer)) writeFileSync(freezer, "THAWED");
    await sleep(100);
  }
  throw new Error(`kube:local down: processes still in cgroup ${path}: ${cgroupPids(path).join(" ")}`);
}

/** Removes the cgroup subtree `path` in every v1 hierarchy (children first). */
function removeCgroup(path: string): void {
  for (const c of CGROUP_CONTROLLERS) {
    const root = join(CGROUP_FS, c, path);
    if (!existsSync(root)) continue;
    const rm = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) rm(join(dir, e.name));
      rmdirSync(dir);
    };
    rm(root);
  }
}

/**
 * Stops everything kube:local started and removes what it made: every process in the `/vk8s`
 * cgroup subtree (the host-side forwarder included), the cgroups, the namespaces (their devices,
 * routes and iptables/nftables rules go with them), and stray mounts under the state directory.
 * Safe to run when nothing or only part of it exists.
 */
export async function teardown(plan: ClusterPlan): Promise<void> {
  await killCgroup(plan.cgroup);
  removeCgroup(plan.cgroup);
  for (const m of mountsUnder(plan.dir).reverse()) {
    try {
      sh("umount", ["-l", m]);
    } catch {
      /* gone with its namespace meanwhile */
    }
  }
  for (const ns of netnsList().filter((n) => n === OUTER_NETNS || n.startsWith(`${PREFIX}-`)))
    sh("ip", ["netns", "del", ns]);
}

/** Mount points (host mount namespace) at or under `dir`. */
function mountsUnder(dir: string): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[4] ?? "")
    .filter((m) => m === dir || m.startsWith(`${dir}/`));
}

/** Everything of kube:local that still exists on the machine, as readable lines (empty: nothing). */
export function leftovers(plan: ClusterPlan): string[] {
  const out: string[] = [];
  for (const ns of netnsList()) if (ns === OUTER_NETNS || ns.startsWith(`${PREFIX}-`)) out.push(`netns ${ns}`);
  for (const c of CGROUP_CONTROLLERS)
    if (existsSync(join(CGROUP_FS, c, plan.cgroup))) out.push(`cgroup ${c}${plan.cgroup}`);
  for (const pid of cgroupPids(plan.cgroup)) out.push(`process ${pid}`);
  for (const m of mountsUnder(plan.dir)) out.push(`mount ${m}`);
  const links = sh("ip", ["-o", "link", "show"]);
  for (const l of links.split("\n")) if (l.includes(`${PREFIX}`)) out.push(`host link ${l.split(":")[1]?.trim() ?? l}`);
  const addrs = sh("ip", ["-o", "addr", "show"]);
  if (addrs.includes(`${NODE_NET}.`)) out.push(`host address in ${NODE_NET}.0/24`);
  return out;
}

/** True when `path` exists and is a Unix socket. */
export function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}
