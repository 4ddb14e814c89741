import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import {
  benchmarkFootprint,
  jemallocClass,
  largestFittingKeyspace,
  type FootprintWorkload,
} from "../../vocabulary/benchmark-footprint.js";
import { SEED_WORKLOAD } from "../../vocabulary/workload.js";

const seed: FootprintWorkload = { ...SEED_WORKLOAD };
const total = (w: FootprintWorkload, runs = 3) => benchmarkFootprint(w, runs).reduce((n, f) => n + f.bytes, 0);

describe("the benchmark's footprint on a member", () => {
  it("the seed workload: every one of 1,000,000 names of SET and INCR (a re-run may send maxRequests)", () => {
    expect(benchmarkFootprint(seed, 3)).toEqual([
      { family: "key", entries: 1_000_000, bytes: 400_000_000 },
      { family: "counter", entries: 1_000_000, bytes: 80_000_000 },
    ]);
  });

  it("the names a few draws reach, not the whole keyspace; MSET draws ten per request and shares SET's keys", () => {
    const few = { ...seed, maxRequests: 1000, tests: ["set" as const] };
    // 3,000 draws over 1,000,000 names: 2,995.5 distinct.
    expect(benchmarkFootprint(few, 3)).toEqual([{ family: "key", entries: 2996, bytes: 2996 * 400 }]);
    const mset = benchmarkFootprint({ ...few, tests: ["set", "mset"] }, 3);
    expect(mset).toHaveLength(1);
    expect(mset[0]?.entries).toBe(Math.round(1e6 * (1 - Math.exp(-30_000 / 1e6))));
  });

  it("reads, pings, lists and streams add nothing (lists grow with requests: not estimated)", () => {
    expect(benchmarkFootprint({ ...seed, tests: ["get", "ping_inline", "lpush", "xadd", "lrange_100"] }, 3)).toEqual(
      [],
    );
  });

  it("a mix: all names closed loop; rate × duration × share × runs open loop", () => {
    const mix = {
      ...seed,
      mix: [
        { test: "get" as const, percent: 80 },
        { test: "set" as const, percent: 20 },
      ],
    };
    expect(benchmarkFootprint(mix, 3)).toEqual([{ family: "key", entries: 1_000_000, bytes: 400_000_000 }]);
    const open = benchmarkFootprint({ ...mix, rate: 400, durationSeconds: 8 }, 3);
    expect(open[0]?.entries).toBe(Math.round(1e6 * (1 - Math.exp(-1920 / 1e6))));
  });

  it("jemalloc's size classes: 16-byte steps to 128, then four per doubling", () => {
    expect([1, 9, 128, 129, 160, 161, 256, 262, 384].map(jemallocClass)).toEqual([
      8, 16, 128, 160, 160, 192, 256, 320, 384,
    ]);
  });

  it("the largest keyspace that fits a budget fits it, and one more name does not", () => {
    const budget = 245 * 2 ** 20;
    const k = largestFittingKeyspace(seed, 3, budget);
    expect(total({ ...seed, keyspaceLength: k })).toBeLessThanOrEqual(budget);
    expect(total({ ...seed, keyspaceLength: k + 1 })).toBeGreaterThan(budget);
    expect(largestFittingKeyspace(seed, 3, 10)).toBe(0);
  });
});

describe("the stack refuses a benchmark past maxmemory only where Valkey cannot evict", () => {
  const small = { valkey: { maxmemory: "256Mi" } };
  it.each([
    ["an allkeys-* policy evicts instead", { ...small, valkey: { ...small.valkey, maxmemoryPolicy: "allkeys-lru" } }],
    ["the benchmark off", { ...small, benchmark: { enabled: false } }],
    ["the largest keyspace the message names", { ...small, benchmark: { keyspaceLength: 535_210 } }],
  ])("%s: accepted", (_name, raw) => {
    expect(() => parseStackConfig(raw)).not.toThrow();
  });

  it("one name more than the message names: refused", () => {
    expect(() => parseStackConfig({ ...small, benchmark: { keyspaceLength: 535_211 } })).toThrow(
      /benchmark\.keyspaceLength: 535211 key names/,
    );
  });
});
