/**
 * How busy the load generator was: its CPU time over its wall time, as a share of the cores it
 * may use. A client at or above CLIENT_SATURATION of them was the limit of its row (the server
 * may have had room to spare), so that row is marked client-bound and is never taken as a
 * server's ceiling (benchmarks/report/verdict.ts). One home for the rule: the local runner and
 * the benchmark Job's log parser (valkey-benchmark), the mix generator (its MixResult.clientCpu)
 * and the shard sweep all go through clientCpuShare.
 *
 * The cores a client may use: min(its threads, the CPUs it may run on, its CPU limit). The CPUs
 * it may run on are its affinity (`taskset`; os.availableParallelism() for this process); the
 * limit is its cgroup's CPU quota (a pod's CPU limit). Pure; the Linux readers are in
 * client-cpu-probe.ts.
 */
import type { ResultRow } from "./result-row.js";

/** At or above this share of its usable cores the client, not the server, is taken to be the limit. */
export const CLIENT_SATURATION = 0.9;

/** What a row's client used: CPU seconds (user + system) over wall seconds, on `cores` usable cores. */
export interface ClientCpu {
  cpuSeconds: number;
  wallSeconds: number;
  /** min(threads, CPUs it may run on, CPU limit): what 100 % means. */
  cores: number;
  /** Who measured it, e.g. "children's rusage" or "Node process.cpuUsage() (stand-in)". */
  source?: string;
}

/** min(threads, CPUs it may run on, CPU limit), at least 1. */
export function usableCores(threads: number, cpus: number, limit?: number): number {
  return Math.max(1, Math.min(threads, cpus, limit ?? Number.POSITIVE_INFINITY));
}

/**
 * The client's CPU use as a share of what it could use: CPU seconds ÷ (wall seconds × usable
 * cores), where usable = min(client threads, CPUs the client may run on).
 */
export function clientCpuShare(cpuSeconds: number, wallSeconds: number, threads: number, clientCpus: number): number {
  const usable = usableCores(threads, clientCpus);
  return wallSeconds > 0 ? cpuSeconds / (wallSeconds * usable) : 0;
}

/** The row's client columns from a measurement (percent to one decimal; bound at CLIENT_SATURATION). */
export function clientCpuColumns(
  c: ClientCpu,
): Required<Pick<ResultRow, "client_cpu_pct" | "client_cores" | "client_bound">> {
  const share = clientCpuShare(c.cpuSeconds, c.wallSeconds, c.cores, c.cores);
  return {
    client_cpu_pct: Math.round(share * 1000) / 10,
    client_cores: usableCores(c.cores, c.cores),
    client_bound: share >= CLIENT_SATURATION,
  };
}

/** The rows with their client's columns, or unchanged when the client was not measured. */
export function withClientCpu(rows: readonly ResultRow[], c: ClientCpu | undefined): ResultRow[] {
  return c === undefined ? [...rows] : rows.map((r) => ({ ...r, ...clientCpuColumns(c) }));
}

export const isClientBound = (r: Pick<ResultRow, "client_bound">): boolean => r.client_bound === true;

/** "48.2 % of 2 cores", "CLIENT-BOUND: 96.0 % of 1 core", or "not measured". */
export function clientCpuText(r: Pick<ResultRow, "client_cpu_pct" | "client_cores" | "client_bound">): string {
  if (r.client_cpu_pct === undefined || r.client_cores === undefined) return "not measured";
  const cores = `${r.client_cores} core${r.client_cores === 1 ? "" : "s"}`;
  return `${isClientBound(r) ? "CLIENT-BOUND: " : ""}${r.client_cpu_pct.toFixed(1)} % of ${cores}`;
}

/** The CPU count in a `Cpus_allowed_list` (`/proc/<pid>/status`): "0-3,6" → 5; undefined when unreadable. */
export function parseCpuList(list: string): number | undefined {
  let n = 0;
  for (const part of list.trim().split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (m === null) return undefined;
    n += m[2] === undefined ? 1 : Number(m[2]) - Number(m[1]) + 1;
  }
  return n > 0 ? n : undefined;
}

/** `Cpus_allowed_list` of a `/proc/<pid>/status` text, counted. */
export function parseStatusCpus(status: string): number | undefined {
  const m = /^Cpus_allowed_list:\s*(\S+)\s*$/m.exec(status);
  return m?.[1] === undefined ? undefined : parseCpuList(m[1]);
}

/**
 * A cgroup's CPU limit in cores from cgroup v2 `cpu.max` ("200000 100000" → 2) or v1's quota and
 * period ("-1" or "max": no limit, undefined).
 */
export function parseCpuQuota(quota: string, period: string): number | undefined {
  const q = Number(quota.trim());
  const p = Number(period.trim());
  if (quota.trim() === "max" || !Number.isFinite(q) || q <= 0 || !(p > 0)) return undefined;
  return q / p;
}

/**
 * CPU time in clock ticks from a `/proc/<pid>/stat` line: the process's own utime + stime (fields
 * 14 and 15), or, `children`, those of the children it waited for (cutime + cstime, fields 16 and
 * 17: the children's rusage); undefined when unreadable.
 */
export function parseStatCpuTicks(stat: string, whose: "own" | "children" = "own"): number | undefined {
  // After "pid (comm) ": state is field 3, so field k is rest[k - 3].
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const first = whose === "own" ? 11 : 13;
  const user = Number(rest[first]);
  const system = Number(rest[first + 1]);
  return rest.length > first + 1 && Number.isFinite(user) && Number.isFinite(system) ? user + system : undefined;
}
