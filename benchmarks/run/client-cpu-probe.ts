/**
 * The Linux readers behind client-cpu.ts: the CPU time of the children this process waited for
 * (/proc/self/stat cutime + cstime: the children's rusage, whole ticks), the CPUs a process may
 * run on (its affinity, /proc/<pid>/status) and this process's cgroup CPU limit. Anything
 * unreadable is undefined, never a guess. (The mix generator reports its own CPU: loadgen.ts.)
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { parseCpuQuota, parseStatCpuTicks, parseStatusCpus } from "./client-cpu.js";

let clockTicks: number | undefined;

/** Clock ticks per second (`getconf CLK_TCK`, 100 on Linux when getconf is missing). */
export function clockTicksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, "latin1");
  } catch {
    return undefined;
  }
};

/** CPU seconds of every child this process has waited for so far (undefined off Linux). */
export function childrenCpuSeconds(): number | undefined {
  const hz = clockTicksPerSecond(); // first: its getconf child is waited for, and counted, before the reading
  const text = read("/proc/self/stat");
  const ticks = text === undefined ? undefined : parseStatCpuTicks(text, "children");
  return ticks === undefined ? undefined : ticks / hz;
}

/** This process's cgroup CPU limit in cores (v2 cpu.max, else v1 cfs quota), undefined when none. */
export function cgroupCpuLimit(): number | undefined {
  const path = /^0::(\S*)$/m.exec(read("/proc/self/cgroup") ?? "")?.[1] ?? "";
  for (const dir of [`/sys/fs/cgroup${path === "/" ? "" : path}`, "/sys/fs/cgroup"]) {
    const max = read(`${dir}/cpu.max`)?.trim().split(/\s+/);
    if (max !== undefined) return parseCpuQuota(max[0] ?? "", max[1] ?? "100000");
  }
  const quota = read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
  const period = read("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  return quota === undefined || period === undefined ? undefined : parseCpuQuota(quota, period);
}

/** The CPUs `pid` may run on (its affinity; this process's when omitted), capped by this process's cgroup limit. */
export function cpusAvailable(pid?: number): number {
  const affinity =
    pid === undefined
      ? availableParallelism()
      : (parseStatusCpus(read(`/proc/${pid}/status`) ?? "") ?? availableParallelism());
  return Math.min(affinity, cgroupCpuLimit() ?? Number.POSITIVE_INFINITY);
}
