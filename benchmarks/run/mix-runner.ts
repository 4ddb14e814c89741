/**
 * A mixed read/write workload for a duration (`--mix get:80,set:20 --duration-s 30`), generated
 * by this project's own load generator on ioredis, because valkey-benchmark has no ratio flag
 * (docs/report-and-sweep.md, "Mixed workloads", says why this and not split benchmark processes).
 *
 * Load. `clients` connections (a Cluster client each in cluster mode, which follows the slot
 * map), each keeping `pipeline` requests in flight (a new one is written the moment one
 * answers), for `durationSeconds`. Every request takes the next command of ONE shared
 * schedule: the mix's shares laid out over 100 slots by smooth weighted round-robin
 * (get:80,set:20 is G G G G S repeated), so every connection interleaves the commands and the
 * counts sent match the shares up to one unfinished cycle. Keys and values are valkey-benchmark's
 * (`key:<12 digits>` random over keyspaceLength, a `dataSize`-byte value), containers
 * (`mylist`, `myset`, ...) and MSET's ten keys carry a per-connection `{hash tag}` so they
 * spread over the cluster's shards and MSET stays in one slot.
 *
 * Latency. Each request's time from the call to its reply (process.hrtime), recorded per command
 * in an HdrHistogram (latency-histogram.ts: hdr-histogram-js, µs with 3 significant digits, so a
 * percentile is within 0.1 % of the true value). This is closed-loop: a stalled server delays the next requests instead of
 * queueing them, so the percentiles hide the wait of requests never sent (coordinated omission).
 * With `rate` (`--rate N`) the load is open loop instead (open-loop.ts): requests leave on
 * schedule and latency counts from each one's intended send time.
 *
 * Served. INFO commandstats from every member before and after (mix-served.ts): the rows carry
 * the served shares and the run fails when they are off by more than the tolerance.
 *
 * Reads on the replicas (`workload.reads` "replicas"). Routed per command: in cluster mode each
 * connection is a Cluster client with `scaleReads: "slave"` (ioredis sends READONLY to the
 * replicas and routes its read-only commands there, the rest to the primaries); in replication
 * mode each connection is a pair, writes to the target and the read commands (READ_COMMANDS) to
 * one of `readTargets` (the replicas, or a read endpoint). The run then also fails when the
 * replicas served (almost) none of a read command (mix-served.ts checkReplicaReads).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Cluster, Redis } from "ioredis";
import { DEFAULT_MIX_DURATION_SECONDS, READ_COMMANDS, type BenchmarkTest, type MixEntry, type Workload } from "../../vocabulary/workload.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { parseClusterNodes } from "../topology/cluster-nodes-parser.js";
import { parseInfo, parseInfoFields } from "../topology/info.js";
import {
  checkReplicaReads,
  checkServedMix,
  memberDeltas,
  readsServed,
  servedJson,
  servedMix,
  servedNote,
  snapshotMembers,
  type ServedMix,
} from "./mix-served.js";
import { LatencyHistogram, percentileDistribution } from "./latency-histogram.js";
import { runOpenLoop, type LatencySecond, type OpenLoopResult } from "./open-loop.js";
import { runClosedLoop } from "./closed-loop.js";
import type { LoopComparison } from "./loop-figures.js";
import { soakNote, startMixSoak, type SoakResult, type SoakSampler } from "./soak-sampler.js";
import { RESULT_TIMESTAMP_PATTERN, type ResultMode, type ResultRow } from "./result-row.js";
import { withClientCpu, type ClientCpu } from "./client-cpu.js";
import { nodeProcessCpu } from "./client-cpu-probe.js";

/** Served share may differ from the wanted one by this many percentage points. @default 2 */
export const DEFAULT_MIX_TOLERANCE_PERCENT = 2;

export interface RunMixOptions {
  workload: Workload;
  target: NodeEndpoint & { cluster: boolean };
  mode: ResultMode;
  serverVersion: string;
  password?: string;
  timestamp: string;
  /** Every member whose commandstats count. @default discovered: CLUSTER NODES, or the target and the replicas INFO replication lists */
  members?: readonly NodeEndpoint[];
  /**
   * Replication, reads on the replicas: connection i sends its read commands to readTargets[i % n]
   * (replicas, or a read endpoint), its writes to `target`. @default the replicas INFO replication lists
   */
  readTargets?: readonly NodeEndpoint[];
  /** @default DEFAULT_MIX_TOLERANCE_PERCENT */
  tolerancePercent?: number;
  /** Closed loop only: hold it to this many requests/s in total (closed-loop.ts; the loop comparison's closed side). @default unpaced */
  pace?: number;
  onProgress?: (line: string) => void;
}

export interface MixResult {
  /** One row per command of the mix, then the `MIX` row (all of them together). */
  rows: ResultRow[];
  served: ServedMix;
  /** Per row's test: p99.9 in ms, and the histogram as HdrHistogram's percentile distribution text (`.hgrm`). */
  latency: { p999_ms: Record<string, number>; histograms: Record<string, string> };
  /** `--rate`: the rate and the latency over time (per second of intended send time). */
  openLoop?: { rate: number; series: LatencySecond[]; generatorLagMaxMs: number };
  /** `soak`: the sampled series, its events and the windows' interval histograms. */
  soak?: SoakResult;
  /** `rate` (not a soak): the closed loop paced to the same rate beside the open loop (loop-comparison.ts). */
  loops?: LoopComparison;
  /**
   * The generator's CPU use over the load (client-cpu.ts), which marks the rows client-bound at
   * CLIENT_SATURATION of its cores. The generator's self-report (CPU seconds, wall seconds,
   * GOMAXPROCS) belongs here; until then nodeProcessCpu() measures this Node process.
   */
  clientCpu?: ClientCpu;
}

/** The request a test sends (valkey-benchmark's), for a key number `r` and a connection's hash tag. */
type Request = (r: string, tag: string, value: string) => string[];

const list =
  (cmd: string): Request =>
  (_r, tag) => [cmd, `mylist:{${tag}}`];
const lrange =
  (n: number): Request =>
  (_r, tag) => ["lrange", `mylist:{${tag}}`, "0", String(n - 1)];

/** Keyed by every test, so a test added to BENCHMARK_TESTS does not compile until it has a request here. */
const REQUESTS: Readonly<Record<BenchmarkTest, Request>> = {
  ping_inline: () => ["ping"],
  ping_mbulk: () => ["ping"],
  set: (r, _t, v) => ["set", `key:${r}`, v],
  get: (r) => ["get", `key:${r}`],
  incr: (r) => ["incr", `counter:${r}`],
  lpush: (_r, tag, v) => ["lpush", `mylist:{${tag}}`, v],
  rpush: (_r, tag, v) => ["rpush", `mylist:{${tag}}`, v],
  lpop: list("lpop"),
  rpop: list("rpop"),
  sadd: (r, tag) => ["sadd", `myset:{${tag}}`, `element:${r}`],
  hset: (r, tag, v) => ["hset", `myhash:{${tag}}`, `element:${r}`, v],
  spop: (_r, tag) => ["spop", `myset:{${tag}}`],
  zadd: (r, tag) => ["zadd", `myzset:{${tag}}`, "0", `element:${r}`],
  zpopmin: (_r, tag) => ["zpopmin", `myzset:{${tag}}`],
  lrange_100: lrange(100),
  lrange_300: lrange(300),
  lrange_500: lrange(500),
  lrange_600: lrange(600),
  mset: (r, tag, v) => ["mset", ...Array.from({ length: 10 }, (_, i) => [`key:{${tag}}:${r}:${i}`, v]).flat()],
  xadd: (_r, tag, v) => ["xadd", `mystream:{${tag}}`, "*", "myfield", v],
};

/** The mix over 100 slots by smooth weighted round-robin: each test `percent` times, spread evenly. */
export function mixSchedule(mix: readonly MixEntry[]): BenchmarkTest[] {
  const current = mix.map(() => 0);
  const total = mix.reduce((n, e) => n + e.percent, 0);
  const out: BenchmarkTest[] = [];
  for (let slot = 0; slot < total; slot++) {
    let best = 0;
    mix.forEach((e, i) => {
      current[i] = (current[i] as number) + e.percent;
      if ((current[i] ?? 0) > (current[best] ?? 0)) best = i;
    });
    current[best] = (current[best] as number) - total;
    out.push((mix[best] as MixEntry).test);
  }
  return out;
}

/** A replication connection reading from a replica: the read commands go to `read`, the rest to `write`. */
export class RoutedClient {
  constructor(
    readonly write: Redis,
    readonly read: Redis,
  ) {}

  call(command: string, ...args: string[]): Promise<unknown> {
    return (READ_COMMANDS.has(command.toLowerCase()) ? this.read : this.write).call(command, ...args);
  }

  disconnect(): void {
    this.write.disconnect();
    this.read.disconnect();
  }
}

export type Client = Redis | Cluster | RoutedClient;

function connect(o: RunMixOptions, name: string, readTarget: NodeEndpoint | undefined): Client {
  const common = { password: o.password, connectTimeout: 5000, maxRetriesPerRequest: 0, connectionName: name };
  const quiet = <C extends Redis | Cluster>(c: C): C => c.on("error", () => undefined) as C;
  const node = (e: NodeEndpoint) => quiet(new Redis({ host: e.host, port: e.port, ...common, lazyConnect: false }));
  if (o.target.cluster) {
    const scaleReads = o.workload.reads === "replicas" ? "slave" : "master";
    return quiet(new Cluster([{ host: o.target.host, port: o.target.port }], { redisOptions: common, maxRedirections: 8, scaleReads }));
  }
  return readTarget === undefined ? node(o.target) : new RoutedClient(node(o.target), node(readTarget));
}

/** Waits until every connection (both of a routed pair) answers. */
function ready(c: Client): Promise<unknown> {
  if (c instanceof RoutedClient) return Promise.all([c.write.ping(), c.read.ping()]);
  return c instanceof Cluster ? c.call("ping") : c.ping();
}

/** The members whose commandstats count: every CLUSTER NODES entry, or the target and then the replicas its INFO replication lists. */
export async function discoverMembers(target: NodeEndpoint & { cluster: boolean }, password: string | undefined): Promise<NodeEndpoint[]> {
  const c = new Redis({ host: target.host, port: target.port, password, connectTimeout: 5000, maxRetriesPerRequest: 0 });
  c.on("error", () => undefined);
  try {
    if (target.cluster) {
      const nodes = parseClusterNodes(String(await c.call("cluster", "nodes")));
      return nodes.nodes.flatMap((n) => (n.endpoint === undefined || n.failed ? [] : [n.endpoint]));
    }
    const info = parseInfo(await c.info("replication"));
    const replicas = [...info].flatMap(([k, v]) => {
      if (!/^slave\d+$/.test(k)) return [];
      const f = parseInfoFields(v);
      return [{ host: f.get("ip") as string, port: Number(f.get("port")) }];
    });
    return [{ host: target.host, port: target.port }, ...replicas];
  } finally {
    c.disconnect();
  }
}

const pad12 = (n: number): string => String(n).padStart(12, "0");
const ms = (us: number): number => Number((us / 1000).toFixed(3));

function row(o: RunMixOptions, test: string, h: LatencyHistogram, windowS: number, notes: string, connections: number): ResultRow {
  const w = o.workload;
  return {
    workload: w.name,
    mode: o.mode,
    test,
    rps: Number((h.count / windowS).toFixed(2)),
    p50_ms: ms(h.quantile(0.5)),
    clients: connections,
    pipeline: w.pipeline,
    datasize: w.dataSize,
    timestamp: o.timestamp,
    p95_ms: ms(h.quantile(0.95)),
    p99_ms: ms(h.quantile(0.99)),
    duration_s: Number(windowS.toFixed(3)),
    requests: h.count,
    server_version: o.serverVersion,
    client_version: "vbench mix (ioredis)",
    avg_ms: ms(h.mean),
    min_ms: ms(h.min),
    max_ms: ms(h.max),
    notes,
    p999_ms: ms(h.quantile(0.999)),
  };
}

/** Runs the workload's mix for its duration, then checks the served shares (throws MixMismatchError when off). */
export async function runMix(o: RunMixOptions): Promise<MixResult> {
  const w = o.workload;
  const mix = w.mix;
  if (mix === undefined || mix.length === 0) throw new RangeError("runMix: the workload has no mix");
  if (!RESULT_TIMESTAMP_PATTERN.test(o.timestamp)) throw new RangeError(`timestamp '${o.timestamp}' is not YYYYMMDD-HHMMSS`);
  const durationS = w.durationSeconds ?? DEFAULT_MIX_DURATION_SECONDS;
  const schedule = mixSchedule(mix);
  const value = "x".repeat(w.dataSize);
  const members = o.members ?? (await discoverMembers(o.target, o.password));
  const readTargets = w.reads === "replicas" && !o.target.cluster ? (o.readTargets ?? (await discoverMembers(o.target, o.password)).slice(1)) : [];
  if (w.reads === "replicas" && !o.target.cluster && readTargets.length === 0)
    throw new RangeError(`reads on the replicas: ${endpointKey(o.target)} lists no replica in INFO replication, and no read target was given`);
  const clients = Array.from({ length: w.clients }, (_, i) => connect(o, `vbench-mix-${i}`, readTargets[i % readTargets.length]));
  const hist = new Map(mix.map((e) => [e.test, new LatencyHistogram()]));
  const errors = new Map<string, { count: number; first: string }>();
  let soak: SoakSampler | undefined;
  try {
    await Promise.all(clients.map(ready));
    const before = await snapshotMembers(members, o.password);
    if (w.soak !== undefined) soak = await startMixSoak({ ...w.soak, members, password: o.password, onProgress: o.onProgress });
    o.onProgress?.(`${mix.map((e) => `${e.test}:${e.percent}`).join(",")} for ${durationS} s on ${w.clients} connections × ${w.pipeline} in flight`);
    let windowS: number;
    let open: OpenLoopResult | undefined;
    const generatorCpu = nodeProcessCpu(); // the hook: the generator's own CPU report replaces this stand-in
    if (w.rate !== undefined) {
      open = await runOpenLoop({
        clients,
        schedule,
        rate: w.rate,
        durationSeconds: durationS,
        request: (test, conn) => REQUESTS[test](pad12(Math.floor(Math.random() * w.keyspaceLength)), String(conn), value),
        onReply: soak?.record,
        onError: soak?.recordError,
      });
      for (const [t, h] of open.hist) hist.set(t, h);
      for (const [t, e] of open.errors) errors.set(t, e);
      windowS = open.windowS;
    } else {
      const closed = await runClosedLoop({
        clients,
        pipeline: w.pipeline,
        schedule,
        durationSeconds: durationS,
        request: (test, conn) => REQUESTS[test](pad12(Math.floor(Math.random() * w.keyspaceLength)), String(conn), value),
        ...(o.pace === undefined ? {} : { pace: o.pace }),
        onReply: soak?.record,
        onError: soak?.recordError,
      });
      for (const [t, h] of closed.hist) hist.set(t, h);
      for (const [t, e] of closed.errors) errors.set(t, e);
      windowS = closed.windowS;
    }
    const clientCpu = generatorCpu();
    const soaked = await soak?.stop();
    const after = await snapshotMembers(members, o.password);
    const deltas = memberDeltas(members, before, after);
    const served = servedMix(mix, deltas);
    if (errors.size > 0) {
      throw new Error(`the mix got error replies: ${[...errors].map(([t, e]) => `${t.toUpperCase()} ${e.count} (first: ${e.first})`).join("; ")}`);
    }
    checkServedMix(served, o.tolerancePercent ?? DEFAULT_MIX_TOLERANCE_PERCENT);
    if (w.reads === "replicas")
      checkReplicaReads(
        readsServed(
          served.commands.map((c) => c.command),
          deltas,
        ),
        "the mix",
      );
    const loop =
      open === undefined
        ? o.pace === undefined
          ? ""
          : ` closed loop paced to ${o.pace}/s (latency from each request's own send)`
        : ` open loop at ${w.rate}/s (latency from each request's intended send time; generator lag max ${open.generatorLagMaxMs} ms)`;
    const soakText = soaked === undefined ? "" : `; ${soakNote(soaked.record)}`;
    const spec = `mix ${mix.map((e) => `${e.test}:${e.percent}`).join(",")} for ${durationS} s${loop}${soakText}`;
    const total = new LatencyHistogram();
    const rows = mix.map((e) => {
      const h = hist.get(e.test) as LatencyHistogram;
      total.merge(h);
      const c = served.commands.find((x) => x.test === e.test);
      return row(o, e.test.toUpperCase(), h, windowS, `${spec}; wanted ${e.percent}%, served ${c?.servedPercent.toFixed(2)}% (INFO commandstats)`, w.clients);
    });
    rows.push(row(o, "MIX", total, windowS, `${spec}; ${servedNote(served)}`, w.clients));
    const byRow: [string, LatencyHistogram][] = [
      ...mix.map((e): [string, LatencyHistogram] => [e.test.toUpperCase(), hist.get(e.test) as LatencyHistogram]),
      ["MIX", total],
    ];
    const latency: MixResult["latency"] = { p999_ms: {}, histograms: {} };
    for (const [t, h] of byRow) {
      latency.p999_ms[t] = ms(h.quantile(0.999));
      latency.histograms[t] = percentileDistribution(h);
    }
    return {
      rows: withClientCpu(rows, clientCpu),
      clientCpu,
      served,
      latency,
      ...(open === undefined ? {} : { openLoop: { rate: w.rate as number, series: open.series, generatorLagMaxMs: open.generatorLagMaxMs } }),
      ...(soaked === undefined ? {} : { soak: soaked }),
    };
  } finally {
    await soak?.stop().catch(() => undefined);
    for (const c of clients) c.disconnect();
  }
}

/**
 * A mix's files in a run's raw/ directory: `mix-served-<mode>.json` (the commandstats deltas),
 * `latency-<mode>-<TEST>.hgrm` per row (HdrHistogram's percentile distribution), open loop
 * `latency-series-<mode>.json` (per second of intended send time), and soak `soak-<mode>.json`
 * (samples and events) with `latency-<mode>.hlog` (the windows' HdrHistogram interval log), and
 * with a rate `loop-comparison-<mode>.json` (closed vs open loop at that rate, loop-comparison.ts).
 * `mode` may carry a suffix (`replication-replicas`) to keep a second run's files apart.
 * Returns the paths written.
 */
export function writeMixFiles(rawDir: string, mode: string, r: MixResult): string[] {
  mkdirSync(rawDir, { recursive: true });
  const files: [string, string][] = [
    [`mix-served-${mode}.json`, JSON.stringify(servedJson(r.served), null, 2)],
    ...Object.entries(r.latency.histograms).map(([t, text]): [string, string] => [`latency-${mode}-${t}.hgrm`, text.trimEnd()]),
    ...(r.openLoop === undefined ? [] : [[`latency-series-${mode}.json`, JSON.stringify(r.openLoop, null, 2)] as [string, string]]),
    ...(r.loops === undefined ? [] : [[`loop-comparison-${mode}.json`, JSON.stringify(r.loops, null, 2)] as [string, string]]),
    ...(r.soak === undefined
      ? []
      : ([
          [`soak-${mode}.json`, JSON.stringify({ mode, ...r.soak.record }, null, 2)],
          [`latency-${mode}.hlog`, r.soak.hlog.trimEnd()],
        ] as [string, string][])),
  ];
  return files.map(([name, text]) => {
    writeFileSync(join(rawDir, name), `${text}\n`);
    return join(rawDir, name);
  });
}
