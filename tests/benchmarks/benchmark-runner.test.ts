import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveBinaries, type ResolvedTool } from "../../benchmarks/run/binaries.js";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { freePort } from "../../harness/local/ports.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import type { BenchmarkTarget } from "../../benchmarks/run/benchmark-args.js";
import {
  BenchmarkAuthError,
  BenchmarkRunError,
  runWorkload,
  type RunProgressEvent,
  type RunWorkloadOptions,
} from "../../benchmarks/run/benchmark-runner.js";
import type { ResultRow } from "../../benchmarks/run/result-row.js";
import { openClient } from "../../core/topology/connector.js";
import type { Workload } from "../../vocabulary/workload.js";
import { eventually, processesWithMarker } from "../support/processes.js";
import { CpuSampler, pinProcess } from "../../benchmarks/sweep/process-cpu.js";

const password = `pw-${Math.random().toString(36).slice(2)}-secret`;
const timestamp = "20260522-231743";
const client: ResolvedTool = resolveBinaries().benchmark;
const server = { save: "", appendonly: false };

/**
 * 20k requests finish in well under 0.5 s here, so every test is re-run once. One client
 * thread: with --threads ≥ 2 the benchmark client (redis-benchmark 7 and valkey-benchmark alike)
 * only notices a test's end on a 250 ms tick (see the 250 ms test), which makes its rps a lower
 * bound and a re-run's scaled count too small.
 */
const SMALL: Workload = {
  name: "it",
  requests: 20_000,
  clients: 50,
  pipeline: 16,
  dataSize: 256,
  threads: 1,
  keyspaceLength: 100_000,
  tests: ["set", "get"],
  minDurationSeconds: 0.5,
  maxRequests: 5_000_000,
};

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected the run to fail");
}

function expectSaneRow(r: ResultRow, mode: ResultRow["mode"]): void {
  expect(r.mode).toBe(mode);
  expect(r.workload).toBe("it");
  expect(Number.isFinite(r.rps) && r.rps > 0).toBe(true);
  for (const v of [r.avg_ms, r.min_ms, r.p50_ms, r.p95_ms, r.p99_ms, r.max_ms])
    expect(Number.isFinite(v) && v >= 0).toBe(true);
  expect(r.min_ms).toBeLessThanOrEqual(r.p50_ms);
  expect(r.p50_ms).toBeLessThanOrEqual(r.p95_ms);
  expect(r.p95_ms).toBeLessThanOrEqual(r.p99_ms);
  expect(r.p99_ms).toBeLessThanOrEqual(r.max_ms);
  expect(r.max_ms).toBeLessThan(5000);
  expect([r.clients, r.pipeline, r.datasize, r.timestamp]).toEqual([50, 16, 256, timestamp]);
  expect(r.server_version).toBe("9.9.9-test");
  expect(r.client_version).toBe(`${client.flavor}-benchmark ${client.version}`);
  // Re-run: the first 20k-request run was shorter than 0.5 s.
  expect(r.notes).toMatch(/^rerun: first run 0\.\d\d s < 0\.5 s; requests scaled 20000→\d+/);
  // The row is the last run: the last "→N" (a second re-run happens when the first under-shot).
  const scaledTo = Number([...r.notes.matchAll(/→(\d+)/g)].at(-1)?.[1]);
  expect(r.requests).toBe(scaledTo);
  expect(r.requests).toBeGreaterThan(20_000);
  // ceil(rps × 0.5 × 1.1) aims at 0.55 s and is re-run while shorter than 0.5 s, at most MAX_RERUNS times: a row
  // still shorter says so (the rate can change between runs on a busy machine), it never passes silently.
  if (r.duration_s < 0.5) expect(r.notes, `a ${r.duration_s} s row`).toMatch(/re-run still 0\.\d\d s < 0\.5 s/);
  expect(r.duration_s).toBeLessThan(5);
}

describe("runWorkload against real valkey-server processes", () => {
  const fleet = new LocalFleet();
  let standalone: ValkeyProcess;
  let locked: ValkeyProcess;
  let cluster: LocalCluster;
  const rawDir = mkdtempSync(join(tmpdir(), "bench-raw-"));

  const opts = (target: BenchmarkTarget, over: Partial<RunWorkloadOptions> = {}): RunWorkloadOptions => ({
    workload: SMALL,
    target,
    mode: target.cluster ? "cluster" : "replication",
    client,
    serverVersion: "9.9.9-test",
    timestamp,
    ...over,
  });
  const at = (p: ValkeyProcess, isCluster = false): BenchmarkTarget => ({
    host: p.host,
    port: p.port,
    cluster: isCluster,
  });

  beforeAll(async () => {
    [standalone, locked, cluster] = await Promise.all([
      fleet.start({ ...server, name: "standalone" }),
      fleet.start({ ...server, name: "locked", password }),
      startLocalCluster(fleet, { primaries: 3, replicasPerPrimary: 1, zones: ["a", "b", "c"], server }),
    ]);
  });
  afterAll(async () => {
    await fleet.stopAll();
    rmSync(rawDir, { recursive: true, force: true });
  });

  it("replication mode (the primary): rows with real figures, short tests re-run, raw output kept", async () => {
    const events: RunProgressEvent[] = [];
    const rows = await runWorkload(opts(at(standalone), { rawDir, onProgress: (e) => events.push(e) }));
    expect(rows.map((r) => r.test)).toEqual(["SET", "GET"]);
    for (const r of rows) expectSaneRow(r, "replication");
    // Each test: one run, one or more re-runs (while still shorter than the minimum), done.
    const phases = events.map((e) => `${e.test}:${e.phase}`).join(" ");
    expect(phases).toMatch(/^set:run( set:rerun){1,3} set:done get:run( get:rerun){1,3} get:done$/);
    expect(events.find((e) => e.phase === "done")?.row).toEqual(rows[0]);
    // One raw file per process: run 1, re-runs 2.. (as many as the events say).
    const reruns = (t: string): number => events.filter((e) => e.test === t && e.phase === "rerun").length;
    const wantRaw = ["get", "set"].flatMap((t) =>
      Array.from({ length: 1 + reruns(t) }, (_, i) => `replication-${t}-${i + 1}.txt`),
    );
    expect(
      readdirSync(rawDir)
        .filter((f) => f.startsWith("replication-"))
        .sort(),
    ).toEqual(wantRaw.sort());
    const raw = readFileSync(join(rawDir, `replication-set-${1 + reruns("set")}.txt`), "utf8");
    expect(raw).toContain(`-n ${rows[0]?.requests} -c 50 -P 16 -d 256 --threads 1 -r 100000 -t set --csv`);
    expect(raw).toMatch(/"SET","[\d.]+"/);
  });

  it("cluster mode (--cluster via one seed): rows with real figures, keys land on every primary", async () => {
    const rows = await runWorkload(opts(at(cluster.seed, true), { rawDir }));
    expect(rows.map((r) => r.test)).toEqual(["SET", "GET"]);
    for (const r of rows) expectSaneRow(r, "cluster");
    expect(existsSync(join(rawDir, "cluster-set-2.txt"))).toBe(true);
    for (const p of cluster.primaries) {
      const c = await openClient(p.host, p.port, p.address, {});
      try {
        expect(await c.dbsize()).toBeGreaterThan(1000);
      } finally {
        c.disconnect();
      }
    }
  });

  it("honours maxRequests when scaling a re-run, and says so", async () => {
    const w: Workload = { ...SMALL, requests: 2000, tests: ["get"], minDurationSeconds: 3, maxRequests: 9000 };
    const [row] = await runWorkload(opts(at(standalone), { workload: w }));
    expect(row?.requests).toBe(9000);
    expect(row?.notes).toMatch(
      /^rerun: first run \d\.\d\d s < 3 s; requests scaled 2000→9000; capped at maxRequests 9000 \(wanted \d+\); re-run still \d\.\d\d s < 3 s$/,
    );
  });

  it("does not re-run a test that ran long enough", async () => {
    const w: Workload = { ...SMALL, tests: ["incr"], minDurationSeconds: 0.01 };
    const events: string[] = [];
    const [row] = await runWorkload(opts(at(standalone), { workload: w, onProgress: (e) => events.push(e.phase) }));
    expect(events).toEqual(["run", "done"]);
    expect(row?.requests).toBe(20_000);
    expect(row?.notes).toBe("");
  });

  it("a client that cannot take the password from its environment fails the probe with BenchmarkAuthError", async () => {
    const argvs: string[][] = [];
    const err = await rejection(
      runWorkload(opts(at(locked), { password, onSpawn: (_pid, args) => argvs.push([...args]) })),
    );
    expect(err).toBeInstanceOf(BenchmarkAuthError);
    // redis-benchmark 7.0.15 (this machine's client) only reads -a.
    expect(err.message).toContain(`${client.path.split("/").pop()} ${client.version}`);
    expect(err.message).toMatch(
      /only accepts a password on its command line \(-a\), which would expose it in the process list/,
    );
    expect(err.message).toMatch(/runs password-less on loopback/);
    expect(err.message).not.toContain(password);
    expect(err.stack ?? "").not.toContain(password);
    expect(argvs).toHaveLength(1); // the probe only: no test ran
    expect(argvs.flat().join(" ")).not.toContain(password);
  });

  it("a password-protected target without a password is named as such", async () => {
    const err = await rejection(runWorkload(opts(at(locked))));
    expect(err).toBeInstanceOf(BenchmarkAuthError);
    expect(err.message).toMatch(/requires a password, but none was given/);
  });

  it("a dead port is a clear error before anything is spawned", async () => {
    const port = await freePort();
    const spawned: number[] = [];
    const started = Date.now();
    const err = await rejection(
      runWorkload(opts({ host: "127.0.0.1", port, cluster: false }, { onSpawn: (pid) => spawned.push(pid) })),
    );
    expect(err).toBeInstanceOf(BenchmarkRunError);
    expect(err.message).toBe(
      `cannot benchmark replication: 127.0.0.1:${port} does not accept connections (ECONNREFUSED)`,
    );
    expect(spawned).toEqual([]);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  // Both clients stop a threaded run only from their 250 ms throughput timer: showThroughput's
  // `aeStop` under `config.num_threads` (redis src/redis-benchmark.c 7.0, valkey-io/valkey
  // src/valkey-benchmark.c), while clientDone stops at once only without threads. So the test runs
  // against whichever client is installed, and names it.
  it(`${client.flavor}-benchmark ${client.version} with --threads ≥ 2 measures whole 250 ms ticks: the tool's window is a multiple of 0.25 s`, async () => {
    const w: Workload = { ...SMALL, threads: 2, requests: 10_000, tests: ["get"], minDurationSeconds: 0 };
    const [row] = await runWorkload(opts(at(standalone), { workload: w }));
    const windowS = (row?.requests ?? 0) / (row?.rps ?? 1);
    // 10k pipelined GETs take a few ms on an idle machine, yet the tool reports ~251 ms (rps ≈ 39,841);
    // on a loaded one the run may span two or more ticks (0.5 s seen under a CPU hog), never a
    // window between ticks. A tool measuring in ms would report a few ms here: 0 ticks, failing.
    const ticks = Math.round(windowS / 0.25);
    expect(ticks, `window ${windowS} s`).toBeGreaterThanOrEqual(1);
    expect(Math.abs(windowS - ticks * 0.25), `window ${windowS} s`).toBeLessThan(0.02);
  });

  it("every row records the benchmark process's CPU: pinned to one CPU with taskset, min(--threads 2, 1 CPU) = 1 core; the rusage agrees with a /proc sampler", async () => {
    const sampler = new CpuSampler(20);
    const pids: number[] = [];
    const w: Workload = { ...SMALL, threads: 2, requests: 40_000, tests: ["set"], minDurationSeconds: 1 };
    try {
      const [row] = await runWorkload(
        opts(at(standalone), {
          workload: w,
          onSpawn: (pid) => {
            pinProcess(pid, [0]);
            sampler.track(pid);
            pids.push(pid);
          },
        }),
      );
      expect(row?.client_cores).toBe(1);
      expect(row?.client_bound).toBe((row?.client_cpu_pct ?? 0) >= 90);
      // CPU seconds of the final run: the children's rusage against the last sample of its process's /proc/<pid>/stat.
      const rusage = ((row?.client_cpu_pct ?? 0) / 100) * (row?.duration_s ?? 0);
      const sampled = sampler.cpuSeconds(pids.at(-1) as number);
      expect(rusage).toBeGreaterThan(0);
      expect(Math.abs(rusage - sampled), `rusage ${rusage} s, sampled ${sampled} s`).toBeLessThan(0.05 + 0.2 * rusage);
    } finally {
      sampler.stop();
    }
  });

  it("abort kills the running benchmark child", async () => {
    const w: Workload = { ...SMALL, requests: 50_000_000, tests: ["set"], minDurationSeconds: 0 };
    const pids: number[] = [];
    const ac = new AbortController();
    const run = runWorkload(
      opts(at(standalone), {
        workload: w,
        signal: ac.signal,
        onSpawn: (pid) => {
          pids.push(pid);
          if (pids.length === 2) setTimeout(() => ac.abort(), 300); // the probe is spawn 1
        },
      }),
    );
    const started = Date.now();
    const err = await rejection(run);
    expect(err.name).toBe("AbortError");
    expect(pids).toHaveLength(2);
    expect(() => process.kill(pids[1] as number, 0)).toThrow(/ESRCH/); // the child is gone
    expect(Date.now() - started).toBeLessThan(5000);
  });

  /** Starts tests/support/benchmark-host.ts (a real runner, real client) and waits for its benchmark child. */
  async function hostWithRunningBenchmark(
    end: "signal" | "exit",
  ): Promise<{ host: ChildProcess; pid: number; marker: string; exited: Promise<unknown> }> {
    const marker = `VBENCH_HOST_MARKER=${Math.random().toString(36).slice(2)}`;
    const [k, v] = marker.split("=") as [string, string];
    const host = spawn(process.execPath, ["--import", "tsx", "tests/support/benchmark-host.ts"], {
      env: { ...process.env, [k]: v, BENCH_HOST: standalone.host, BENCH_PORT: String(standalone.port), BENCH_END: end },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise((resolve) => host.once("exit", (code, sig) => resolve({ code, sig })));
    let out = "";
    host.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    host.stderr.setEncoding("utf8").on("data", (d: string) => (out += d));
    const pid = await eventually(
      "the benchmark child to start",
      30_000,
      () => {
        if (host.exitCode !== null) throw new Error(`benchmark host exited early: ${out}`);
        const m = /spawned (\d+)/.exec(out);
        return Promise.resolve(m === null ? undefined : Number(m[1]));
      },
      100,
    );
    return { host, pid, marker, exited };
  }

  it.each(["signal", "exit"] as const)(
    "a benchmark child does not outlive its parent process (parent ends by %s)",
    async (end) => {
      const { host, pid, marker, exited } = await hostWithRunningBenchmark(end);
      try {
        expect(processesWithMarker(marker)).toContain(pid); // the real client is running, under its parent
        if (end === "signal") host.kill("SIGTERM");
        expect(await exited).toEqual(end === "signal" ? { code: 143, sig: null } : { code: 3, sig: null });
        // The reaper SIGKILLs the child before the parent exits; give the kernel a moment to reap it.
        const left = await eventually(
          "the benchmark child to be gone",
          5_000,
          () => Promise.resolve(processesWithMarker(marker).length === 0 ? [] : undefined),
          100,
        ).catch(() => processesWithMarker(marker));
        expect(left).toEqual([]);
      } finally {
        for (const p of processesWithMarker(marker)) process.kill(p, "SIGKILL"); // a failed run leaves nothing behind
      }
    },
  );
});

describe("runWorkload failure reporting (scripted client)", () => {
  const dir = mkdtempSync(join(tmpdir(), "fake-bench-"));
  const fleet = new LocalFleet();
  let target: BenchmarkTarget;

  /** A stand-in client: answers the probe like the real one, then runs `body` for the test. */
  function fakeClient(name: string, body: string): ResolvedTool {
    const path = join(dir, name);
    const header =
      '"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"';
    writeFileSync(
      path,
      [
        "#!/bin/sh",
        `case " $* " in *" -t ping "*) echo '${header}'; echo '"PING_INLINE","inf","0.1","0.1","0.1","0.1","0.1","0.1"'; exit 0;; esac`,
        body,
        "",
      ].join("\n"),
    );
    chmodSync(path, 0o755);
    return { path, flavor: "valkey", version: "0.0.1" };
  }

  beforeAll(async () => {
    const p = await fleet.start({ ...server, name: "fake-target" });
    target = { host: p.host, port: p.port, cluster: false };
  });
  afterAll(async () => {
    await fleet.stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (c: ResolvedTool): Promise<ResultRow[]> =>
    runWorkload({
      workload: { ...SMALL, tests: ["incr"] },
      target,
      mode: "replication",
      client: c,
      serverVersion: "x",
      password,
      timestamp,
    });

  it("non-zero exit names the test, the exit code and the stderr tail, password redacted", async () => {
    const c = fakeClient("exit3", 'echo "line one" >&2; echo "fatal: the end ($REDISCLI_AUTH)" >&2; exit 3');
    const err = await rejection(run(c));
    expect(err).toBeInstanceOf(BenchmarkRunError);
    const e = err as BenchmarkRunError;
    expect([e.test, e.exitCode, e.exitSignal]).toEqual(["INCR", 3, null]);
    expect(e.message).toMatch(
      /^exit3 INCR against 127\.0\.0\.1:\d+ \(replication\) failed \(exit code 3\); stderr tail:\nline one\nfatal: the end \(\*\*\*\)$/,
    );
    expect(e.message).not.toContain(password);
    expect(e.stderrTail).not.toContain(password);
  });

  it("death by signal is reported as such", async () => {
    const err = await rejection(run(fakeClient("killed", "kill -9 $$")));
    expect(err.message).toMatch(/INCR .* failed \(signal SIGKILL\)/);
  });

  it("output that does not parse is reported with the parser's reason", async () => {
    const err = await rejection(run(fakeClient("garbage", "echo 'Segmentation fault'; exit 0")));
    expect(err).toBeInstanceOf(BenchmarkRunError);
    expect(err.message).toMatch(
      /INCR .* printed output that does not parse: benchmark output has no CSV header.*`Segmentation fault`/,
    );
  });

  it("a client stuck after 'Could not connect' is killed instead of spinning forever", async () => {
    const started = Date.now();
    const err = await rejection(
      run(
        fakeClient("spin", 'echo "Could not connect to Redis at 127.0.0.1:1: Connection refused" >&2; exec sleep 30'),
      ),
    );
    expect(err.message).toMatch(/killed: Could not connect to Redis at 127\.0\.0\.1:1: Connection refused/);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
