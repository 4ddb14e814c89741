/**
 * The deployed sweep's pure parts (apps/vbench/stack-sweep-plan.ts) and its failure path
 * (apps/vbench/stack-sweep.ts with a recording Automation API stack): shard lists, refusals before
 * anything changes, the config edits of a step and their undo, the shape check of a step's
 * report, rows from a report, and a failed step still destroying and putting the config back.
 * The success path under the real engine is tests/e2e/stack-sweep.test.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { StackReportInput } from "../../benchmarks/report/stack-report-schema.js";
import {
  engineErrors,
  parseStackShards,
  planStackSweep,
  restoreEdits,
  stepEdits,
  stepShapeProblems,
  sweepRowsOf,
  SweepRefused,
  type RawConfig,
} from "../../apps/vbench/stack-sweep-plan.js";
import { deployedShape, runStackSweep, type SweepStack } from "../../apps/vbench/stack-sweep.js";
import { selectFailure, sweepMain } from "../../apps/vbench/stack-sweep-command.js";
import { resultRow } from "../support/result-rows.js";

const scratch = mkdtempSync(join(tmpdir(), "vbench-stack-sweep-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const PASSWORD = "pw-never-printed-7f3a";

/** A cluster stack's config as `pulumi config --json` gives it: valkey as a YAML object, benchmark as JSON text. */
function entries(
  valkey: Record<string, unknown> = {},
  benchmark: Record<string, unknown> | null = { requests: 1000 },
): RawConfig {
  const v = { mode: "cluster", cluster: { primaries: 3, replicasPerPrimary: 1 }, ...valkey };
  return {
    "valkey-on-eks:platform": { value: "byo" },
    "valkey-on-eks:byo": {
      value: JSON.stringify({ kubeconfig: "/dev/null" }),
      objectValue: { kubeconfig: "/dev/null" },
    },
    "valkey-on-eks:valkey": { value: JSON.stringify(v), objectValue: v },
    ...(benchmark === null ? {} : { "valkey-on-eks:benchmark": { value: JSON.stringify(benchmark) } }),
    "valkey-on-eks:password": { value: PASSWORD, secret: true },
  };
}

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(SweepRefused);
    return (err as Error).message;
  }
  throw new Error("expected a SweepRefused");
};

describe("--shards of a deployed sweep", () => {
  it("takes an increasing list and names what is wrong, saying why it may only increase", () => {
    expect(parseStackShards("3, 6,9")).toEqual([3, 6, 9]);
    expect(refusal(() => parseStackShards("6,3"))).toMatch(
      /^--shards must increase strictly \(got 6,3\): a deployed sweep only scales up.*refuses fewer primaries/,
    );
    expect(refusal(() => parseStackShards("3"))).toMatch(/--shards needs at least two shard counts/);
    expect(refusal(() => parseStackShards("3,x"))).toMatch(/--shards: 'x' is not a positive whole number/);
  });
});

describe("planning a sweep, before anything changes", () => {
  const plan = (e: RawConfig, shards: number[], o: Partial<Parameters<typeof planStackSweep>[2]> = {}) =>
    planStackSweep(e, shards, { timestamp: "20261123-170000", keep: false, ...o });

  it("a valid cluster stack: one runId per step, the replicas per primary, the stack's workload", () => {
    const p = plan(entries(), [3, 6]);
    expect(p.runIds).toEqual(["sweep-20261123-170000-3shards", "sweep-20261123-170000-6shards"]);
    expect(p.replicasPerPrimary).toBe(1);
    expect(p.workload.requests).toBe(1000);
    expect(p.config.platform).toBe("byo");
  });

  it("refuses replication mode, naming the key", () => {
    expect(refusal(() => plan(entries({ mode: "replication" }), [3, 4]))).toMatch(
      /^valkey\.mode is replication: a shard sweep needs cluster mode/,
    );
  });

  it("refuses a step the config rules refuse (fewer than 3 primaries), naming the step and the key, never the password", () => {
    const msg = refusal(() => plan(entries(), [2, 3]));
    expect(msg).toMatch(
      /^at 2 shards, invalid stack config \(1 problem\):\n {2}valkey\.cluster\.primaries: must be ≥ 3 in cluster mode/,
    );
    expect(msg).not.toContain(PASSWORD);
  });

  it("refuses when the benchmark or the topology check is off", () => {
    expect(refusal(() => plan(entries({}, { enabled: false }), [3, 4]))).toMatch(/^benchmark\.enabled is false/);
    const noVerify = { ...entries(), "valkey-on-eks:checks": { value: JSON.stringify({ verify: false }) } };
    expect(refusal(() => plan(noVerify, [3, 4]))).toMatch(/^checks\.verify is false/);
  });

  it("refuses a deployed stack without --keep, and a first step below what it runs", () => {
    expect(refusal(() => plan(entries(), [3, 4], { deployed: { mode: "cluster", primaries: 3 } }))).toMatch(
      /already deployed \(cluster, 3 primaries\).*pass --keep/,
    );
    expect(refusal(() => plan(entries(), [3, 6], { deployed: { mode: "cluster", primaries: 4 }, keep: true }))).toMatch(
      /^--shards starts at 3, but the stack runs 4 primaries: a deployed sweep only scales up/,
    );
    expect(plan(entries(), [4, 6], { deployed: { mode: "cluster", primaries: 4 }, keep: true }).runIds).toHaveLength(2);
  });

  it("reads what a deployed stack runs from its report output; nothing deployed when there are no outputs", () => {
    expect(deployedShape({})).toBeUndefined();
    expect(
      deployedShape({
        report: { value: { mode: "cluster", topology: { primaries: [{}, {}, {}, {}] } }, secret: false },
      }),
    ).toEqual({
      mode: "cluster",
      primaries: 4,
    });
  });
});

describe("the config edits of a step, and their undo", () => {
  it("edits one leaf of a YAML object with --path, and rewrites a section held as JSON text whole", () => {
    const e = entries();
    expect(stepEdits(e, 6, "sweep-x-6shards")).toEqual([
      { key: "valkey-on-eks:valkey.cluster.primaries", path: true, value: "6" },
      {
        key: "valkey-on-eks:benchmark",
        path: false,
        value: JSON.stringify({ requests: 1000, runId: "sweep-x-6shards" }),
      },
    ]);
    // No benchmark section at all: a --path edit creates it with the runId alone (the rest defaults).
    expect(stepEdits(entries({}, null), 4, "r")[1]).toEqual({
      key: "valkey-on-eks:benchmark.runId",
      path: true,
      value: "r",
    });
  });

  it("puts back the original leaf, removes one that was absent, and restores JSON text verbatim", () => {
    expect(restoreEdits(entries())).toEqual([
      { key: "valkey-on-eks:valkey.cluster.primaries", path: true, value: "3" },
      { key: "valkey-on-eks:benchmark", path: false, value: JSON.stringify({ requests: 1000 }) },
    ]);
    const yamlBench = entries();
    yamlBench["valkey-on-eks:benchmark"] = { value: "{}", objectValue: {} };
    expect(restoreEdits(yamlBench)[1]).toEqual({ key: "valkey-on-eks:benchmark.runId", path: true, value: undefined });
    // A numeric-looking runId would come back as a number through --path: the section is restored whole.
    yamlBench["valkey-on-eks:benchmark"] = { value: '{"runId":"2024"}', objectValue: { runId: "2024" } };
    expect(restoreEdits(yamlBench)[1]).toEqual({
      key: "valkey-on-eks:benchmark",
      path: false,
      value: '{"runId":"2024"}',
    });
  });
});

function report(primaries: number, replicas: number, rps: number[], o: { ok?: boolean } = {}): StackReportInput {
  const row = (test: string, r: number) =>
    resultRow({
      test,
      rps: r,
      clients: 4,
      pipeline: 1,
      datasize: 16,
      timestamp: "20261123-170500",
      duration_s: 2,
      requests: 2000,
      usd_per_million_ops_per_s: 2.5,
    });
  return {
    schemaVersion: 1,
    project: "valkey-on-eks",
    stack: "sw",
    platform: "eks",
    mode: "cluster",
    pods: primaries * (1 + replicas),
    zones: ["a", "b", "c"],
    endpoints: { namespace: "valkey", write: "valkey-cluster.valkey.svc.cluster.local", read: null, port: 6379 },
    topology: {
      ok: o.ok ?? true,
      failureCodes: o.ok === false ? ["SLOTS_UNCOVERED"] : [],
      failures: o.ok === false ? [{ code: "SLOTS_UNCOVERED", message: "x" }] : [],
      primaries: Array.from({ length: primaries }, (_, i) => ({
        address: `10.0.0.${i}:6379`,
        zone: "a",
        slotRanges: [],
        keys: 0,
        replicas: Array.from({ length: replicas }, () => ({ address: "x", zone: "b", crossAz: true })),
      })),
      primariesPerZone: {},
    },
    benchmark: { rows: [row("SET", rps[0] ?? 1), row("GET", rps[1] ?? 1)], csv: "" },
    cost: {
      region: "us-west-2",
      usdPerHour: 1.5,
      priceSource: "table",
      pricingApiError: null,
      valkeyInstanceType: null,
      clientInstanceType: null,
      lines: [],
      missing: [],
    },
    versions: {
      valkeyImage: "valkey/valkey:9.0.2",
      server: "9.0.2",
      client: "valkey-benchmark 9.0.2",
      kubernetesVersion: null,
      karpenterChart: null,
    },
  };
}

describe("a step's report", () => {
  it("passes when it shows the asked-for shape, and names every way it does not", () => {
    expect(stepShapeProblems(report(4, 1, [1, 1]), 4, 1)).toEqual([]);
    expect(stepShapeProblems(report(3, 1, [1, 1]), 4, 1)).toEqual([
      "6 Valkey pods, expected 4 × (1 + 1)",
      "the topology check saw 3 primaries, expected 4",
    ]);
    expect(stepShapeProblems(report(4, 1, [1, 1], { ok: false }), 4, 1)).toEqual([
      "the topology check failed: SLOTS_UNCOVERED",
    ]);
    expect(stepShapeProblems(report(4, 0, [1, 1]), 4, 1)).toContain("4 Valkey pods, expected 4 × (1 + 1)");
  });

  it("becomes sweep rows: rps and latencies as measured, client CPU not measured, the step's cost in the notes", () => {
    const rows = sweepRowsOf(report(4, 1, [1000, 2000]), 4, 1);
    expect(
      rows.map((r) => [r.test, r.shards, r.rps, r.p99_ms, r.client_cpus, r.client_cpu_pct, r.client_saturated]),
    ).toEqual([
      ["SET", 4, 1000, 1.2, null, null, null],
      ["GET", 4, 2000, 1.2, null, null, null],
    ]);
    expect(rows[0]?.notes).toBe("stack sw, 8 pods; usd_per_hour 1.5, usd_per_million_ops_per_s 2.5");
  });
});

/** An Automation API stack that records config edits and answers `up` with canned reports. */
function recordingStack(reports: StackReportInput[]): SweepStack & { calls: string[] } {
  const calls: string[] = [];
  let ups = 0;
  return {
    name: "sw",
    calls,
    getAllConfig: () => Promise.resolve(entries()),
    setConfig: (key, value, path) =>
      Promise.resolve(void calls.push(`set ${key}${path ? " (path)" : ""} = ${value.value}`)),
    removeConfig: (key, path) => Promise.resolve(void calls.push(`rm ${key}${path ? " (path)" : ""}`)),
    outputs: () => Promise.resolve({}),
    up: () => {
      calls.push("up");
      const r = reports[ups++];
      return Promise.resolve({
        stdout: "",
        stderr: "",
        summary: { result: "succeeded" },
        outputs: { report: { value: r, secret: false } },
      } as never);
    },
    destroy: () => Promise.resolve(void calls.push("destroy") as never),
  };
}

describe("runStackSweep's failure path", () => {
  it("a step with the wrong shape stops the sweep, still destroys and puts the config back, and keeps the steps that ran", async () => {
    const stack = recordingStack([report(3, 1, [1000, 2000]), report(3, 1, [1000, 2000])]);
    const err = await runStackSweep({
      stack,
      shards: [3, 4],
      keep: false,
      outputDir: scratch,
      timestamp: "20261123-170000",
    }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(
      /^at 4 shards the stack report does not show the asked-for shape: 6 Valkey pods, expected 4 × \(1 \+ 1\)/,
    );
    expect((err as Error).message).toContain(`the steps that ran are in ${join(scratch, "20261123-170000")}`);
    expect(stack.calls).toEqual([
      "set valkey-on-eks:valkey.cluster.primaries (path) = 3",
      `set valkey-on-eks:benchmark = ${JSON.stringify({ requests: 1000, runId: "sweep-20261123-170000-3shards" })}`,
      "up",
      "set valkey-on-eks:valkey.cluster.primaries (path) = 4",
      `set valkey-on-eks:benchmark = ${JSON.stringify({ requests: 1000, runId: "sweep-20261123-170000-4shards" })}`,
      "up",
      "destroy",
      "set valkey-on-eks:valkey.cluster.primaries (path) = 3",
      `set valkey-on-eks:benchmark = ${JSON.stringify({ requests: 1000 })}`,
    ]);
  });
});

describe("a step whose up fails", () => {
  /** What the Automation API's CommandError says of a failed up: the engine's whole output, diagnostics inside. */
  const FAILED_UP = [
    "code: 255",
    " stdout: Updating (sw):",
    " ~  kubernetes:apps/v1:StatefulSet valkey-cluster-members updated (0.53s) [diff: ~spec]",
    "Diagnostics:",
    "  pulumi-nodejs:dynamic:Resource (valkey-cluster-bootstrap-run):",
    "    error: valkey-cluster-7: connect ECONNREFUSED 127.120.3.2:6379",
    "",
    "  pulumi:pulumi:Stack (sw):",
    "    error: update failed",
    "",
    "Resources:",
    "    ~ 3 updated",
    "    2 errored",
    " stderr: error: update failed",
  ].join("\n");

  it("engineErrors: every error line once, in order; none in a text without them", () => {
    expect(engineErrors(FAILED_UP)).toEqual([
      "valkey-cluster-7: connect ECONNREFUSED 127.120.3.2:6379",
      "update failed",
    ]);
    expect(engineErrors("code: 1\n stdout: nothing went wrong here")).toEqual([]);
  });

  it("stops the sweep with the engine's errors on the first line, the whole text after; still destroys", async () => {
    const stack = recordingStack([report(3, 1, [1000, 2000])]);
    const up = stack.up.bind(stack);
    let ups = 0;
    stack.up = (opts) => {
      if (++ups < 2) return up(opts);
      stack.calls.push("up");
      return Promise.reject(new Error(FAILED_UP));
    };
    const err = await runStackSweep({
      stack,
      shards: [3, 4],
      keep: false,
      outputDir: scratch,
      timestamp: "20261123-172000",
    }).catch((e: unknown) => e as Error);
    const lines = (err as Error).message.split("\n");
    expect(lines[0]).toBe(
      "at 4 shards, pulumi up failed: valkey-cluster-7: connect ECONNREFUSED 127.120.3.2:6379 | update failed",
    );
    expect((err as Error).message).toContain(FAILED_UP);
    expect(stack.calls.filter((c) => c === "up" || c === "destroy")).toEqual(["up", "up", "destroy"]);
  });
});

describe("runStackSweep with --keep", () => {
  it("leaves the stack up at the last step with its config saying so: no destroy, no undo; files written", async () => {
    const stack = recordingStack([report(3, 1, [1000, 2000]), report(4, 1, [1300, 2600])]);
    const r = await runStackSweep({
      stack,
      shards: [3, 4],
      keep: true,
      outputDir: scratch,
      timestamp: "20261123-171000",
    });
    expect(r.destroyed).toBe(false);
    expect(stack.calls.filter((c) => c === "up")).toHaveLength(2);
    expect(stack.calls.at(-1)).toBe("up");
    expect(r.rows.map((x) => [x.shards, x.test, x.scale])).toEqual([
      [3, "SET", 1],
      [3, "GET", 1],
      [4, "SET", 1.3],
      [4, "GET", 1.3],
    ]);
    expect(r.rows[2]?.exponent).toBeCloseTo(Math.log(1.3) / Math.log(4 / 3), 9);
    expect(r.stepReports.map((p) => p.slice(r.runDir.length))).toEqual([
      "/raw/stack-report-3-shards.json",
      "/raw/stack-report-4-shards.json",
    ]);
    expect(r.reportPath).toBe(join(r.runDir, "report.html"));
  });
});

describe("sweep:stack flags", () => {
  it("exits 2 naming the flag, before selecting any stack", async () => {
    const err = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const select = vi.fn();
    try {
      expect(await sweepMain(["--stack", "sw", "--shards", "6,3"], select)).toBe(2);
      expect(await sweepMain(["--shards", "3,4"], select)).toBe(2);
      expect(await sweepMain(["--stack", "sw", "--shards", "3,4", "--bogus"], select)).toBe(2);
      const text = err.mock.calls.map((c) => String(c[0])).join("");
      expect(text).toContain("sweep:stack: --shards must increase strictly (got 6,3)");
      expect(text).toContain("required option '--stack <name>' not specified");
      expect(text).toContain("unknown option '--bogus'");
      expect(select).not.toHaveBeenCalled();
    } finally {
      err.mockRestore();
    }
  });

  it("explains a stack that cannot be selected", () => {
    expect(
      selectFailure("code: -2\n stderr: Command failed with ENOENT: pulumi version\nspawn pulumi ENOENT\n"),
    ).toMatch(/the pulumi CLI is not on PATH/);
    expect(
      selectFailure(
        "code: -2\n stderr: Command failed with exit code 6: pulumi stack select\nerror: no stack named 'x' found\n",
      ),
    ).toBe("no stack named 'x' found");
  });
});
