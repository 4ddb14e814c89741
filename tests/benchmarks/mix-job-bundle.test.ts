/**
 * The deployed benchmark Job's mix as the pod runs it: the Job manifest is built for a local target
 * (buildBenchmarkJob, the mix branch), its container's env is taken from that manifest (the password
 * standing in for the secretKeyRef), and the esbuild bundle `mix.mjs` runs under a plain `node` (no
 * node_modules next to it) against REAL local topologies: a Sentinel replication topology through
 * its HAProxy write endpoint, and a 3 × 1 cluster. Its log must parse with the BenchmarkResults
 * parser (parseMixJobLog) into the mix's rows, the served shares from every member's INFO
 * commandstats, and p99.9 (with `slo`, the latency-target sweeps too); a refused password and an
 * unreachable target end with their status.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../harness/drill/cluster-target.js";
import type { ReplicationTarget } from "../../harness/drill/replication-target.js";
import { bundleMixScript } from "../../benchmarks/run/mix-bundle.js";
import { LOADGEN_IMAGE_BINARY, LOADGEN_MOUNT, MIX_JOB_FILE, MIX_JOB_MOUNT } from "../../benchmarks/run/mix-job.js";
import { LOADGEN_ENV } from "../../benchmarks/run/loadgen.js";
import { resolveLoadgen } from "../../benchmarks/run/binaries.js";
import { PASSWORD_ENV } from "../../benchmarks/run/log-frames.js";
import {
  BENCHMARK_CONTAINER,
  buildBenchmarkJob,
  type BenchmarkJobManifestArgs,
} from "../../components/benchmark/job-manifest.js";
import { parseMixJobLog } from "../../components/benchmark/job-log.js";
import { SEED_WORKLOAD, type Workload } from "../../vocabulary/workload.js";
import { startTestCluster, startTestReplication } from "../harness/drill-faults.js";
import { runNodeBundle } from "../support/processes.js";
import { downsampleSoak } from "../../benchmarks/run/soak-downsample.js";
import { SOAK_MEMBER_BYTES, SOAK_SAMPLE_BYTES } from "../../config/rules.js";

const PASSWORD = "mix-bundle-password-5c1e";
let dir: string;
let script: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mix-bundle-"));
  script = join(dir, MIX_JOB_FILE);
  writeFileSync(script, await bundleMixScript());
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const workload: Workload = {
  ...SEED_WORKLOAD,
  name: "mix-job",
  clients: 4,
  pipeline: 4,
  keyspaceLength: 10_000,
  mix: [
    { test: "get", percent: 80 },
    { test: "set", percent: 20 },
  ],
  durationSeconds: 3,
};

const PLACEMENT = {
  nodeSelector: {},
  tolerations: [],
  zones: ["zone-a", "zone-b", "zone-c"],
  storageClass: "standard",
};

/** The Job manifest's arguments for a mix against `target` (waiting at most 3 s for it). */
const jobArgs = (
  mode: "cluster" | "replication",
  target: { host: string; port: number },
  w: Workload = workload,
): BenchmarkJobManifestArgs => ({
  namespace: "valkey",
  name: "vbench-test",
  image: "valkey:test",
  mode,
  target,
  workload: w,
  secretName: "valkey-auth",
  passwordKey: "password",
  placement: PLACEMENT,
  resources: { cpu: "1", memory: "1Gi" },
  waitSeconds: 3,
  mixRunner: { image: "node:test", configMap: "vbench-test-mix", loadgenImage: "vload:test" },
});

/** The container the manifest renders for this target: its command and its env (secretKeyRef → the password). */
function renderedContainer(
  mode: "cluster" | "replication",
  target: { host: string; port: number },
  w: Workload = workload,
) {
  const job = buildBenchmarkJob(jobArgs(mode, target, w));
  const c = job.spec.template.spec?.containers.find((x) => x.name === BENCHMARK_CONTAINER);
  if (c === undefined) throw new Error("no benchmark container");
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.secretKeyRef !== undefined) env[e.name] = PASSWORD;
  }
  // The init container's copy of the load generator: here the one .ci/setup built.
  expect(env[LOADGEN_ENV]).toBe(`${LOADGEN_MOUNT}/vload`);
  env[LOADGEN_ENV] = resolveLoadgen().path;
  return { command: c.command as string[], env, image: c.image };
}

/** Runs mix.mjs as the container would. */
const runMixJob = (env: Record<string, string>) => runNodeBundle(script, { NODE_NO_WARNINGS: "1", ...env });

const meta = (mode: "cluster" | "replication") => ({
  mode,
  workload,
  serverVersion: "9.1.2",
  timestamp: "20261125-120000",
});

describe("mix.mjs (the benchmark Job's bundled mix runner) against real local topologies", () => {
  let replication: ReplicationTarget | undefined;
  let cluster: ClusterTarget | undefined;
  afterAll(async () => {
    await replication?.stop();
    await cluster?.stop();
  });

  it("the manifest runs the bundle from its ConfigMap in the Node image as uid 1000, settings in one env var, the password only by secretKeyRef", () => {
    const c = renderedContainer("replication", { host: "valkey-write.valkey.svc", port: 6379 });
    expect(c.command).toEqual(["node", `${MIX_JOB_MOUNT}/${MIX_JOB_FILE}`]);
    expect(c.image).toBe("node:test");
    const job = buildBenchmarkJob(jobArgs("cluster", { host: "valkey-client", port: 6379 }));
    const pod = job.spec.template.spec!;
    expect(pod.securityContext?.runAsUser).toBe(1000);
    expect(pod.volumes).toContainEqual({ name: "mix-runner", configMap: { name: "vbench-test-mix" } });
    // The load generator: an init container of its image copies it into an emptyDir the Node container mounts
    // read-only.
    expect(pod.initContainers?.map((c) => [c.name, c.image, c.command])).toEqual([
      ["loadgen", "vload:test", [LOADGEN_IMAGE_BINARY, "install", LOADGEN_MOUNT]],
    ]);
    expect(pod.volumes).toContainEqual({ name: "loadgen", emptyDir: { sizeLimit: "64Mi" } });
    expect(pod.containers[0]?.volumeMounts).toContainEqual({
      name: "loadgen",
      mountPath: LOADGEN_MOUNT,
      readOnly: true,
    });
    expect(JSON.stringify(job)).not.toContain(PASSWORD);
    const env = pod.containers[0]?.env ?? [];
    expect(env.find((e) => e.name === PASSWORD_ENV)?.valueFrom?.secretKeyRef).toEqual({
      name: "valkey-auth",
      key: "password",
    });
    // Without a mixRunner a mix is refused; a mixRunner without a mix too.
    const { mixRunner: _runner, ...base } = jobArgs("cluster", { host: "h", port: 1 });
    expect(() => buildBenchmarkJob(base)).toThrow(/mixRunner .* is required/);
    expect(() =>
      buildBenchmarkJob({
        ...base,
        workload: SEED_WORKLOAD,
        mixRunner: { image: "n", configMap: "c", loadgenImage: "l" },
      }),
    ).toThrow(/no mix/);
    expect(() =>
      buildBenchmarkJob({ ...base, clientPods: 2, mixRunner: { image: "n", configMap: "c", loadgenImage: "l" } }),
    ).toThrow(/one client pod/);
  });

  it("replication through the HAProxy write endpoint, two runs (benchmark.repeat): rows parsed by the results' parser, the medians of the runs with min–max, every run's rows, the generator's CPU; served shares from the members' commandstats, p99.9; no password in the log", async () => {
    replication = await startTestReplication(PASSWORD, 1);
    const w = replication.t.proxy!.write;
    const run = await runMixJob(
      renderedContainer("replication", w, { ...workload, durationSeconds: 2, repeat: 2 }).env,
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(PASSWORD);
    const { rows, mix } = parseMixJobLog(run.stdout, meta("replication"));
    console.log(
      `[mix-job] replication: ${rows.map((r) => `${r.test} ${Math.round(r.rps)} rps p99 ${r.p99_ms} ms`).join("; ")}`,
    );
    expect(rows.map((r) => r.test)).toEqual(["GET", "SET", "MIX"]);
    expect(
      rows.every((r) => r.timestamp === "20261125-120000" && r.client_version === "vbench mix (vload)" && r.rps > 0),
    ).toBe(true);
    expect(mix.runs?.map((x) => x.map((r) => r.test))).toEqual([
      ["GET", "SET", "MIX"],
      ["GET", "SET", "MIX"],
    ]);
    for (const [i, r] of rows.entries()) {
      const each = mix.runs!.map((x) => x[i]!.rps);
      expect([r.runs, r.rps_min, r.rps_max]).toEqual([2, Math.min(...each), Math.max(...each)]);
      // The generator's own CPU report (its cores: GOMAXPROCS or a lower cgroup limit).
      expect(r.client_cores).toBe(mix.generator?.cpu.cores);
      expect(r.client_cpu_pct).toBeGreaterThan(0);
    }
    const get = mix.served.commands.find((c) => c.test === "get");
    expect(get?.servedPercent).toBeGreaterThan(78);
    expect(get?.servedPercent).toBeLessThan(82);
    expect(mix.served.total).toBeGreaterThan(100);
    expect(mix.latency.p999_ms.MIX).toBeGreaterThan(0);
    expect(mix.latency.histograms.MIX).toMatch(/Percentile/);
    // The replica's commandstats were read too: it replicated the SETs.
    expect((mix.served as unknown as { members: { primary: boolean }[] }).members.some((m) => !m.primary)).toBe(true);
    // The result line carries every member's byte counters (data transfer): the replica read the SETs' stream.
    const replicaNet = mix.served.members?.find((m) => !m.primary)?.net;
    expect(replicaNet?.replInput ?? 0).toBeGreaterThan(rows.find((r) => r.test === "SET")?.requests ?? Infinity);
    expect(replicaNet?.busSent).toBeNull();
  }, 120_000);

  it("reads on the replicas (benchmark.reads): the generator in the pod sends the GETs to the replica it discovers, the SETs through HAProxy; the replica's commandstats count them", async () => {
    const w = replication!.t.proxy!.write;
    const reads: Workload = { ...workload, reads: "replicas" };
    const run = await runMixJob(renderedContainer("replication", w, reads).env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const { rows, mix } = parseMixJobLog(run.stdout, { ...meta("replication"), workload: reads });
    const members = (
      mix.served as unknown as {
        members: { member: string; primary: boolean; delta: Record<string, { calls: number }> }[];
      }
    ).members;
    const replica = members.find((m) => !m.primary);
    const primary = members.find((m) => m.primary);
    expect(replica?.delta["get"]?.calls ?? 0).toBeGreaterThan(100);
    expect(primary?.delta["get"]?.calls ?? 0).toBe(0);
    expect(rows.find((r) => r.test === "MIX")?.notes).toMatch(/replicas/);
  }, 60_000);

  it("cluster 3 × 1 through one member (the client follows the slot map), open loop at 300/s: rows, the per-second series", async () => {
    cluster = await startTestCluster(PASSWORD, 175);
    const seed = cluster.pods[0]!;
    const open: Workload = { ...workload, rate: 300 };
    const run = await runMixJob(renderedContainer("cluster", { host: seed.host, port: seed.port }, open).env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const { rows, mix } = parseMixJobLog(run.stdout, { ...meta("cluster"), workload: open });
    expect(rows.map((r) => r.test)).toEqual(["GET", "SET", "MIX"]);
    expect(rows.at(-1)?.requests).toBeGreaterThan(0.8 * 300 * 3);
    expect(mix.openLoop?.rate).toBe(300);
    expect(mix.openLoop?.series.length).toBe(3);
    // Every one of the three primaries served part of the mix.
    const primaries = (
      mix.served as unknown as { members: { primary: boolean; delta: Record<string, { calls: number }> }[] }
    ).members.filter((m) => m.primary);
    expect(primaries).toHaveLength(3);
    for (const p of primaries) expect(p.delta["get"]?.calls ?? 0).toBeGreaterThan(0);
    // Cluster mode: the bus bytes from CLUSTER INFO, per member (data transfer).
    expect(mix.served.members?.every((m) => (m.net?.busSent ?? 0) > 0)).toBe(true);
  }, 120_000);

  it("benchmark.slo in the Job: after the mix, three latency-target sweeps of its topology ride on the result line; the parser validates them", async () => {
    const seed = cluster!.pods[0]!;
    // Three runs (benchmark.repeat): the mix three times, then three sweeps.
    const slo: Workload = {
      ...workload,
      durationSeconds: 1,
      slo: { percentile: "p50", boundMs: 50 },
      sloSteps: 2,
      sloStepSeconds: 1,
      repeat: 3,
    };
    const run = await runMixJob(renderedContainer("cluster", { host: seed.host, port: seed.port }, slo).env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const { rows, mix } = parseMixJobLog(run.stdout, { ...meta("cluster"), workload: slo });
    expect(rows.map((r) => r.test)).toEqual(["GET", "SET", "MIX"]);
    const sweep = mix.sloSweep!;
    console.log(
      `[mix-job] slo: ${sweep.runs.map((r) => `ceiling ${Math.round(r.ceiling.rps)}/s → ${r.figure.bound} ${Math.round(r.figure.rps)}/s`).join("; ")}`,
    );
    expect(sweep).toMatchObject({
      mode: "cluster",
      target: { percentile: "p50", boundMs: 50 },
      steps: 2,
      stepSeconds: 1,
      via: `the client Service ${seed.host}:${seed.port}`,
    });
    expect(sweep.runs).toHaveLength(3);
    expect(sweep.summary.runs).toBe(3);
    for (const r of sweep.runs) expect(r.steps.filter((s) => !s.refined).map((s) => s.fraction)).toEqual([0.5, 1]);
    expect(run.stderr).toMatch(/p50 ≤ 50 ms sweep 3\/3: closed-loop ceiling/);
  }, 180_000);

  it("a soak in the Job: one sample line per window (each under the config's size bound), the result carrying the rest; the parser reassembles the series and the step's downsampling keeps its events", async () => {
    const seed = cluster!.pods[0]!;
    const soak: Workload = { ...workload, durationSeconds: 5, soak: { sampleSeconds: 1 } };
    const run = await runMixJob(renderedContainer("cluster", { host: seed.host, port: seed.port }, soak).env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const lines = run.stdout.split("\n").filter((l) => l.startsWith("### vbench-sample "));
    const { mix } = parseMixJobLog(run.stdout, { ...meta("cluster"), workload: soak });
    const record = mix.soak!;
    expect(record.samples.length).toBe(record.sampleCount);
    expect(lines).toHaveLength(record.sampleCount);
    expect(record.sampleCount).toBeGreaterThanOrEqual(4);
    for (const sample of record.samples) expect(sample.members).toHaveLength(6);
    const longest = Math.max(...lines.map((l) => Buffer.byteLength(l)));
    console.log(`[mix-job] soak: ${record.sampleCount} sample lines, the longest ${longest} bytes for 6 members`);
    expect(longest).toBeLessThanOrEqual(SOAK_SAMPLE_BYTES + 6 * SOAK_MEMBER_BYTES);
    // A missing sample line is named, never a shorter series.
    const dropped = run.stdout.replace(lines[1] as string, "");
    expect(() => parseMixJobLog(dropped, { ...meta("cluster"), workload: soak })).toThrow(
      /reports \d+ samples, the log holds \d+ sample lines/,
    );
    const down = downsampleSoak(record, 2);
    expect(down.samples.length).toBeLessThanOrEqual(2);
    expect(down.downsampled).toEqual({ factor: Math.ceil(record.sampleCount / 2), samples: record.sampleCount });
    expect(down.events).toEqual(record.events);
    expect(down.samples.reduce((n, x) => n + x.requests, 0)).toBe(record.samples.reduce((n, x) => n + x.requests, 0));
    expect(Math.max(...down.samples.map((x) => x.max_ms))).toBe(Math.max(...record.samples.map((x) => x.max_ms)));
  }, 60_000);

  it("a refused password ends with status 3, an unreachable target with status 2, each with an error line the parser names", async () => {
    const seed = cluster!.pods[0]!;
    const refused = await runMixJob({
      ...renderedContainer("cluster", { host: seed.host, port: seed.port }).env,
      [PASSWORD_ENV]: "wrong-password",
    });
    expect(refused.code).toBe(3);
    expect(() => parseMixJobLog(refused.stdout, meta("cluster"))).toThrow(/refused the password/);
    const unreachable = await runMixJob(renderedContainer("cluster", { host: "127.0.0.1", port: 1 }).env);
    expect(unreachable.code).toBe(2);
    expect(() => parseMixJobLog(unreachable.stdout, meta("cluster"))).toThrow(/did not answer within 3 s/);
  }, 60_000);
});
