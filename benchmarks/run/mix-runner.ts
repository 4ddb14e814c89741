/**
 * A mixed read/write workload for a duration (`--mix get:80,set:20 --duration-s 30`), generated
 * by the project's load generator, `vload` (loadgen/, run through loadgen.ts), because
 * valkey-benchmark has no ratio flag (docs/report-and-sweep.md, "Mixed workloads", says why this
 * and not split benchmark processes, and "The load generator" how it compares with
 * valkey-benchmark on the same target).
 *
 * Load. `clients` connections (lanes), each writing `pipeline` requests as one batch and the next
 * batch once the previous one is answered, for `durationSeconds`. Every request takes the next
 * command of ONE shared schedule: the mix's shares laid out over 100 slots by smooth weighted
 * round-robin (get:80,set:20 is G G G G S repeated), so every connection interleaves the commands
 * and the counts sent match the shares up to one unfinished cycle. Keys and values are
 * valkey-benchmark's (`key:<12 digits>` random over keyspaceLength, a `dataSize`-byte value),
 * containers and MSET's ten keys carry a per-connection `{hash tag}`. In cluster mode a lane
 * belongs to one shard (lanes spread evenly) and draws its keys from that shard's slots, so a
 * batch is one write to one server, as valkey-benchmark's cluster mode does; MOVED and ASK are
 * followed.
 *
 * Latency. Each request's time from its batch's write to the read that completed its reply, per
 * command, in an HdrHistogram (µs, 3 significant digits: a percentile within 0.1 % of the true
 * value; latency-histogram.ts decodes the generator's). This is closed-loop: a stalled server
 * delays the next batches instead of queueing them, so the percentiles hide the wait of requests
 * never sent (coordinated omission). With `rate` (`--rate N`) the load is open loop instead:
 * requests leave on schedule and latency counts from each one's intended send time.
 *
 * Served. INFO commandstats from every member before and after (mix-served.ts): the rows carry
 * the served shares and the run fails when they are off by more than the tolerance.
 *
 * Reads on the replicas (`workload.reads` "replicas"). Routed per command: in cluster mode each
 * lane also has a READONLY connection to a replica of its shard and sends its read commands
 * (READ_TESTS) there; in replication mode lane i sends them to `readTargets[i % n]` (the
 * replicas, or a read endpoint), its writes to the target. The run then also fails when the
 * replicas served (almost) none of a read command (mix-served.ts checkReplicaReads).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import {
  DEFAULT_MIX_DURATION_SECONDS,
  READ_TESTS,
  type BenchmarkTest,
  type MixEntry,
  type Workload,
} from "../../vocabulary/workload.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { resolveLoadgen } from "./binaries.js";
import { parseClusterNodes } from "../../core/topology/cluster-nodes-parser.js";
import { parseInfo, parseInfoFields } from "../../core/topology/info.js";
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
import { MIX_CLIENT, runLoadgen, type LoadgenRun } from "./loadgen.js";
import type { GeneratorFigures, OpenLoopSeries } from "./mix-job-result.js";
import type { LoopComparison } from "./loop-figures.js";
import { soakNote, startMixSoak, type SoakResult, type SoakSampler } from "./soak-sampler.js";
import { RESULT_TIMESTAMP_PATTERN, type ResultMode, type ResultRow } from "./result-row.js";
import { withClientCpu } from "./client-cpu.js";

/** Served share may differ from the wanted one by this many percentage points. @default 2 */
export const DEFAULT_MIX_TOLERANCE_PERCENT = 2;

export interface RunMixOptions {
  workload: Workload;
  target: NodeEndpoint & { cluster: boolean };
  mode: ResultMode;
  serverVersion: string;
  password?: string;
  timestamp: string;
  /**
   * Every member whose commandstats count. @default discovered: CLUSTER NODES, or the target and the replicas INFO
   * replication lists
   */
  members?: readonly NodeEndpoint[];
  /**
   * Replication, reads on the replicas: connection i sends its read commands to readTargets[i % n]
   * (replicas, or a read endpoint), its writes to `target`. @default the replicas INFO replication lists
   */
  readTargets?: readonly NodeEndpoint[];
  /** @default DEFAULT_MIX_TOLERANCE_PERCENT */
  tolerancePercent?: number;
  /**
   * Closed loop only: hold it to this many requests/s in total (the loop comparison's closed side). @default unpaced
   */
  pace?: number;
  /** The generator's executable. @default resolveLoadgen() */
  loadgen?: string;
  onProgress?: (line: string) => void;
}

export interface MixResult {
  /** One row per command of the mix, then the `MIX` row (all of them together). */
  rows: ResultRow[];
  served: ServedMix;
  /** Per row's test: p99.9 in ms, and the histogram as HdrHistogram's percentile distribution text (`.hgrm`). */
  latency: { p999_ms: Record<string, number>; histograms: Record<string, string> };
  /** `--rate`: the rate, the latency over time (per interval of intended send time) and how late the generator sent. */
  openLoop?: OpenLoopSeries;
  /** `soak`: the sampled series, its events and the windows' interval histograms. */
  soak?: SoakResult;
  /** `rate` (not a soak): the closed loop paced to the same rate beside the open loop (loop-comparison.ts). */
  loops?: LoopComparison;
  /** The generator itself: its version (the hash of its sources), CPU use, bytes, redirects followed. */
  generator: GeneratorFigures;
}

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

/**
 * The members whose commandstats count: every CLUSTER NODES entry, or the target and then the replicas its INFO
 * replication lists.
 */
export async function discoverMembers(
  target: NodeEndpoint & { cluster: boolean },
  password: string | undefined,
): Promise<NodeEndpoint[]> {
  const c = new Redis({
    host: target.host,
    port: target.port,
    password,
    connectTimeout: 5000,
    maxRetriesPerRequest: 0,
  });
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

const ms = (us: number): number => Number((us / 1000).toFixed(3));

function row(
  o: RunMixOptions,
  test: string,
  h: LatencyHistogram,
  windowS: number,
  notes: string,
  connections: number,
): ResultRow {
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
    client_version: MIX_CLIENT,
    avg_ms: ms(h.mean),
    min_ms: ms(h.min),
    max_ms: ms(h.max),
    notes,
    p999_ms: ms(h.quantile(0.999)),
  };
}

/** Where the reads go: the replication read targets (discovered when not given), or none. */
async function readTargetsOf(o: RunMixOptions): Promise<readonly NodeEndpoint[]> {
  if (o.workload.reads !== "replicas" || o.target.cluster) return [];
  const targets = o.readTargets ?? (await discoverMembers(o.target, o.password)).slice(1);
  if (targets.length === 0)
    throw new RangeError(
      `reads on the replicas: ${endpointKey(o.target)} lists no replica in INFO replication, and no read target was given`,
    );
  return targets;
}

/** Runs the workload's mix for its duration, then checks the served shares (throws MixMismatchError when off). */
export async function runMix(o: RunMixOptions): Promise<MixResult> {
  const w = o.workload;
  const mix = w.mix;
  if (mix === undefined || mix.length === 0) throw new RangeError("runMix: the workload has no mix");
  if (!RESULT_TIMESTAMP_PATTERN.test(o.timestamp))
    throw new RangeError(`timestamp '${o.timestamp}' is not YYYYMMDD-HHMMSS`);
  const durationS = w.durationSeconds ?? DEFAULT_MIX_DURATION_SECONDS;
  const binary = o.loadgen ?? resolveLoadgen().path;
  const members = o.members ?? (await discoverMembers(o.target, o.password));
  const readTargets = await readTargetsOf(o);
  let soak: SoakSampler | undefined;
  try {
    const before = await snapshotMembers(members, o.password);
    if (w.soak !== undefined)
      soak = await startMixSoak({ ...w.soak, members, password: o.password, onProgress: o.onProgress });
    o.onProgress?.(
      `${mix.map((e) => `${e.test}:${e.percent}`).join(",")} for ${durationS} s on ${w.clients} connections × ${w.pipeline} in flight`,
    );
    const run = await runLoadgen(
      binary,
      {
        mode: o.target.cluster ? "cluster" : "standalone",
        target: endpointKey(o.target),
        ...(readTargets.length === 0 ? {} : { readTargets: readTargets.map(endpointKey) }),
        ...(w.reads === "replicas" && o.target.cluster ? { readsFromReplicas: true } : {}),
        ...(o.password === undefined ? {} : { password: o.password }),
        connections: w.clients,
        pipeline: w.pipeline,
        schedule: mixSchedule(mix),
        readTests: READ_TESTS,
        keyspace: w.keyspaceLength,
        dataSize: w.dataSize,
        durationSeconds: durationS,
        ...(w.rate === undefined ? {} : { rate: w.rate }),
        ...(o.pace === undefined ? {} : { pace: o.pace }),
        ...(w.soak === undefined ? {} : { windowSeconds: w.soak.sampleSeconds }),
      },
      { onWindow: soak?.window },
    );
    const soaked = await soak?.stop();
    const after = await snapshotMembers(members, o.password);
    const deltas = memberDeltas(members, before, after);
    const served = servedMix(mix, deltas);
    if (run.errors.size > 0) {
      throw new Error(
        `the mix got error replies: ${[...run.errors].map(([t, e]) => `${t.toUpperCase()} ${e.count} (first: ${e.first})`).join("; ")}`,
      );
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
    return mixResult(o, run, served, soaked, durationS);
  } finally {
    await soak?.stop().catch(() => undefined);
  }
}

/** The rows, latency files and extras of a finished, checked run. */
function mixResult(
  o: RunMixOptions,
  run: LoadgenRun,
  served: ServedMix,
  soaked: SoakResult | undefined,
  durationS: number,
): MixResult {
  const w = o.workload;
  const mix = w.mix ?? [];
  const open = run.openLoop;
  const loop =
    open === undefined
      ? o.pace === undefined
        ? ""
        : ` closed loop paced to ${o.pace}/s (latency from each request's own send)`
      : ` open loop at ${w.rate}/s (latency from each request's intended send time; generator lag mean ${open.lagMeanMs} ms, max ${open.lagMaxMs} ms)`;
  const soakText = soaked === undefined ? "" : `; ${soakNote(soaked.record)}`;
  const redirects =
    run.redirects.moved + run.redirects.ask === 0
      ? ""
      : `; redirects followed: MOVED ${run.redirects.moved}, ASK ${run.redirects.ask}`;
  const spec = `mix ${mix.map((e) => `${e.test}:${e.percent}`).join(",")} for ${durationS} s${loop}${soakText}${redirects}`;
  const hist = (t: BenchmarkTest): LatencyHistogram => run.hist.get(t) ?? new LatencyHistogram();
  const total = new LatencyHistogram();
  const rows = mix.map((e) => {
    const h = hist(e.test);
    total.merge(h);
    const c = served.commands.find((x) => x.test === e.test);
    return row(
      o,
      e.test.toUpperCase(),
      h,
      run.windowS,
      `${spec}; wanted ${e.percent}%, served ${c?.servedPercent.toFixed(2)}% (INFO commandstats)`,
      w.clients,
    );
  });
  rows.push(row(o, "MIX", total, run.windowS, `${spec}; ${servedNote(served)}`, w.clients));
  const byRow: [string, LatencyHistogram][] = [
    ...mix.map((e): [string, LatencyHistogram] => [e.test.toUpperCase(), hist(e.test)]),
    ["MIX", total],
  ];
  const latency: MixResult["latency"] = { p999_ms: {}, histograms: {} };
  for (const [t, h] of byRow) {
    latency.p999_ms[t] = ms(h.quantile(0.999));
    latency.histograms[t] = percentileDistribution(h);
  }
  return {
    // The generator's own CPU report marks the rows client-bound at CLIENT_SATURATION of its cores (client-cpu.ts).
    rows: withClientCpu(rows, run.cpu),
    served,
    latency,
    ...(open === undefined
      ? {}
      : {
          openLoop: {
            rate: open.rate,
            series: open.series,
            bucketS: open.bucketS,
            generatorLagMaxMs: open.lagMaxMs,
            generatorLagMeanMs: open.lagMeanMs,
          },
        }),
    ...(soaked === undefined ? {} : { soak: soaked }),
    generator: { version: run.version, cpu: run.cpu, bytes: run.bytes, redirects: run.redirects },
  };
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
    ...Object.entries(r.latency.histograms).map(([t, text]): [string, string] => [
      `latency-${mode}-${t}.hgrm`,
      text.trimEnd(),
    ]),
    ...(r.openLoop === undefined
      ? []
      : [[`latency-series-${mode}.json`, JSON.stringify(r.openLoop, null, 2)] as [string, string]]),
    ...(r.loops === undefined
      ? []
      : [[`loop-comparison-${mode}.json`, JSON.stringify(r.loops, null, 2)] as [string, string]]),
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
