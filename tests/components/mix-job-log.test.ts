/**
 * parseMixJobLog: the BenchmarkResults parser of a Job that ran a mix, on a well-formed log and on
 * every kind of garbage a pod can leave (truncated, an error line, a second result, rows of other
 * commands, fields that are not numbers): each is a JobLogError naming what is wrong, never a row.
 */
import { describe, expect, it } from "vitest";
import { JobLogError, parseMixJobLog } from "../../components/benchmark/job-log.js";
import { MIX_JOB_SETTINGS_ENV, mixJobSettingsFromEnv } from "../../benchmarks/run/mix-job.js";
import { SEED_WORKLOAD, type Workload } from "../../vocabulary/workload.js";
import type { ResultRow } from "../../benchmarks/run/result-row.js";

const workload: Workload = {
  ...SEED_WORKLOAD,
  mix: [
    { test: "get", percent: 80 },
    { test: "set", percent: 20 },
  ],
  durationSeconds: 5,
};
const meta = { mode: "cluster" as const, workload, serverVersion: "9.1.2", timestamp: "20261125-130000" };

function row(test: string): ResultRow {
  return {
    workload: "seed",
    mode: "cluster",
    test,
    rps: 1000,
    p50_ms: 0.5,
    clients: 50,
    pipeline: 16,
    datasize: 256,
    timestamp: "20261125-125959",
    p95_ms: 0.9,
    p99_ms: 1.2,
    duration_s: 5,
    requests: 5000,
    server_version: "9.1.2",
    client_version: "vbench mix (vload)",
    avg_ms: 0.6,
    min_ms: 0.1,
    max_ms: 3,
    notes: "mix get:80,set:20 for 5 s",
  };
}

const result = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    rows: [row("GET"), row("SET"), row("MIX")],
    served: {
      total: 5000,
      commands: [
        { test: "get", servedPercent: 80 },
        { test: "set", servedPercent: 20 },
      ],
      other: {},
      members: [],
    },
    latency: { p999_ms: { GET: 2, SET: 2, MIX: 2 }, histograms: { GET: "x", SET: "x", MIX: "x" } },
    ...over,
  });

const log = (...lines: string[]) =>
  ["### vbench-version client=vbench mix (vload)", "### vbench-auth method=env", ...lines].join("\n");

describe("parseMixJobLog", () => {
  it("a well-formed log: the rows in the mix's order with the Job's timestamp, and what was measured beside them", () => {
    const { rows, mix } = parseMixJobLog(
      log("progress on stderr", `### vbench-result ${result()}`, "### vbench-done status=0"),
      meta,
    );
    expect(rows.map((r) => [r.test, r.timestamp])).toEqual([
      ["GET", meta.timestamp],
      ["SET", meta.timestamp],
      ["MIX", meta.timestamp],
    ]);
    expect(mix.latency.p999_ms.MIX).toBe(2);
    expect("rows" in mix).toBe(false);
  });

  const garbage: [string, string, RegExp][] = [
    ["empty", "", /is empty/],
    [
      "truncated JSON",
      log(`### vbench-result ${result().slice(0, 200)}`, "### vbench-done status=0"),
      /not JSON .*truncated/,
    ],
    ["no result line", log("### vbench-done status=0"), /0 result lines/],
    [
      "two result lines",
      log(`### vbench-result ${result()}`, `### vbench-result ${result()}`, "### vbench-done status=0"),
      /2 result lines/,
    ],
    ["no done line", log(`### vbench-result ${result()}`), /no final/],
    [
      "an error line",
      log("### vbench-error the server did not serve the mix asked for: GET wanted 80%", "### vbench-done status=1"),
      /stopped: the server did not serve/,
    ],
    ["a failed status", log(`### vbench-result ${result()}`, "### vbench-done status=1"), /status 1/],
    [
      "another client",
      log(`### vbench-result ${result()}`, "### vbench-done status=0").replace(
        "vbench mix (vload)",
        "valkey-benchmark 9.1.2",
      ),
      /expected vbench mix/,
    ],
    [
      "rows of other commands",
      log(
        `### vbench-result ${result({ rows: [row("INCR"), row("MIX")], latency: { p999_ms: { INCR: 1, MIX: 1 }, histograms: {} } })}`,
        "### vbench-done status=0",
      ),
      /rows are INCR, MIX, expected GET, SET, MIX/,
    ],
    [
      "a negative rps",
      log(
        `### vbench-result ${result({ rows: [{ ...row("GET"), rps: -1 }, row("SET"), row("MIX")] })}`,
        "### vbench-done status=0",
      ),
      /rows\.0\.rps/,
    ],
    [
      "a p99.9 of no row",
      log(
        `### vbench-result ${result({ latency: { p999_ms: { LPUSH: 1 }, histograms: {} } })}`,
        "### vbench-done status=0",
      ),
      /p99\.9 for LPUSH/,
    ],
    ["an unknown field", log(`### vbench-result ${result({ surprise: 1 })}`, "### vbench-done status=0"), /surprise/],
  ];
  for (const [what, text, message] of garbage) {
    it(`refuses ${what}, naming it`, () => {
      expect(() => parseMixJobLog(text, meta)).toThrow(JobLogError);
      expect(() => parseMixJobLog(text, meta)).toThrow(message);
    });
  }

  it("the pod's settings env is refused field by field (mix-job.ts)", () => {
    const parseMixJobSettings = (text: string | undefined) => mixJobSettingsFromEnv({ [MIX_JOB_SETTINGS_ENV]: text });
    expect(() => parseMixJobSettings(undefined)).toThrow(/VBENCH_MIX is not set/);
    expect(() => parseMixJobSettings("{")).toThrow(/VBENCH_MIX is not JSON/);
    expect(() =>
      parseMixJobSettings(JSON.stringify({ mode: "cluster", target: { host: "h", port: 0 }, workload })),
    ).toThrow(/target\.port/);
    expect(() =>
      parseMixJobSettings(
        JSON.stringify({ mode: "cluster", target: { host: "h", port: 1 }, workload: { ...workload, mix: [] } }),
      ),
    ).toThrow(/workload\.mix/);
  });
});
