/**
 * `vbench local --slo p99:2ms`: the latency-target sweep of both local topologies as one progress
 * step after the benchmark (slo-sweep.ts), the sweeps interleaved between replication and cluster
 * (replication 1, cluster 1, replication 2, …). Replication is swept through its HAProxy write
 * endpoint (the path of the side-by-side rows and of the deployed Job), cluster through a seed
 * node (the client follows the slot map). Writes raw/slo-sweep-<mode>.json and fills `records`.
 */
import { endpointKey, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { sloLabel } from "../../vocabulary/slo.js";
import { runsOf, type Workload } from "../../vocabulary/workload.js";
import type { SloSweepRecord } from "../../benchmarks/run/slo-figure.js";
import { runSloSweeps, sloMix, type SloSweepSide } from "../../benchmarks/run/slo-sweep.js";
import { writeSloFiles } from "../../benchmarks/run/slo-table.js";
import type { ValkeyBinaries } from "../../benchmarks/run/binaries.js";
import type { ProgressStep } from "../../core/util/progress.js";

export type { SloSweepRecord } from "../../benchmarks/run/slo-figure.js";
export { renderSloMarkdown, sloSideRows } from "../../benchmarks/run/slo-table.js";

/** What the sweep needs of a started topology (local-comparison.ts StartedTopology). */
export interface SweptTopology {
  mode: "replication" | "cluster";
  seed: NodeEndpoint;
  writeEndpoint?: NodeEndpoint;
  members?: NodeEndpoint[];
}

export interface LocalSloContext {
  /** Its runs (`--repeat`, runsOf) are the sweeps per topology. */
  workload: Workload;
  password?: string;
  timestamp: string;
  rawDir: string;
  /** The binaries found (the server's version goes in the rows), once found. */
  binaries: () => ValkeyBinaries | undefined;
  /** Both topologies, once started. */
  started: () => SweptTopology[];
  /** Filled with one record per topology. */
  records: SloSweepRecord[];
}

function side(c: LocalSloContext, t: SweptTopology): SloSweepSide {
  const target = t.mode === "replication" ? (t.writeEndpoint ?? t.seed) : t.seed;
  return {
    via:
      t.mode === "replication"
        ? `the HAProxy write endpoint ${endpointKey(target)}`
        : `the cluster, seed ${endpointKey(target)} (slot map followed)`,
    options: {
      workload: c.workload,
      target: { host: target.host, port: target.port, cluster: t.mode === "cluster" },
      mode: t.mode,
      serverVersion: c.binaries()?.server.version ?? "unknown",
      timestamp: c.timestamp,
      ...(c.password === undefined ? {} : { password: c.password }),
      ...(t.members === undefined ? {} : { members: t.members }),
    },
  };
}

/** The sweep's progress step, or none without `workload.slo`. */
export function sloSweepSteps(c: LocalSloContext): ProgressStep[] {
  const slo = c.workload.slo;
  if (slo === undefined) return [];
  const repeat = runsOf(c.workload);
  const mix = sloMix(c.workload)
    .map((e) => `${e.test}:${e.percent}`)
    .join(",");
  return [
    {
      title: `Throughput at ${sloLabel(slo)}: ${repeat} open-loop rate sweep(s) per topology, interleaved (mix ${mix})`,
      run: async (update) => {
        const sides = c.started().map((t) => {
          const s = side(c, t);
          return { ...s, options: { ...s.options, onProgress: update } };
        });
        const records = await runSloSweeps(sides, repeat);
        writeSloFiles(c.rawDir, records);
        c.records.push(...records);
      },
    },
  ];
}
