/**
 * Soak mode on real valkey-server processes: a primary with one replica, AOF on (the local
 * default). A short soak through the CLI (`vbench bench --mix --sample-s 1`) with a BGREWRITEAOF
 * sent to the primary mid-run: the series has a sample a second, the rewrite is an event on the
 * primary with its fork time, the samples before it show none, and the run directory carries
 * soak-replication.json, the interval log, the rows' note, summary.md's event and the report's
 * soak charts. A second soak (runMix directly) with the replica detached (REPLICAOF NO ONE) and
 * re-attached mid-run: its new replication ID cannot continue, so the primary serves a full
 * sync, flagged as a full-resync event on the primary, and the replica's role changes are seen
 * (open loop at a fixed rate, so the windows' rps is known). Automatic AOF rewrites are off.
 * The sampler bundled by esbuild, as an in-pod script would carry it, samples a real server.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import type { LatencyHistogram } from "../../benchmarks/run/latency-histogram.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleEntry } from "../../core/util/bundle.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { runMix } from "../../benchmarks/run/mix-runner.js";
import type { startMixSoak } from "../../benchmarks/run/soak-sampler.js";
import { soakFileSchema } from "../../benchmarks/run/soak-sample.js";
import { parseInfo } from "../../core/topology/info.js";
import { ConfigError, parseStackConfig, workloadFromConfig } from "../../config/schema.js";
import { SEED_WORKLOAD } from "../../vocabulary/workload.js";
import { runVbench } from "../support/verify-helpers.js";

const fleet = new LocalFleet();
let primary: ValkeyProcess;
let replica: ValkeyProcess;
const scratch = mkdtempSync(join(tmpdir(), "soak-test-"));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function info(p: ValkeyProcess): Promise<Map<string, string>> {
  const c = new Redis({ host: p.host, port: p.port });
  try {
    return parseInfo(await c.info());
  } finally {
    c.disconnect();
  }
}

/** The replica's link is up and neither member has a fork running (the replica rewrites its AOF after a full sync). */
async function settled(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [p, r] = await Promise.all([info(primary), info(replica)]);
    const idle = (m: Map<string, string>) =>
      m.get("aof_rewrite_in_progress") === "0" &&
      m.get("aof_rewrite_scheduled") === "0" &&
      m.get("rdb_bgsave_in_progress") === "0";
    if (r.get("master_link_status") === "up" && idle(p) && idle(r)) return;
    await sleep(100);
  }
  throw new Error("the replica did not settle");
}

beforeAll(async () => {
  [primary, replica] = await Promise.all([
    fleet.start({ name: "soak-primary" }),
    fleet.start({ name: "soak-replica" }),
  ]);
  const r = new Redis({ host: replica.host, port: replica.port });
  await r.call("replicaof", primary.host, String(primary.port));
  r.disconnect();
  // No automatic AOF rewrite (the load grows the AOF by its 64 MB minimum within seconds): the
  // only rewrites are the ones the tests force, and the full sync's on the replica.
  for (const p of [primary, replica]) {
    const c = new Redis({ host: p.host, port: p.port });
    await c.call("config", "set", "auto-aof-rewrite-percentage", "0");
    c.disconnect();
  }
  await settled();
}, 60_000);
afterAll(async () => {
  await fleet.stopAll();
  rmSync(scratch, { recursive: true, force: true });
});

/** Resolves once the soak's INFO poller holds a connection to the primary (the sampler has started). */
async function soakStarted(): Promise<void> {
  const c = new Redis({ host: primary.host, port: primary.port });
  try {
    for (let i = 0; i < 300; i++) {
      if (String(await c.call("client", "list")).includes("name=vbench-soak-info")) return;
      await sleep(100);
    }
    throw new Error("the soak never connected its INFO poller");
  } finally {
    c.disconnect();
  }
}

describe("soak: a sampled series with flagged events", () => {
  it("vbench bench --sample-s 1: a BGREWRITEAOF sent mid-run is an aof-rewrite event on the primary, with its fork time, absent from the samples before it", async () => {
    await settled();
    const out = join(scratch, "cli");
    const args = [
      "bench",
      "--target",
      primary.address,
      "--mix",
      "get:80,set:20",
      "--duration-s",
      "14",
      "--sample-s",
      "1",
      "--clients",
      "2",
      "--pipeline",
      "4",
    ];
    const run = runVbench([...args, "--keyspace-len", "10000", "--json", "--output", out]);
    await soakStarted();
    await sleep(5000);
    const sentAt = Date.now();
    const c = new Redis({ host: primary.host, port: primary.port });
    expect(await c.call("bgrewriteaof")).toMatch(/rewriting started/);
    c.disconnect();
    const r = await run;
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { runDir: string; rows: { test: string; notes: string }[] };
    const file = soakFileSchema.parse(JSON.parse(readFileSync(join(j.runDir, "raw", "soak-replication.json"), "utf8")));
    const samples = file.samples;
    console.log(
      `[soak] ${samples.length} samples; rps ${samples.map((s) => Math.round(s.rps)).join(" ")}; events: ${file.events.map((e) => `${e.kind} ${e.member} t=${e.t_s} ${e.evidence}`).join(" | ")}`,
    );
    expect(samples.length).toBeGreaterThanOrEqual(12);
    expect(samples.every((s) => s.members.length === 2 && s.members.every((m) => m.error === null))).toBe(true);
    expect(samples.slice(0, -1).every((s) => s.requests > 0 && s.p99_ms > 0 && Math.abs(s.window_s - 1) < 0.5)).toBe(
      true,
    );
    const baseline = file.baseline.find((m) => m.member === primary.address);
    const rewrites = file.events.filter((e) => e.kind === "aof-rewrite" && e.member === primary.address);
    expect(rewrites).toHaveLength(1);
    const [rewrite] = rewrites;
    expect(rewrite?.fork_usec).toBeGreaterThan(0);
    // A sample is stamped at its load window's end and its members' INFO read right after: the
    // window that ended just before the command can be the first to show it (seen in CI: 4 ms
    // before), never an earlier one.
    const interval = 1000;
    expect(Date.parse(rewrite?.at ?? "")).toBeGreaterThanOrEqual(sentAt - interval);
    expect(Date.parse(rewrite?.at ?? "")).toBeLessThanOrEqual(sentAt + 2 * interval);
    expect(rewrite?.evidence).toMatch(/aof_rewrites \d+→\d+/);
    // Before the BGREWRITEAOF (windows that ended more than one interval before it): no rewrite
    // in progress, the count as in the baseline.
    const before = samples
      .filter((s) => Date.parse(s.at) < sentAt - interval)
      .map((s) => s.members.find((m) => m.member === primary.address));
    expect(before.length).toBeGreaterThanOrEqual(3);
    for (const m of before) expect([m?.aof_rewrite_in_progress, m?.aof_rewrites]).toEqual([0, baseline?.aof_rewrites]);
    // After it, the count is one higher.
    expect(samples.at(-1)?.members.find((m) => m.member === primary.address)?.aof_rewrites).toBe(
      (baseline?.aof_rewrites ?? 0) + 1,
    );
    // The rest of the pipeline: the rows' notes, the interval log, summary.md, the report's charts.
    expect(j.rows.find((x) => x.test === "MIX")?.notes).toMatch(
      /soak: \d+ samples every 1 s, 1 event\(s\): aof-rewrite ×1 \(in summary\.md\)/,
    );
    const hlog = readFileSync(join(j.runDir, "raw", "latency-replication.hlog"), "utf8")
      .trim()
      .split("\n");
    expect(hlog.filter((l) => /^\d+\.\d{3},\d+\.\d{3},\d+\.\d{3},HIST/.test(l)).length).toBe(samples.length);
    expect(readFileSync(join(j.runDir, "summary.md"), "utf8")).toMatch(
      // The evidence lists every counter that moved; aof_rewrite_in_progress comes first when a sample caught the
      // rewrite running.
      new RegExp(
        `## Soak events[\\s\\S]*aof-rewrite on ${primary.address.replace(/\./g, "\\.")}: [^\\n]*aof_rewrites \\d+→\\d+`,
      ),
    );
    const html = readFileSync(join(j.runDir, "report.html"), "utf8");
    expect(html).toContain('data-chart="soak-load"');
    expect(html).toContain('data-chart="soak-memory"');
  }, 90_000);

  it("a replica detached and re-attached mid-run: the primary's full sync is a full-resync event, the replica's role changes are seen", async () => {
    await settled();
    const r = new Redis({ host: replica.host, port: replica.port });
    const flip = (async () => {
      await sleep(3500);
      await r.call("replicaof", "no", "one");
      await sleep(2500);
      await r.call("replicaof", primary.host, String(primary.port));
    })();
    const result = await runMix({
      workload: {
        ...SEED_WORKLOAD,
        name: "soak",
        clients: 2,
        pipeline: 1,
        keyspaceLength: 10_000,
        mix: [{ test: "set", percent: 100 }],
        durationSeconds: 12,
        rate: 2000,
        soak: { sampleSeconds: 1 },
      },
      target: { host: primary.host, port: primary.port, cluster: false },
      mode: "replication",
      serverVersion: "test",
      timestamp: "20260101-000000",
      members: [
        { host: primary.host, port: primary.port },
        { host: replica.host, port: replica.port },
      ],
    });
    await flip;
    r.disconnect();
    const events = result.soak?.record.events ?? [];
    console.log(
      `[soak] resync events: ${events.map((e) => `${e.kind} ${e.member} t=${e.t_s} ${e.evidence}`).join(" | ")}`,
    );
    const resync = events.filter((e) => e.kind === "full-resync");
    expect(resync.map((e) => e.member)).toEqual([primary.address]);
    expect(resync[0]?.evidence).toMatch(/sync_full (\d+)→(\d+)/);
    const [, from, to] = /sync_full (\d+)→(\d+)/.exec(resync[0]?.evidence ?? "") ?? [];
    expect(Number(to)).toBe(Number(from) + 1);
    expect(
      events.filter((e) => e.kind === "role-change" && e.member === replica.address).map((e) => e.evidence),
    ).toEqual([expect.stringMatching(/^role slave→master/), expect.stringMatching(/^role master→slave/)]);
    // Before the detach, nothing happened; the open loop kept its rate in every full window.
    expect(Math.min(...events.map((e) => e.t_s))).toBeGreaterThanOrEqual(3);
    const samples = result.soak?.record.samples ?? [];
    expect(samples.length).toBeGreaterThanOrEqual(11);
    for (const s of samples.slice(0, -1)) expect(Math.abs(s.rps - 2000)).toBeLessThan(400);
    await settled();
  }, 90_000);
});

describe("the sampler as an in-pod script would carry it", () => {
  it("bundles alone (no filesystem, no Pulumi, no schema library) and samples a real server from the bundle", async () => {
    // The sampler and the histogram it reads, bundled together as a pod script would carry them.
    const entry = join(scratch, "soak-entry.ts");
    const run = (f: string) => JSON.stringify(fileURLToPath(new URL(`../../benchmarks/run/${f}`, import.meta.url)));
    writeFileSync(
      entry,
      `export { startMixSoak } from ${run("soak-sampler.ts")};\nexport { LatencyHistogram } from ${run("latency-histogram.ts")};\n`,
    );
    const text = await bundleEntry(entry, "the soak sampler");
    expect(text).not.toMatch(/"node:fs"|@pulumi|zod/);
    expect(Buffer.byteLength(text)).toBeLessThan(400_000);
    const path = join(scratch, "soak-sampler.mjs");
    writeFileSync(path, text);
    const bundled = (await import(pathToFileURL(path).href)) as {
      startMixSoak: typeof startMixSoak;
      LatencyHistogram: typeof LatencyHistogram;
    };
    const sampler = await bundled.startMixSoak({
      sampleSeconds: 1,
      members: [{ host: primary.host, port: primary.port }],
    });
    // Two windows as the generator hands them over (the last one is kept: a whole window).
    const t0 = Date.now();
    for (const [index, n] of [
      [0, 50],
      [1, 20],
    ] as const) {
      const hist = new bundled.LatencyHistogram();
      for (let i = 0; i < n; i++) hist.record(100 + i);
      sampler.window({ index, fromMs: t0 + index * 1000, toMs: t0 + (index + 1) * 1000, errors: 0, hist });
    }
    const { record, hlog } = await sampler.stop();
    expect(record.samples.map((s) => [s.requests, s.rps, s.t_s])).toEqual([
      [50, 50, 1],
      [20, 20, 2],
    ]);
    expect(record.samples.every((s) => s.members[0]?.role === "master" && (s.members[0]?.used_memory ?? 0) > 0)).toBe(
      true,
    );
    expect(hlog).toContain("HIST");
  }, 60_000);
});

describe("soak flags and stack keys", () => {
  it(
    "the CLI refuses a soak it cannot run with exit 2, naming the flag",
    async () => {
      const bench = (...a: string[]) => runVbench(["bench", "--target", primary.address, ...a]);
      const cases: [string[], string][] = [
        [["--sample-s", "5"], "--sample-s applies to a mix (soak): give --mix too"],
        [
          ["--mix", "get:100", "--sample-s", "10", "--duration-s", "15"],
          "--sample-s 10 leaves fewer than two samples in the mix's 15 s (--duration-s or --duration)",
        ],
        [["--mix", "get:100", "--sample-s", "0"], "--sample-s must be a positive integer (got '0')"],
        [
          ["--mix", "get:100", "--duration", "2x"],
          "--duration must be a duration such as 3h, 90m, 1h30m or 45s (got '2x')",
        ],
        [
          ["--mix", "get:100", "--duration", "1m", "--duration-s", "60"],
          "--duration and --duration-s both give a mix's duration: give one",
        ],
        [["--duration", "3h"], "--duration applies to a mix: give --mix too"],
      ];
      for (const [args, message] of cases) {
        const r = await bench(...args);
        expect(r.code, args.join(" ")).toBe(2);
        expect(r.stderr, args.join(" ")).toContain(message);
      }
      // A hang guard, not a speed bound: a minute per CLI start (six here; each ~2 s of CPU, far more on a loaded machine).
    },
    6 * 60_000,
  );

  it("benchmark.soak is validated like benchmark.mix; the deployed Job runs it while its log stays under the kubelet's rotation", () => {
    const parse = (benchmark: Record<string, unknown>) =>
      parseStackConfig({
        "aws:region": "eu-west-1",
        "benchmark": { enabled: false, loadgenImage: "registry.example/vload:1", ...benchmark },
      });
    expect(
      parse({ mix: "get:80,set:20", durationSeconds: 10_800, soak: { sampleSeconds: 5 } }).config.benchmark.soak,
    ).toEqual({ sampleSeconds: 5 });
    expect(() => parse({ soak: { sampleSeconds: 5 } })).toThrow(
      /benchmark\.soak.*samples a mix: set benchmark\.mix too/,
    );
    expect(() => parse({ mix: "get:100", soak: { sampleSeconds: 20 } })).toThrow(
      /benchmark\.soak\.sampleSeconds.*20 s leaves fewer than two samples in benchmark\.durationSeconds \(30 s\)/,
    );
    expect(() => parse({ mix: "get:100", soak: { sampleSeconds: 0 } })).toThrow(ConfigError);
    // A soak runs once: benchmark.repeat defaults to 1 for it, and more is refused.
    expect(workloadFromConfig(parse({ mix: "get:100", soak: { sampleSeconds: 5 } }).config).repeat).toBe(1);
    expect(workloadFromConfig(parse({ mix: "get:100" }).config).repeat).toBe(3);
    expect(workloadFromConfig(parse({ repeat: 5 }).config).repeat).toBe(5);
    expect(() => parse({ mix: "get:100", soak: { sampleSeconds: 5, every: 1 } })).toThrow(/benchmark\.soak/);
    // 3 h sampled every 5 s over the default replication stack's 4 members: 2160 lines of ~2.3 KB, about 5 MiB.
    expect(
      parse({ enabled: true, mix: "get:100", durationSeconds: 10_800, soak: { sampleSeconds: 5 } }).config.benchmark
        .soak,
    ).toEqual({ sampleSeconds: 5 });
    // 12 h every 5 s: about 19 MiB, refused naming the smallest interval that fits (12 s).
    expect(() => parse({ enabled: true, mix: "get:100", durationSeconds: 43_200, soak: { sampleSeconds: 5 } })).toThrow(
      /benchmark\.soak\.sampleSeconds.*8640 samples of 4 members' INFO would log about 19 MiB, over the 8 MiB .*raise sampleSeconds to at least 12 s/,
    );
  });
});
