/**
 * npm run bench:loadgen — the load generator (vload, loadgen/) against the benchmark client
 * (valkey-benchmark or redis-benchmark) on the same target, with the same connections, pipeline
 * and value size: GET and SET against one standalone server and against a 3-primary cluster. The
 * bar: vload reaches at least 0.8x the benchmark client's rps, so what a mix, an open loop or a
 * soak measures is the server, not the client.
 *
 * Method. Servers without persistence (an AOF rewrite mid-run would be noise); every key of the
 * keyspace written by both clients first (their key shapes differ in cluster mode: the benchmark
 * client tags each connection's keys to one node), so a GET finds a value whichever client asks.
 * Then `--rounds` rounds; in each, per target and test, the two clients run back to back for
 * about `--seconds` each, their order swapped every round (A B, B A, ...) so neither always
 * runs on a machine the other just warmed. Per client: the median rps over the rounds and its
 * min–max; the ratio of the medians; each round's paired ratio (vload ÷ the client right next to
 * it), whose median decides PASS. Each run's CPU use is printed as a share of the CPUs the client
 * may use, so a client that saturated its CPUs is visible. Exits 1 when a ratio misses the bar.
 *
 * Flags: --rounds N (3), --seconds S (3), --clients C (50), --pipeline P (16), --datasize D (256),
 * --keyspace K (100000), --bar X (0.8).
 */
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import { resolveBinaries, resolveLoadgen, type ResolvedTool } from "../binaries.js";
import { startLocalCluster } from "../local/local-cluster.js";
import { LocalFleet } from "../local/valkey-process.js";
import { runWorkload } from "../run/benchmark-runner.js";
import { runMix } from "../run/mix-runner.js";
import type { ResultMode } from "../run/result-row.js";
import { CpuSampler } from "../sweep/process-cpu.js";
import { SEED_WORKLOAD, type BenchmarkTest, type Workload } from "../../vocabulary/workload.js";
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";
import { wholeFlag } from "./perf-args.js";

interface Target {
  label: string;
  mode: ResultMode;
  endpoint: NodeEndpoint & { cluster: boolean };
  members: NodeEndpoint[];
}

interface Run {
  rps: number;
  /** CPU seconds ÷ (wall seconds × the CPUs the client may use). */
  cpuShare: number;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const fmt = (n: number): string => Math.round(n).toLocaleString("en-US");
const pct = (x: number): string => `${Math.round(100 * x)} %`;

function options() {
  const { values } = parseArgs({
    options: Object.fromEntries(["rounds", "seconds", "clients", "pipeline", "datasize", "keyspace", "bar"].map((k) => [k, { type: "string" as const }])),
  });
  const bar = values.bar === undefined ? 0.8 : Number(values.bar);
  if (!(bar > 0)) throw new Error(`--bar must be a number > 0 (got ${values.bar})`);
  return {
    rounds: wholeFlag("rounds", values.rounds, 3),
    seconds: wholeFlag("seconds", values.seconds, 3),
    clients: wholeFlag("clients", values.clients, 50),
    pipeline: wholeFlag("pipeline", values.pipeline, 16),
    dataSize: wholeFlag("datasize", values.datasize, 256),
    keyspace: wholeFlag("keyspace", values.keyspace, 100_000),
    bar,
  };
}
type Options = ReturnType<typeof options>;

const workloadOf = (o: Options, test: BenchmarkTest): Workload => ({
  ...SEED_WORKLOAD,
  name: "bench-loadgen",
  clients: o.clients,
  pipeline: o.pipeline,
  dataSize: o.dataSize,
  keyspaceLength: o.keyspace,
  tests: [test],
  minDurationSeconds: 0,
});

/** The benchmark client for about `seconds`: its request count scaled from its last rate. */
async function benchmarkClient(o: Options, client: ResolvedTool, t: Target, test: BenchmarkTest, requests: number): Promise<Run> {
  const cpu = new CpuSampler(50);
  const pids: number[] = [];
  try {
    const rows = await runWorkload({
      workload: { ...workloadOf(o, test), requests, maxRequests: requests },
      target: t.endpoint,
      mode: t.mode,
      client,
      serverVersion: "bench",
      timestamp: "20260101-000000",
      onSpawn: (pid, args) => {
        if (!args.includes("ping")) {
          pids.push(pid);
          cpu.track(pid);
        }
      },
    });
    const row = rows[0];
    if (row === undefined) throw new Error(`${client.path}: no row for ${test}`);
    const cores = Math.min(SEED_WORKLOAD.threads, availableParallelism());
    const seconds = pids.reduce((s, p) => s + cpu.cpuSeconds(p), 0);
    return { rps: row.rps, cpuShare: seconds / (row.duration_s * cores) };
  } finally {
    cpu.stop();
  }
}

async function generator(o: Options, vload: string, t: Target, test: BenchmarkTest): Promise<Run> {
  const r = await runMix({
    workload: { ...workloadOf(o, test), mix: [{ test, percent: 100 }], durationSeconds: o.seconds },
    target: t.endpoint,
    mode: t.mode,
    serverVersion: "bench",
    timestamp: "20260101-000000",
    members: t.members,
    loadgen: vload,
  });
  const row = r.rows.find((x) => x.test === "MIX");
  if (row === undefined) throw new Error("vload: no MIX row");
  const c = r.generator.cpu;
  return { rps: row.rps, cpuShare: c.cpuSeconds / (c.wallSeconds * c.cores) };
}

async function targets(fleet: LocalFleet): Promise<Target[]> {
  const server = { appendonly: false, save: "" };
  const one = await fleet.start({ name: "bench-loadgen", ...server });
  const cluster = await startLocalCluster(fleet, { primaries: 3, replicasPerPrimary: 0, zones: ["a", "b", "c"], server });
  const ep = (n: NodeEndpoint): NodeEndpoint => ({ host: n.host, port: n.port });
  return [
    { label: "standalone", mode: "replication", endpoint: { ...ep(one), cluster: false }, members: [ep(one)] },
    { label: "cluster 3 primaries", mode: "cluster", endpoint: { ...ep(cluster.seed), cluster: true }, members: cluster.nodes.map(ep) },
  ];
}

async function main(): Promise<number> {
  const o = options();
  const { benchmark: client } = resolveBinaries();
  const vload = resolveLoadgen();
  const clientName = `${client.flavor}-benchmark ${client.version}`;
  console.log(
    `bench:loadgen: vload ${vload.version} vs ${clientName}; -c ${o.clients} -P ${o.pipeline} -d ${o.dataSize}, keyspace ${o.keyspace}, ` +
      `${o.rounds} rounds of ~${o.seconds} s per client, target and test; ${availableParallelism()} CPUs shared by servers and client`,
  );
  const fleet = new LocalFleet();
  let ok = true;
  try {
    const all = await targets(fleet);
    for (const t of all) {
      // Every key, both key shapes: the GETs then find values.
      await benchmarkClient(o, client, t, "set", o.keyspace * 10);
      await generator(o, vload.path, t, "set");
    }
    const runs = new Map<string, { client: Run[]; vload: Run[] }>();
    const requests = new Map<string, number>();
    for (let round = 0; round < o.rounds; round++) {
      for (const t of all) {
        for (const test of ["set", "get"] as const) {
          const key = `${t.label} ${test.toUpperCase()}`;
          const r = runs.get(key) ?? { client: [], vload: [] };
          runs.set(key, r);
          const sides = [
            async () => {
              const run = await benchmarkClient(o, client, t, test, requests.get(key) ?? 1_000_000);
              requests.set(key, Math.max(100_000, Math.round(run.rps * o.seconds)));
              r.client.push(run);
            },
            async () => void r.vload.push(await generator(o, vload.path, t, test)),
          ];
          for (const side of round % 2 === 0 ? sides : [...sides].reverse()) await side();
          console.log(`  round ${round + 1} ${key}: ${clientName} ${fmt(r.client.at(-1)?.rps ?? 0)} rps, vload ${fmt(r.vload.at(-1)?.rps ?? 0)} rps`);
        }
      }
    }
    console.log("");
    for (const [key, r] of runs) ok = report(key, clientName, r, o.bar) && ok;
  } finally {
    await fleet.stopAll();
  }
  console.log(ok ? `bench:loadgen: every ratio met the ${o.bar} bar` : `bench:loadgen: a ratio missed the ${o.bar} bar`);
  return ok ? 0 : 1;
}

/** One line per target × test: both clients' medians and ranges, CPU, the ratios against the bar. */
function report(key: string, clientName: string, r: { client: Run[]; vload: Run[] }, bar: number): boolean {
  const c = r.client.map((x) => x.rps);
  const v = r.vload.map((x) => x.rps);
  const paired = v.map((x, i) => x / (c[i] as number));
  const ratio = median(paired);
  const pass = ratio >= bar;
  const span = (xs: number[]) => `${fmt(median(xs))} rps [${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}]`;
  const cpu = (xs: Run[]) => `CPU ${pct(median(xs.map((x) => x.cpuShare)))} of its cores`;
  console.log(
    `${key}: ${clientName} ${span(c)} ${cpu(r.client)}; vload ${span(v)} ${cpu(r.vload)}; ` +
      `ratio of medians ${(median(v) / median(c)).toFixed(2)}; paired ratio median ${ratio.toFixed(2)} [${Math.min(...paired).toFixed(2)}–${Math.max(...paired).toFixed(2)}] ` +
      `vs bar ${bar} → ${(ratio / bar).toFixed(2)}x of bar ${pass ? "PASS" : "FAIL"}`,
  );
  return pass;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench:loadgen: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
