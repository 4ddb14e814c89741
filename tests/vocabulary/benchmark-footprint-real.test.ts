/**
 * The bytes BENCHMARK_ENTRY_BYTES charges an entry, measured again on a real valkey-server with each
 * allocator: jemalloc (the official image's; preloaded here, as the server the tests run is built
 * with glibc malloc and counts through malloc_usable_size) and glibc's. The real benchmark client
 * fills 20,000 names of each family (ten draws per name), and `used_memory`'s growth per entry
 * (DBSIZE, HLEN, SCARD, ZCARD) must stay at or under the estimate, and the estimate within 1.8 times
 * of it (small values embed in the entry), so that the preview's refusal is neither late nor far too
 * early.
 */
import { execFile, execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { openClient } from "../../core/topology/connector.js";
import { parseInfo } from "../../core/topology/info.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { renderLocalValkeyConf } from "../../harness/local/valkey-config-file.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { BENCHMARK_ENTRY_BYTES } from "../../vocabulary/benchmark-footprint.js";
import type { BenchmarkTest } from "../../vocabulary/workload.js";

const NAMES = 20_000;
const run = promisify(execFile);

/** How many entries of the test's family the server holds. */
const ENTRIES: Partial<Record<BenchmarkTest, (c: Redis) => Promise<number>>> = {
  set: (c) => c.dbsize(),
  incr: (c) => c.dbsize(),
  hset: (c) => c.hlen("myhash"),
  sadd: (c) => c.scard("myset"),
  zadd: (c) => c.zcard("myzset"),
};

/** jemalloc's shared library, from the loader's cache (Debian's libjemalloc2, which redis-tools depends on). */
function jemalloc(): string {
  const line = execFileSync("/sbin/ldconfig", ["-p"], { encoding: "utf8" })
    .split("\n")
    .find((l) => l.includes("libjemalloc.so.2") && l.includes("x86-64"));
  const path = line?.split("=> ")[1]?.trim();
  if (path === undefined)
    throw new Error(
      "libjemalloc.so.2 not found by ldconfig -p: install Debian's libjemalloc2 (.ci/setup does, with redis-tools)",
    );
  return path;
}

describe.each(["jemalloc", "libc"] as const)("the benchmark's entry sizes on a real server, %s malloc", (allocator) => {
  const fleet = new LocalFleet();
  let server: ValkeyProcess;
  let client: Redis;
  beforeAll(async () => {
    const env: Record<string, string> = allocator === "jemalloc" ? { LD_PRELOAD: jemalloc() } : {};
    server = await fleet.start({
      name: `footprint-${allocator}`,
      launch: ({ host, port, dir, logfile }) => {
        const conf = join(dir, "valkey.conf");
        writeFileSync(conf, renderLocalValkeyConf({ bind: host, port, dir, logfile }), { mode: 0o600 });
        return { command: resolveBinaries().server.path, args: [conf], env };
      },
    });
    client = await openClient(server.host, server.port, server.address, {});
    // A first fill allocates what a new server allocates once (5 MB once, seen with jemalloc): not an entry's.
    await fill("set", 256);
  });
  beforeEach(() => client.call("FLUSHALL", "SYNC"));
  afterAll(async () => {
    client?.disconnect();
    await fleet.stopAll();
  });

  /** 10 × NAMES requests of `test` over NAMES names. */
  const fill = async (test: BenchmarkTest, d: number) => {
    const b = resolveBinaries().benchmark.path;
    const args = ["-h", server.host, "-p", String(server.port), "-t", test, "-n", String(10 * NAMES)];
    await run(b, [...args, "-r", String(NAMES), "-d", String(d), "-P", "16", "-c", "4", "-q"], { timeout: 120_000 });
  };
  /**
   * used_memory once the server holds nothing transient: the benchmark's connections closed (their
   * buffers freed: only this client left), no AOF bytes waiting to be written, no rewrite or save
   * running. Sampled right after a fill, under load, it still counted the last fill's clients and a
   * "before" 2.9 MB above the "after" (glibc malloc, 2026-11-29: -145 B per entry).
   */
  const usedMemory = async () => {
    let info = new Map<string, string>();
    await pollUntil(
      async () => {
        info = parseInfo(await client.info("all"));
        const busy = [
          ["connected_clients", "1"],
          ["aof_rewrite_in_progress", "0"],
          ["rdb_bgsave_in_progress", "0"],
          ["aof_buffer_length", "0"],
        ].filter(([k, v]) => info.has(k as string) && info.get(k as string) !== v);
        return busy.length === 0 || `still ${busy.map(([k]) => `${k}=${info.get(k as string)}`).join(", ")}`;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: "the server to hold nothing transient" },
    );
    return Number(info.get("used_memory"));
  };

  it.each([
    ["set", 16],
    ["set", 150],
    ["set", 256],
    ["hset", 150],
    ["hset", 256],
    ["incr", 256],
    ["sadd", 256],
    ["zadd", 256],
  ] as Array<[BenchmarkTest, number]>)(
    "%s with %i-byte values: measured ≤ estimate ≤ 1.8 × measured",
    async (test, d) => {
      const before = await usedMemory();
      await fill(test, d);
      const entries = await (ENTRIES[test] as (c: Redis) => Promise<number>)(client);
      expect(entries).toBeGreaterThan(0.99 * NAMES);
      const measured = ((await usedMemory()) - before) / entries;
      const estimate = (BENCHMARK_ENTRY_BYTES[test] as { bytes: (d: number) => number }).bytes(d);
      console.log(
        `[footprint] ${allocator}: ${test} -d ${d}: ${measured.toFixed(1)} B per entry measured, ${estimate} estimated`,
      );
      expect(estimate).toBeGreaterThanOrEqual(measured);
      expect(estimate).toBeLessThanOrEqual(1.8 * measured);
    },
    150_000,
  );
});
