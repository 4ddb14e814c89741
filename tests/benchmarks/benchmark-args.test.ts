import { describe, expect, it } from "vitest";
import { buildBenchmarkArgs, buildProbeArgs, supportsReadFromReplicas } from "../../benchmarks/run/benchmark-args.js";
import { BENCHMARK_TESTS, SEED_WORKLOAD, type Workload } from "../../vocabulary/workload.js";

describe("buildBenchmarkArgs", () => {
  it("the seed workload gives the seed's command line, one test at a time", () => {
    expect(buildBenchmarkArgs(SEED_WORKLOAD, { host: "valkey-cluster", port: 6379, cluster: true }, "set", 500_000)).toEqual([
      "-h", "valkey-cluster", "-p", "6379", "--cluster",
      "-n", "500000", "-c", "50", "-P", "16", "-d", "256", "--threads", "4", "-r", "1000000",
      "-t", "set", "--csv",
    ]); // prettier-ignore
  });

  it("replication mode has no --cluster and takes the scaled request count", () => {
    const args = buildBenchmarkArgs(SEED_WORKLOAD, { host: "10.0.0.5", port: 6380, cluster: false }, "incr", 6_000_000);
    expect(args).not.toContain("--cluster");
    expect(args.slice(0, 6)).toEqual(["-h", "10.0.0.5", "-p", "6380", "-n", "6000000"]);
    expect(args.slice(-3)).toEqual(["-t", "incr", "--csv"]);
  });

  it("reads on the replicas in cluster mode: --rfr yes after --cluster, for the read tests only", () => {
    const w: Workload = { ...SEED_WORKLOAD, reads: "replicas" };
    const cluster = { host: "valkey-cluster", port: 6379, cluster: true };
    expect(buildBenchmarkArgs(w, cluster, "get", 10).slice(0, 7)).toEqual([
      "-h",
      "valkey-cluster",
      "-p",
      "6379",
      "--cluster",
      "--rfr",
      "yes",
    ]);
    expect(buildBenchmarkArgs(w, cluster, "lrange_100", 10)).toContain("--rfr");
    // A write sent to a replica is answered with MOVED: never with --rfr.
    for (const test of ["set", "incr", "lpush", "mset"] as const)
      expect(buildBenchmarkArgs(w, cluster, test, 10)).not.toContain("--rfr");
    // Outside cluster mode the replicas are the target; reads from the primary never carry it.
    expect(buildBenchmarkArgs(w, { ...cluster, cluster: false }, "get", 10)).not.toContain("--rfr");
    expect(buildBenchmarkArgs({ ...SEED_WORKLOAD, reads: "primary" }, cluster, "get", 10)).not.toContain("--rfr");
    expect(buildBenchmarkArgs(SEED_WORKLOAD, cluster, "get", 10)).not.toContain("--rfr");
  });

  it("--rfr exists from valkey-benchmark 8.1 on, never in redis-benchmark", () => {
    expect(supportsReadFromReplicas({ flavor: "valkey", version: "8.1.0" })).toBe(true);
    expect(supportsReadFromReplicas({ flavor: "valkey", version: "9.1.2" })).toBe(true);
    expect(supportsReadFromReplicas({ flavor: "valkey", version: "8.0.6" })).toBe(false);
    expect(supportsReadFromReplicas({ flavor: "valkey", version: "7.2.11" })).toBe(false);
    expect(supportsReadFromReplicas({ flavor: "redis", version: "8.2.0" })).toBe(false);
    expect(supportsReadFromReplicas({ flavor: "valkey", version: "unknown" })).toBe(false);
  });

  it("never carries a password or auth flag", () => {
    for (const test of BENCHMARK_TESTS) {
      for (const cluster of [true, false]) {
        const args = [
          ...buildBenchmarkArgs(SEED_WORKLOAD, { host: "h", port: 1, cluster }, test, 10),
          ...buildProbeArgs({ host: "h", port: 1, cluster }),
        ];
        for (const flag of ["-a", "--user", "-u", "--pass", "--askpass"]) expect(args).not.toContain(flag);
        expect(args.join(" ")).not.toMatch(/redis:\/\/|valkey:\/\/|pass/i);
      }
    }
  });

  it("rejects counts that are not whole positive numbers", () => {
    const t = { host: "h", port: 6379, cluster: false };
    expect(() => buildBenchmarkArgs(SEED_WORKLOAD, t, "set", 0)).toThrow(/requests must be a whole number/);
    expect(() => buildBenchmarkArgs(SEED_WORKLOAD, t, "set", 1.5)).toThrow(/requests/);
    const w: Workload = { ...SEED_WORKLOAD, pipeline: Number.NaN };
    expect(() => buildBenchmarkArgs(w, t, "set", 10)).toThrow(/pipeline/);
    expect(() => buildBenchmarkArgs(SEED_WORKLOAD, { ...t, host: "-a" }, "set", 10)).toThrow(/invalid benchmark host/);
  });

  it("the probe is one PING on one connection", () => {
    expect(buildProbeArgs({ host: "127.0.0.1", port: 7000, cluster: true })).toEqual([
      "-h", "127.0.0.1", "-p", "7000", "--cluster", "-n", "1", "-c", "1", "-t", "ping", "--csv",
    ]); // prettier-ignore
  });
});
