/**
 * The benchmark Job's script, run for real: /bin/sh (dash here) against real valkey-server
 * processes with the local benchmark client in place of the image's valkey-benchmark, the
 * password given through the same env var the Job's secretKeyRef fills. The logs it prints are
 * the fixtures parseJobLog is tested on (captured in this run, not checked in).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { startLocalCluster, type LocalCluster } from "../../harness/local/local-cluster.js";
import { freePort } from "../../harness/local/ports.js";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { SEED_WORKLOAD, type Workload } from "../../vocabulary/workload.js";
import { JobLogError, parseJobLog, parseJobLogRounds, type JobLogMeta } from "../../components/benchmark/job-log.js";
import { buildBenchmarkScript, type BenchmarkScriptOptions } from "../../components/benchmark/job-script.js";
import { PASSWORD_ENV } from "../../benchmarks/run/log-frames.js";
import { runShellScript } from "../support/processes.js";

const client = resolveBinaries().benchmark;
const password = `pw-${Math.random().toString(36).slice(2)}-job`;
const server = { save: "", appendonly: false };

/**
 * Every test re-run exactly once, however busy the machine: 20k requests take well under the 30 s minimum (0.1-0.3 s
 * idle), and the re-run is capped at 200k, after which the rule stops (a 0.5 s minimum left the re-run to the
 * machine's speed: under a CPU hog the first run took longer and was not re-run). One thread: see benchmark-runner.ts.
 */
const RERUN_CAP = 200_000;
const SMALL: Workload = {
  ...SEED_WORKLOAD,
  ...{ name: "job-it", requests: 20_000, threads: 1, keyspaceLength: 100_000, tests: ["set", "get"] },
  ...{ minDurationSeconds: 30, maxRequests: RERUN_CAP },
};

/** The rendered benchmark script run as the Job's container would, against the real client binary. */
function runScript(o: Omit<BenchmarkScriptOptions, "client">, env: Record<string, string> = {}) {
  return runShellScript(buildBenchmarkScript({ ...o, client: client.path }), env);
}

const meta = (mode: JobLogMeta["mode"], workload = SMALL): JobLogMeta => ({
  mode,
  workload,
  serverVersion: "9.1.2",
  timestamp: "20260523-101500",
});
const frames = (log: string, kind: string): string[] =>
  log.split("\n").filter((l) => l.startsWith(`### vbench-${kind}`));

describe("the benchmark Job script against real valkey-server processes", () => {
  const fleet = new LocalFleet();
  let open: ValkeyProcess;
  let locked: ValkeyProcess;
  let cluster: LocalCluster;
  let openLog = "";

  beforeAll(async () => {
    [open, locked, cluster] = await Promise.all([
      fleet.start({ ...server, name: "open" }),
      fleet.start({ ...server, name: "locked", password }),
      startLocalCluster(fleet, { primaries: 3, replicasPerPrimary: 1, zones: ["a", "b", "c"], server }),
    ]);
    const r = await runScript({ workload: SMALL, mode: "replication", target: { host: open.host, port: open.port } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    openLog = r.stdout;
  });
  afterAll(() => fleet.stopAll());

  it("prints a complete framed log and re-runs the short tests", () => {
    expect(frames(openLog, "version")).toEqual([
      expect.stringMatching(/^### vbench-version client=(valkey|redis)-benchmark \d+\.\d+\.\d+/),
    ]);
    expect(frames(openLog, "auth")).toEqual(["### vbench-auth method=none"]);
    const begins = frames(openLog, "begin");
    const ends = frames(openLog, "end");
    expect(begins.length).toBe(ends.length);
    for (const test of ["set", "get"]) {
      expect(begins).toContain(`### vbench-begin test=${test} round=1 run=1 requests=20000`);
      // The first run took < 30 s: a second one at the cap follows, and no third.
      expect(begins).toContain(`### vbench-begin test=${test} round=1 run=2 requests=${RERUN_CAP}`);
      expect(begins.filter((b) => b.includes(`test=${test} `))).toHaveLength(2);
    }
    for (const e of ends)
      expect(e).toMatch(/^### vbench-end test=(set|get) round=1 run=\d exit=0 wall_ms=\d+ cpu_ms=\d+$/);
    expect(frames(openLog, "cpus")).toEqual([
      expect.stringMatching(/^### vbench-cpus nproc=[1-9]\d* quota=\S+ period=\d+$/),
    ]);
    expect(openLog.trimEnd().split("\n").at(-1)).toBe("### vbench-done status=0");
    expect(openLog).toMatch(/^"SET","[\d.]+"/m);
  });

  it("parseJobLog turns the real log into the local runner's rows and notes", () => {
    const rows = parseJobLog(openLog, meta("replication"));
    expect(rows.map((r) => r.test)).toEqual(["SET", "GET"]);
    for (const r of rows) {
      expect(r.client_version).toBe(`${client.flavor}-benchmark ${client.version}`);
      expect([r.workload, r.mode, r.server_version, r.timestamp, r.clients, r.pipeline, r.datasize]).toEqual([
        "job-it",
        "replication",
        "9.1.2",
        "20260523-101500",
        50,
        16,
        256,
      ]);
      expect(r.notes).toMatch(/^rerun: first run \d+\.\d\d s < 30 s; requests scaled 20000→200000/);
      expect(r.requests).toBe(RERUN_CAP);
      for (const v of [r.rps, r.p50_ms, r.p95_ms, r.p99_ms, r.avg_ms, r.min_ms, r.max_ms, r.duration_s])
        expect(Number.isFinite(v)).toBe(true);
      expect(r.rps).toBeGreaterThan(0);
      // The row is the re-run's: 200k requests cannot finish in the first run's time scale (< 1 M rps here).
      expect(r.duration_s).toBeGreaterThan(RERUN_CAP / 1_000_000);
    }
  });

  it("a truncated real log is an error naming what is missing, never a row with NaN", () => {
    const lines = openLog.split("\n");
    const lastEnd = lines.findLastIndex((l) => l.startsWith("### vbench-end"));
    const cut = (n: number): string => lines.slice(0, n).join("\n");
    expect(() => parseJobLog(cut(lastEnd), meta("replication"))).toThrow(/ends inside GET run \d \(truncated\?\)/);
    expect(() => parseJobLog(cut(lastEnd + 1), meta("replication"))).toThrow(/no final `### vbench-done` line/);
    const firstGet = lines.findIndex((l) => l.startsWith("### vbench-begin test=get"));
    expect(() => parseJobLog(cut(firstGet), meta("replication"))).toThrow(
      /no run of GET \(truncated\? tests with runs: SET \(round 1\)\)/,
    );
    // Cut after a re-run was due but before it was logged.
    const firstSetEnd = lines.findIndex((l) => l.startsWith("### vbench-end test=set"));
    expect(() => parseJobLog(cut(firstSetEnd + 1), meta("replication"))).toThrow(
      /SET run 2 with \d+ requests is missing \(truncated\?\)/,
    );
    // A data line cut in half.
    const setLine = lines.findIndex((l) => l.startsWith('"SET"'));
    const halved = [...lines.slice(0, setLine), lines[setLine]?.slice(0, 20) ?? "", ...lines.slice(setLine + 1)].join(
      "\n",
    );
    expect(() => parseJobLog(halved, meta("replication"))).toThrow(
      /SET run 1: benchmark output line \d+ is not valid CSV/,
    );
    expect(() => parseJobLog("Error from server (NotFound): pods not found\n", meta("replication"))).toThrow(
      JobLogError,
    );
    expect(() => parseJobLog("", meta("replication"))).toThrow(/empty/);
  });

  it("repeat: the tests interleave across the rounds, each row is the median of its rounds with min–max and its client's CPU", async () => {
    const workload: Workload = { ...SMALL, minDurationSeconds: 0, repeat: 3 };
    const r = await runScript({ workload, mode: "replication", target: { host: open.host, port: open.port } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // set get, set get, set get: never all of one test first.
    expect(frames(r.stdout, "begin").map((b) => /test=(\w+) round=(\d+)/.exec(b)?.slice(1).join("@"))).toEqual([
      "set@1",
      "get@1",
      "set@2",
      "get@2",
      "set@3",
      "get@3",
    ]);
    const rounds = parseJobLogRounds(r.stdout, meta("replication", workload));
    expect(rounds.map((x) => x.map((row) => row.test))).toEqual([
      ["SET", "GET"],
      ["SET", "GET"],
      ["SET", "GET"],
    ]);
    const rows = parseJobLog(r.stdout, meta("replication", workload));
    for (const [i, row] of rows.entries()) {
      const each = rounds.map((x) => x[i]!.rps).sort((a, b) => a - b);
      expect([row.runs, row.rps, row.rps_min, row.rps_max]).toEqual([3, each[1], each[0], each[2]]);
      // One client thread: one usable core; its CPU share measured from the shell's `times`.
      expect(row.client_cores).toBe(1);
      expect(row.client_cpu_pct).toBeGreaterThan(0);
      expect(row.client_bound).toBe(row.client_cpu_pct! >= 90);
    }
    // A log cut after round 2 is missing round 3.
    const lines = r.stdout.split("\n");
    const cut = lines
      .slice(
        0,
        lines.findIndex((l) => l.startsWith("### vbench-begin test=set round=3")),
      )
      .join("\n");
    expect(() => parseJobLog(cut, meta("replication", workload))).toThrow(/no run of SET in round 3 \(truncated\?/);
    expect(() => parseJobLog(r.stdout, meta("replication", { ...workload, repeat: 2 }))).toThrow(
      /a run of set in round 3, which the workload \(2 round\(s\) of set,get\) does not have/,
    );
  });

  it("the log does not match another workload: the re-run rule check catches a different minimum", () => {
    expect(() => parseJobLog(openLog, meta("replication", { ...SMALL, minDurationSeconds: 0.01 }))).toThrow(
      /re-run rule stops after run 1/,
    );
  });

  it("password-protected target: the password comes from the env var, the log never contains it", async () => {
    const r = await runScript(
      {
        workload: { ...SMALL, tests: ["incr"] },
        mode: "replication",
        target: { host: locked.host, port: locked.port },
      },
      { [PASSWORD_ENV]: password },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // redis-benchmark 7 / valkey-benchmark do not read VALKEYCLI_AUTH: the in-pod fallback is -a.
    expect(frames(r.stdout, "auth")).toEqual([expect.stringMatching(/^### vbench-auth method=(env|argv)$/)]);
    expect(r.stdout + r.stderr).not.toContain(password);
    const rows = parseJobLog(r.stdout, meta("replication", { ...SMALL, tests: ["incr"] }));
    expect(rows.map((x) => x.test)).toEqual(["INCR"]);
  });

  it("without the password: exit 3 and an error frame", async () => {
    const r = await runScript({
      workload: SMALL,
      mode: "replication",
      target: { host: locked.host, port: locked.port },
    });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain("### vbench-error authentication to");
    expect(() => parseJobLog(r.stdout, meta("replication"))).toThrow(/benchmark Job stopped: authentication .*NOAUTH/);
  });

  it("an unreachable target: bounded wait, exit 2", async () => {
    const port = await freePort();
    const started = Date.now();
    const r = await runScript({
      workload: SMALL,
      mode: "replication",
      target: { host: "127.0.0.1", port },
      waitSeconds: 1,
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/### vbench-error 127\.0\.0\.1:\d+ did not answer PING within 1 s/);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("cluster mode through one seed with --cluster", async () => {
    const w: Workload = { ...SMALL, tests: ["set"] };
    const r = await runScript({
      workload: w,
      mode: "cluster",
      target: { host: cluster.seed.host, port: cluster.seed.port },
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const rows = parseJobLog(r.stdout, meta("cluster", w));
    expect(rows).toHaveLength(1);
    expect(rows[0]?.mode).toBe("cluster");
    expect(rows[0]?.notes).toMatch(/^rerun: first run/);
  });
});

describe("the benchmark Job script's rendered argument lists", () => {
  it("refuses a host or client that sh would split or expand, naming the argument", () => {
    const o = { workload: SMALL, mode: "replication" as const, target: { host: "valkey primary", port: 6379 } };
    expect(() => buildBenchmarkScript(o)).toThrow(/argument 'valkey primary' must be non-empty and hold no space/);
    const star = { ...o, target: { host: "valkey-*", port: 6379 } };
    expect(() => buildBenchmarkScript(star)).toThrow(/argument 'valkey-\*'/);
    const cli = { ...o, target: { host: "h", port: 6379 }, cli: "valkey-cli;id" };
    expect(() => buildBenchmarkScript(cli)).toThrow(/barrier cli arguments: argument 'valkey-cli;id'/);
  });
});
