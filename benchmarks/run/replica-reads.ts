/**
 * Reads from the replicas, measured (`--reads replicas`): the read tests (READ_TESTS) or a mix
 * with its reads on the replicas, with INFO commandstats of every member read before and after,
 * so each row says who served the reads and the run fails when the replicas did not
 * (mix-served.ts checkReplicaReads). The rows carry their path (read-scale-out.ts), which pairs
 * them with the primary-read rows of the same client for the read scale-out table.
 *
 * Which client:
 * - a mix: the load generator (mix-runner.ts, vload), routed per command: replication, the reads to
 *   `readTargets` (a connection per target, round-robin over the connections), the writes to
 *   `target`; cluster, each connection's reads to a replica of its shard over READONLY;
 * - replication tests: the benchmark client, one process per read target started together
 *   (`clientProcesses` each), combined like several client processes (multi-client.ts);
 * - cluster tests: valkey-benchmark ≥ 8.1 with `--rfr yes` (benchmark-args.ts); a client
 *   without it (redis-benchmark 7, Debian's) cannot read from a cluster's replicas, so the
 *   generator runs each read test alone (`<test>:100`) twice, from the primaries (the baseline
 *   of the same client) and from the replicas, and the rows say so.
 */
import type { ResolvedTool } from "./binaries.js";
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";
import { BENCHMARK_TEST_COMMANDS, isReadTest, type BenchmarkTest, type Workload } from "../../vocabulary/workload.js";
import { supportsReadFromReplicas } from "./benchmark-args.js";
import { runWorkload } from "./benchmark-runner.js";
import { runMix, writeMixFiles, type MixResult } from "./mix-runner.js";
import {
  checkReplicaReads,
  memberDeltas,
  readsServed,
  readsServedNote,
  servingReplicas,
  snapshotMembers,
  type ReadsServed,
} from "./mix-served.js";
import { readPathNote, type ReadPathKey } from "./read-scale-out.js";
import type { ResultMode, ResultRow } from "./result-row.js";

export interface ReplicaReadOptions {
  /** The workload as asked (`reads` is set per run here). */
  workload: Workload;
  mode: ResultMode;
  /** The path the rows are labelled with (read-scale-out.ts READ_PATHS; not clusterPrimaries). */
  path: Exclude<ReadPathKey, "clusterPrimaries">;
  /** Replication: where a mix's writes go; cluster: a node to discover the cluster from. */
  target: NodeEndpoint;
  /** Replication: where the reads go (the replicas, or a read endpoint). */
  readTargets?: readonly NodeEndpoint[];
  /** Every server whose commandstats count (the served check). */
  members: readonly NodeEndpoint[];
  /** The benchmark client of the tests. */
  client: ResolvedTool;
  serverVersion: string;
  password?: string;
  timestamp: string;
  rawDir?: string;
  /** Benchmark processes per read target. @default 1 */
  clientProcesses?: number;
  onProgress?: (line: string) => void;
}

export interface ReplicaReadResult {
  /** Cluster tests through the generator: its reads from the primaries, the baseline. Empty otherwise. */
  baseline: ResultRow[];
  /** The reads on the replicas (a mix: every row of it). */
  rows: ResultRow[];
  /** Who served the read commands, per run (baseline runs included). */
  served: ReadsServed[][];
}

/** How the cluster's read tests reach the replicas with this client. */
export function clusterReadClient(client: Pick<ResolvedTool, "flavor" | "version">): "rfr" | "generator" {
  return supportsReadFromReplicas(client) ? "rfr" : "generator";
}

const prefix = (note: string, rows: readonly ResultRow[], extra: string): ResultRow[] =>
  rows.map((r) => ({ ...r, notes: [note, extra, r.notes].filter((x) => x !== "").join("; ") }));

/** How long the generator runs each read test alone: the mix duration when given, else the tests' minimum window. */
export function generatorSeconds(w: Workload): number {
  return w.durationSeconds ?? Math.max(1, Math.ceil(w.minDurationSeconds));
}

async function generatorRun(
  o: ReplicaReadOptions,
  workload: Workload,
  fileTag: string,
): Promise<{ r: MixResult; served: ReadsServed[] }> {
  const r = await runMix({
    workload,
    target: { ...o.target, cluster: o.mode === "cluster" },
    ...(o.readTargets === undefined ? {} : { readTargets: o.readTargets }),
    mode: o.mode,
    serverVersion: o.serverVersion,
    password: o.password,
    timestamp: o.timestamp,
    members: o.members,
    onProgress: o.onProgress,
  });
  if (o.rawDir !== undefined) writeMixFiles(o.rawDir, fileTag, r);
  return {
    r,
    served: readsServed(
      r.served.commands.map((c) => c.command),
      r.served.members,
    ),
  };
}

/** The primaries among the members at the end of a run (the servers the reads would otherwise go to). */
const primariesOf = (members: readonly { primary: boolean }[]): number => members.filter((m) => m.primary).length;

/** Runs the workload's reads on the replicas (see the module comment) and returns the labelled rows. */
export async function runReplicaReads(o: ReplicaReadOptions): Promise<ReplicaReadResult> {
  const w = o.workload;
  const onReplicas: Workload = { ...w, reads: "replicas" };
  const tag = `${o.mode}-${o.path}`;
  if (w.mix !== undefined) {
    const { r, served } = await generatorRun(o, onReplicas, tag);
    const note = readPathNote(o.path, { replicas: servingReplicas(served), primaries: primariesOf(r.served.members) });
    return { baseline: [], rows: prefix(note, r.rows, ""), served: [served] };
  }
  const readTests = w.tests.filter((t) => isReadTest(t));
  if (readTests.length === 0)
    throw new RangeError(`reads on the replicas: the tests (${w.tests.join(",")}) have no read test`);
  if (o.mode === "cluster" && clusterReadClient(o.client) === "generator") return clusterThroughGenerator(o, readTests);
  const before = await snapshotMembers(o.members, o.password);
  const cluster = o.mode === "cluster";
  const targets = cluster ? [o.target] : (o.readTargets ?? []);
  if (targets.length === 0) throw new RangeError("reads on the replicas: no read target");
  const rows = await runWorkload({
    workload: { ...onReplicas, tests: readTests },
    target: { ...(targets[0] as NodeEndpoint), cluster },
    targets: targets.map((t) => ({ ...t, cluster })),
    mode: o.mode,
    client: o.client,
    serverVersion: o.serverVersion,
    password: o.password,
    timestamp: o.timestamp,
    rawDir: o.rawDir,
    clientProcesses: o.clientProcesses ?? 1,
    onProgress: (e) => {
      if (e.phase === "done" && e.row)
        o.onProgress?.(`${e.row.test} on the replicas: ${Math.round(e.row.rps)} rps, p50 ${e.row.p50_ms} ms`);
    },
  });
  const after = await snapshotMembers(o.members, o.password);
  const served = readsServed(
    readTests.map((t) => BENCHMARK_TEST_COMMANDS[t]),
    memberDeltas(o.members, before, after),
  );
  checkReplicaReads(served, `${o.client.flavor}-benchmark ${readTests.join(",")} (${o.path})`);
  const note = readPathNote(o.path, { replicas: servingReplicas(served), primaries: primariesOf(after) });
  return { baseline: [], rows: prefix(note, rows, readsServedNote(served)), served: [served] };
}

/**
 * Cluster read tests with a client that cannot read from replicas: the generator, from the primaries and then from the
 * replicas.
 */
async function clusterThroughGenerator(o: ReplicaReadOptions, readTests: BenchmarkTest[]): Promise<ReplicaReadResult> {
  const w = o.workload;
  const why = `generator vload, ${generatorSeconds(w)} s per test (${o.client.flavor}-benchmark ${o.client.version} has no --rfr, valkey-benchmark ≥ 8.1 has)`;
  const out: ReplicaReadResult = { baseline: [], rows: [], served: [] };
  for (const test of readTests) {
    for (const reads of ["primary", "replicas"] as const) {
      const alone: Workload = { ...w, reads, mix: [{ test, percent: 100 }], durationSeconds: generatorSeconds(w) };
      const { r, served } = await generatorRun(o, alone, `${o.mode}-${test}-${reads}`);
      if (reads === "replicas") checkReplicaReads(served, `the generator's ${test.toUpperCase()} (${o.path})`);
      const primaries = primariesOf(r.served.members);
      const note =
        reads === "primary"
          ? readPathNote("clusterPrimaries", { primaries })
          : readPathNote(o.path, { replicas: servingReplicas(served), primaries });
      const [row] = r.rows;
      if (row === undefined) continue;
      const labelled = prefix(
        note,
        [{ ...row, notes: "" }],
        `${readsServedNote(served)}; ${why}; reads ${reads === "primary" ? "on the primaries" : "on the replicas (READONLY)"}`,
      );
      (reads === "primary" ? out.baseline : out.rows).push(...labelled);
      out.served.push(served);
    }
  }
  return out;
}
