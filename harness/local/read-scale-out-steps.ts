/**
 * The local comparison's read scale-out steps (`--reads replicas`, benchmarks/run/replica-reads.ts):
 *
 * - replication: the read tests (or the mix, its reads) direct to every replica at once (one
 *   benchmark process per replica, started together; the mix: a connection to a replica each),
 *   and through the HAProxy read endpoint (role:slave backend; the mix's writes through the write
 *   endpoint). Their baselines are the "direct to the primary" and "write endpoint" rows the
 *   comparison measured before with the same client.
 * - cluster: the read tests (or the mix's reads) on the replicas over READONLY connections:
 *   valkey-benchmark ≥ 8.1 `--rfr yes`, else the ioredis generator, which then also measures the
 *   primaries' baseline (redis-benchmark 7, Debian's, has no `--rfr`).
 *
 * Every step reads INFO commandstats of every member before and after, and fails when the
 * replicas did not serve the reads.
 */
import type { ValkeyBinaries } from "../../benchmarks/run/binaries.js";
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import type { Workload } from "../../vocabulary/workload.js";
import { clusterReadClient, runReplicaReads, type ReplicaReadOptions } from "../../benchmarks/run/replica-reads.js";
import type { ResultRow } from "../../benchmarks/run/result-row.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { landing } from "./endpoint-landing.js";
import type { ProgressStep } from "../../core/util/progress.js";

export interface ReadScaleOutContext {
  workload: Workload;
  password?: string;
  timestamp: string;
  rawDir: string;
  clientProcesses: number;
  binaries: () => ValkeyBinaries;
  /** Appends measured rows to the run's results. */
  push: (rows: readonly ResultRow[]) => void;
}

export interface ReplicationReadTopology {
  primary: NodeEndpoint;
  replicas: NodeEndpoint[];
  writeEndpoint: NodeEndpoint;
  readEndpoint: NodeEndpoint;
}

const common = (c: ReadScaleOutContext, update: (line: string) => void) => ({
  workload: c.workload,
  client: c.binaries().benchmark,
  serverVersion: c.binaries().server.version,
  password: c.password,
  timestamp: c.timestamp,
  rawDir: c.rawDir,
  clientProcesses: c.clientProcesses,
  onProgress: update,
});

const what = (w: Workload): string => (w.mix === undefined ? "GET" : "the mix's reads");

async function measure(
  c: ReadScaleOutContext,
  o: Omit<ReplicaReadOptions, keyof ReturnType<typeof common>>,
  update: (line: string) => void,
): Promise<void> {
  const r = await runReplicaReads({ ...common(c, update), ...o });
  c.push(r.baseline);
  c.push(r.rows);
  for (const row of [...r.baseline, ...r.rows])
    update(`${row.test}: ${Math.round(row.rps)} rps, p50 ${row.p50_ms} ms (${row.notes.split(";")[0]})`);
}

/** Until a new connection through the read endpoint lands on a replica (HAProxy's role:slave checks have risen). */
async function readEndpointReady(t: ReplicationReadTopology, password: string | undefined): Promise<void> {
  const replicaPorts = new Set(t.replicas.map((r) => r.port));
  await pollUntil(
    async () => {
      const l = await landing(t.readEndpoint, password);
      return l.port !== undefined && replicaPorts.has(l.port) ? true : `landed on ${l.port ?? l.error ?? "nothing"}`;
    },
    { timeoutMs: 30_000, intervalMs: 200, what: `the read endpoint ${endpointKey(t.readEndpoint)} to reach a replica` },
  );
}

/** Replication: reads direct to the replicas, then through the read endpoint. Empty unless reads go to the replicas. */
export function replicationReadSteps(c: ReadScaleOutContext, topology: () => ReplicationReadTopology): ProgressStep[] {
  if (c.workload.reads !== "replicas") return [];
  const members = (t: ReplicationReadTopology) => [t.primary, ...t.replicas];
  return [
    {
      title: `Reads on the replicas (replication): ${what(c.workload)} direct to every replica at once`,
      run: async (update) => {
        const t = topology();
        await measure(
          c,
          {
            mode: "replication",
            path: "replicasDirect",
            target: t.primary,
            readTargets: t.replicas,
            members: members(t),
          },
          update,
        );
      },
    },
    {
      title: `Reads on the replicas (replication): ${what(c.workload)} through the HAProxy read endpoint`,
      run: async (update) => {
        const t = topology();
        await readEndpointReady(t, c.password);
        await measure(
          c,
          {
            mode: "replication",
            path: "readEndpoint",
            target: t.writeEndpoint,
            readTargets: [t.readEndpoint],
            members: members(t),
          },
          update,
        );
      },
    },
  ];
}

/** Cluster: reads on the replicas over READONLY connections. Empty unless reads go to the replicas. */
export function clusterReadSteps(
  c: ReadScaleOutContext,
  cluster: () => { seed: NodeEndpoint; members: NodeEndpoint[] },
): ProgressStep[] {
  if (c.workload.reads !== "replicas") return [];
  const how = () =>
    c.workload.mix !== undefined || clusterReadClient(c.binaries().benchmark) === "generator"
      ? "the load generator, READONLY connections to each shard's replica"
      : "valkey-benchmark --rfr yes";
  return [
    {
      title: `Reads on the replicas (cluster): ${what(c.workload)} over READONLY connections`,
      run: async (update) => {
        const t = cluster();
        update(`client: ${how()}`);
        await measure(c, { mode: "cluster", path: "clusterReplicas", target: t.seed, members: t.members }, update);
      },
    },
  ];
}
