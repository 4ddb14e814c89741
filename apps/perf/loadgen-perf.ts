/**
 * npm run bench:loadgen — the load generator (vload, loadgen/) against the benchmark client
 * (valkey-benchmark or redis-benchmark) on the same target, with the same connections, pipeline
 * and value size: GET and SET against one standalone server and against a 3-primary cluster. The
 * bar: vload reaches at least 0.8x the benchmark client's rps, so what a mix, an open loop or a
 * soak measures is the server, not the client.
 *
 * Method. Servers without persistence (an AOF rewrite mid-run would be noise); every key of the
 * keyspace written by each client first, so a GET finds a value whichever client asks. In cluster
 * mode the benchmark client tags each connection's keys to one slot of its node
 * (`key:{tag}:<n>`), and a server's work per request depends on that (Valkey keeps a dictionary per
 * slot: keys spread over every slot cost it more per lookup than keys in one), so vload is run
 * twice: with the same key shape (`keyShape: tagged`, the ratio that decides: the same server
 * work, the clients compared) and with its own spread keys (shown, not judged). Then `--rounds`
 * rounds; in each, per target and test, the clients run back to back for about `--seconds`
 * each, their order rotated every round so none always runs on a machine another just warmed. Per
 * client: the median rps over the rounds and its min–max; the ratio of the medians; each round's
 * paired ratio (vload ÷ the benchmark client of the same round), whose median decides PASS.
 * Two independent checks beside each figure: the client's CPU use as a share of the CPUs it may
 * use (a client at its limit shows), and the servers' own CPU per request they served (INFO cpu
 * and INFO commandstats of every server: equal figures mean the servers did the same work for
 * both clients). Exits 1 when a ratio misses the bar.
 *
 * Flags: --rounds N (3), --seconds S (3), --clients C (50), --pipeline P (16), --datasize D (256),
 * --keyspace K (100000), --bar X (0.8).
 */
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import { resolveBinaries, resolveLoadgen, type ResolvedTool } from "../../benchmarks/run/binaries.js";
import { startLocalCluster } from "../../harness/local/local-cluster.js";
import { LocalFleet } from "../../harness/local/valkey-process.js";
import { runWorkload } from "../../benchmarks/run/benchmark-runner.js";
import { runLoadgen } from "../../benchmarks/run/loadgen.js";
import { parseInfo, parseInfoFields } from "../../core/topology/info.js";
import type { ResultMode } from "../../benchmarks/run/result-row.js";
import { CpuSampler } from "../../benchmarks/sweep/process-cpu.js";
import { SEED_WORKLOAD, type BenchmarkTest, type Workload } from "../../vocabulary/workload.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { Redis } from "ioredis";
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
  /** The servers' CPU µs per request they served (INFO cpu ÷ INFO commandstats calls). */
  serverUs: number;
}

type Side = "client" | "vload" | "spread";

/** Every server's CPU seconds and the calls of `command`, from INFO (the servers' own count). */
async function serverCounters(
  members: readonly NodeEndpoint[],
  command: string,
): Promise<{ cpu: number; calls: number }> {
  let cpu = 0;
  let calls = 0;
  for (const m of members) {
    const c = new Redis({ host: m.host, port: m.port, lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await c.connect();
      const info = parseInfo(await c.info("all"));
      cpu += Number(info.get("used_cpu_user") ?? 0) + Number(info.get("used_cpu_sys") ?? 0);
      calls += Number(parseInfoFields(info.get(`cmdstat_${command}`) ?? "calls=0").get("calls") ?? 0);
    } finally {
      c.disconnect();
    }
  }
  return { cpu, calls };
}

/** Runs `measure` and adds the servers' CPU per served request around it. */
async function withServerWork(
  t: Target,
  test: BenchmarkTest,
  measure: () => Promise<Omit<Run, "serverUs">>,
): Promise<Run> {
  const before = await serverCounters(t.members, test);
  const run = await measure();
  const after = await serverCounters(t.members, test);
  const calls = after.calls - before.calls;
  return { ...run, serverUs: calls > 0 ? ((after.cpu - before.cpu) * 1e6) / calls : Number.NaN };
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
    options: Object.fromEntries(
      ["rounds", "seconds", "clients", "pipeline", "datasize", "keyspace", "bar"].map((k) => [
        k,
        { type: "string" as const },
      ]),
    ),
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
async function benchmarkClient(
  o: Options,
  client: ResolvedTool,
  t: Target,
  test: BenchmarkTest,
  requests: number,
): Promise<Omit<Run, "serverUs">> {
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

async function generator(
  o: Options,
  vload: string,
  t: Target,
  test: BenchmarkTest,
  keyShape: "spread" | "tagged",
): Promise<Omit<Run, "serverUs">> {
  const r = await runLoadgen(vload, {
    mode: t.endpoint.cluster ? "cluster" : "standalone",
    target: endpointKey(t.endpoint),
    connections: o.clients,
    pipeline: o.pipeline,
    schedule: [test],
    readTests: [],
    keyspace: o.keyspace,
    dataSize: o.dataSize,
    durationSeconds: o.seconds,
    keyShape,
  });
  if (r.errors.size > 0)
    throw new Error(
      `vload: error replies: ${[...r.errors].map(([k, e]) => `${k} ${e.count} (${e.first})`).join("; ")}`,
    );
  const c = r.cpu;
  return { rps: (r.hist.get(test)?.count ?? 0) / r.windowS, cpuShare: c.cpuSeconds / (c.wallSeconds * c.cores) };
}

async function targets(fleet: LocalFleet): Promise<Target[]> {
  const server = { appendonly: false, save: "" };
  const one = await fleet.start({ name: "bench-loadgen", ...server });
  const cluster = await startLocalCluster(fleet, {
    primaries: 3,
    replicasPerPrimary: 0,
    zones: ["a", "b", "c"],
    server,
  });
  const ep = (n: NodeEndpoint): NodeEndpoint => ({ host: n.host, port: n.port });
  return [
    { label: "standalone", mode: "replication", endpoint: { ...ep(one), cluster: false }, members: [ep(one)] },
    {
      label: "cluster 3 primaries",
      mode: "cluster",
      endpoint: { ...ep(cluster.seed), cluster: true },
      members: cluster.nodes.map(ep),
    },
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
      // Every key of every key shape: the GETs then find values.
      await benchmarkClient(o, client, t, "set", o.keyspace * 10);
      for (const shape of t.endpoint.cluster ? (["tagged", "spread"] as const) : (["spread"] as const))
        await generator(o, vload.path, t, "set", shape);
    }
    const runs = new Map<string, Record<Side, Run[]>>();
    const requests = new Map<string, number>();
    for (let round = 0; round < o.rounds; round++) {
      for (const t of all) {
        for (const test of ["set", "get"] as const) {
          const key = `${t.label} ${test.toUpperCase()}`;
          const r = runs.get(key) ?? { client: [], vload: [], spread: [] };
          runs.set(key, r);
          const sides: [Side, () => Promise<Omit<Run, "serverUs">>][] = [
            [
              "client",
              async () => {
                const run = await benchmarkClient(o, client, t, test, requests.get(key) ?? 1_000_000);
                requests.set(key, Math.max(100_000, Math.round(run.rps * o.seconds)));
                return run;
              },
            ],
            ["vload", () => generator(o, vload.path, t, test, t.endpoint.cluster ? "tagged" : "spread")],
            ...(t.endpoint.cluster
              ? [
                  ["spread", () => generator(o, vload.path, t, test, "spread")] as [
                    Side,
                    () => Promise<Omit<Run, "serverUs">>,
                  ],
                ]
              : []),
          ];
          const order = [...sides.slice(round % sides.length), ...sides.slice(0, round % sides.length)];
          for (const [side, measure] of order) r[side].push(await withServerWork(t, test, measure));
          console.log(
            `  round ${round + 1} ${key}: ` +
              sides
                .map(
                  ([side]) =>
                    `${side === "client" ? clientName : side === "vload" ? "vload" : "vload, its spread keys"} ${fmt(r[side].at(-1)?.rps ?? 0)} rps`,
                )
                .join(", "),
          );
        }
      }
    }
    console.log("");
    for (const [key, r] of runs) ok = report(key, clientName, r, o.bar) && ok;
  } finally {
    await fleet.stopAll();
  }
  console.log(
    ok ? `bench:loadgen: every ratio met the ${o.bar} bar` : `bench:loadgen: a ratio missed the ${o.bar} bar`,
  );
  return ok ? 0 : 1;
}

/**
 * Per target × test: each client's median and range, its CPU, the servers' CPU per request, and the ratio against the
 * bar.
 */
function report(key: string, clientName: string, r: Record<Side, Run[]>, bar: number): boolean {
  const rps = (xs: Run[]) => xs.map((x) => x.rps);
  const c = rps(r.client);
  const v = rps(r.vload);
  const paired = v.map((x, i) => x / (c[i] as number));
  const ratio = median(paired);
  const pass = ratio >= bar;
  const side = (name: string, xs: Run[]) =>
    `${name} ${fmt(median(rps(xs)))} rps [${fmt(Math.min(...rps(xs)))}–${fmt(Math.max(...rps(xs)))}], ` +
    `CPU ${pct(median(xs.map((x) => x.cpuShare)))} of its cores, servers ${median(xs.map((x) => x.serverUs)).toFixed(2)} µs CPU per request`;
  const tagged = key.startsWith("cluster") ? " (the benchmark client's tagged keys)" : "";
  console.log(`${key}:`);
  console.log(`  ${side(clientName, r.client)}`);
  console.log(`  ${side(`vload${tagged}`, r.vload)}`);
  if (r.spread.length > 0)
    console.log(`  ${side("vload, its own keys spread over every slot (shown, not judged)", r.spread)}`);
  console.log(
    `  ratio of medians ${(median(v) / median(c)).toFixed(2)}; paired ratio median ${ratio.toFixed(2)} [${Math.min(...paired).toFixed(2)}–${Math.max(...paired).toFixed(2)}] ` +
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
