/**
 * How much memory the benchmark's own keys take on a member, so that a stack whose benchmark would
 * fill `maxmemory` is refused at preview instead of failing its Job with OOM replies after the deploy.
 */
import { DEFAULT_MIX_DURATION_SECONDS, type BenchmarkTest, type Workload } from "./workload.js";

/**
 * jemalloc's size class for `n` bytes (the official image's allocator): 16-byte steps to 128, then
 * four classes per doubling (160, 192, 224, 256, 320, …).
 */
export function jemallocClass(n: number): number {
  if (n <= 8) return 8;
  if (n <= 128) return Math.ceil(n / 16) * 16;
  const step = 2 ** (Math.ceil(Math.log2(n)) - 3);
  return Math.ceil(n / step) * step;
}

/**
 * A value of `d` bytes with its sds header and terminator in its own allocation, plus 80 B for the
 * entry: its object with the key embedded (~48 B) and its share of the hashtable's buckets, which
 * swings by ~12 B with the table's fill between two resizes.
 */
const stringEntry = (d: number) => 80 + jemallocClass(d + 6);

/**
 * The key families valkey-benchmark (and the mix generator, which sends the same requests) fills
 * with random names over `keyspaceLength`, and the bytes one entry adds to `used_memory` on Valkey 9:
 * strings `key:<12 digits>` (SET, MSET), counters `counter:<12 digits>` (INCR), the fields of
 * `myhash`, the members of `myset` and `myzset`. Measured over 20,000 entries of each, on 9.1.2 with
 * jemalloc (the official image's allocator) and with glibc malloc, value sizes 1–256 B: SET 62–382 B
 * with jemalloc (a 256 B value: 382), 63–318 B with glibc; HSET at or under SET; INCR 57–64, SADD
 * 41–47, ZADD 79–85. tests/vocabulary/benchmark-footprint-real.test.ts measures them again with both; the estimates
 * below add a margin for the hashtable's fill.
 * Lists and streams (LPUSH, RPUSH, XADD, the LRANGE fills) grow with the request count instead, which
 * a re-run scales up to `maxRequests`: not estimated.
 */
export const BENCHMARK_ENTRY_BYTES: Readonly<
  Partial<Record<BenchmarkTest, { family: string; bytes: (dataSize: number) => number }>>
> = Object.freeze({
  set: { family: "key", bytes: stringEntry },
  mset: { family: "key", bytes: stringEntry },
  incr: { family: "counter", bytes: () => 80 },
  hset: { family: "myhash", bytes: stringEntry },
  sadd: { family: "myset", bytes: () => 64 },
  zadd: { family: "myzset", bytes: () => 112 },
});

/** What an empty server holds before the benchmark writes: ~1 MiB of its own, and the 10 MiB replication backlog. */
export const EMPTY_MEMBER_BYTES = 11 * 2 ** 20;

export type FootprintWorkload = Pick<
  Workload,
  "tests" | "mix" | "dataSize" | "keyspaceLength" | "maxRequests" | "rate" | "durationSeconds"
>;

/** One key family the workload fills, with its entries and bytes on one member. */
export interface FamilyFootprint {
  family: string;
  entries: number;
  bytes: number;
}

/**
 * The key families a workload fills on one member, largest first. The same on every member of either
 * mode: replicas copy their primary, and in cluster mode valkey-benchmark tags each shard's keys
 * (`key:{tag}:<digits>`) with random digits over the whole keyspace, so each shard can fill all
 * `keyspaceLength` names. Entries are the distinct names the random draws reach: `runs × maxRequests`
 * per test (MSET draws ten per request), an open-loop mix's `runs × rate × durationSeconds × share`,
 * a closed-loop mix's as many as the server takes: all names.
 */
export function benchmarkFootprint(w: FootprintWorkload, runs: number): FamilyFootprint[] {
  const tests = w.mix !== undefined ? w.mix.map((e) => e.test) : w.tests;
  const families = new Map<string, FamilyFootprint>();
  for (const test of tests) {
    const entry = BENCHMARK_ENTRY_BYTES[test];
    if (entry === undefined) continue;
    const draws = runs * requestsOf(w, test) * (test === "mset" ? 10 : 1);
    const entries = Math.round(w.keyspaceLength * (1 - Math.exp(-draws / w.keyspaceLength)));
    const bytes = entries * entry.bytes(w.dataSize);
    const seen = families.get(entry.family);
    if (seen === undefined || seen.bytes < bytes) families.set(entry.family, { family: entry.family, entries, bytes });
  }
  return [...families.values()].sort((a, b) => b.bytes - a.bytes);
}

/** The most requests one run of a test sends (Infinity: bounded by nothing the config says). */
function requestsOf(w: FootprintWorkload, test: BenchmarkTest): number {
  if (w.mix === undefined) return w.maxRequests;
  const share = (w.mix.find((e) => e.test === test)?.percent ?? 0) / 100;
  return w.rate === undefined ? Infinity : w.rate * (w.durationSeconds ?? DEFAULT_MIX_DURATION_SECONDS) * share;
}

/** The largest keyspaceLength whose footprint fits `budgetBytes` (0 when none does). */
export function largestFittingKeyspace(w: FootprintWorkload, runs: number, budgetBytes: number): number {
  const total = (k: number) => benchmarkFootprint({ ...w, keyspaceLength: k }, runs).reduce((n, f) => n + f.bytes, 0);
  let lo = 0;
  let hi = w.keyspaceLength;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (total(mid) <= budgetBytes) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
