/**
 * CPU time of child processes (Linux /proc), and CPU affinity through `taskset`.
 *
 * A child's CPU time is read from /proc/<pid>/stat (utime + stime) every `intervalMs` while it
 * runs; the last reading before it exits stands, so up to one interval of CPU time at the very
 * end is missed (a few percent on a multi-second test).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { which } from "../run/binaries.js";
import { clockTicksPerSecond } from "../run/client-cpu-probe.js";
import { parseStatCpuTicks } from "../run/client-cpu.js";
import { cpuList } from "./sweep-math.js";

/** Samples the CPU time of the processes it is told about. */
export class CpuSampler {
  private readonly ticks = new Map<number, number>();
  private readonly timers = new Map<number, NodeJS.Timeout>();

  constructor(private readonly intervalMs = 50) {}

  track(pid: number): void {
    const read = () => {
      try {
        const t = parseStatCpuTicks(readFileSync(`/proc/${pid}/stat`, "latin1"));
        if (t !== undefined) this.ticks.set(pid, t);
      } catch {
        this.untrack(pid);
      }
    };
    read();
    this.timers.set(pid, setInterval(read, this.intervalMs));
  }

  private untrack(pid: number): void {
    clearInterval(this.timers.get(pid));
    this.timers.delete(pid);
  }

  /** CPU seconds seen for `pid` (0 when never read). */
  cpuSeconds(pid: number): number {
    return (this.ticks.get(pid) ?? 0) / clockTicksPerSecond();
  }

  stop(): void {
    for (const pid of [...this.timers.keys()]) this.untrack(pid);
  }
}

/** Pins every thread of `pid` to `cpus` (`taskset -a -p -c`). */
export function pinProcess(pid: number, cpus: readonly number[]): void {
  const taskset = which("taskset");
  if (taskset === undefined) throw new Error("--pin needs taskset (Debian package util-linux) on PATH");
  execFileSync(taskset, ["-a", "-p", "-c", cpuList(cpus), String(pid)], { stdio: "ignore" });
}
