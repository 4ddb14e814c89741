/**
 * The report's input: everything `report.html` shows, as plain data, loaded from one or more
 * sources (a local run's results directory, a deployed stack's `report` output, a bare
 * results.csv). The page builder and chart specs read only this model, never files.
 *
 * Optional sections plug in as optional fields of `ReportSource` plus one entry in the page's
 * section list (see page.ts `SECTIONS`); a section renders only when some source carries its
 * data. The shard-scaling sweep (`sweep`) is the first; fault drills (with a write-latency
 * timeline) and cost per topology are not produced yet, so they are not declared here: adding
 * one is additive and changes no existing field.
 */
import { isReadPathRow } from "../run/read-scale-out.js";
import type { ResultMode, ResultRow } from "../run/result-row.js";
import type { SweepRow } from "../sweep/sweep-csv.js";
import type { LadderFile } from "../scale/ladder-file.js";
import type { MachineView } from "../run/machine.js";
import type { DrillView } from "./drill-files.js";
import type { SoakFile } from "../run/soak-sample.js";
import type { LoopComparison } from "../run/loop-figures.js";
import type { MixJobExtras } from "../run/mix-job-result.js";
import type { TransferFile } from "../cost/transfer-record.js";
import type { SloSweepRecord } from "../run/slo-figure.js";

/** A mode's closed vs open loop figures (loop-section.ts). */
export type ModeLoops = LoopComparison & { mode: ResultMode };
/** A mode's open-loop series (loop-section.ts). */
export type ModeOpenLoop = NonNullable<MixJobExtras["openLoop"]> & { mode: ResultMode };

export const REPORT_MODES: readonly ResultMode[] = ["replication", "cluster"];

/** One replica as the verifier saw it. */
export interface TopologyReplica {
  address: string;
  zone: string | null;
  crossAz: boolean;
  /** Local runs record the replication link; the stack summary does not. */
  linkUp: boolean | null;
}

/** One primary with its replicas (a shard in cluster mode; the only primary in replication mode). */
export interface TopologyShard {
  address: string;
  zone: string | null;
  /** e.g. ["0-5460"]; empty in replication mode. */
  slotRanges: string[];
  keys: number | null;
  replicas: TopologyReplica[];
}

/** The verifier's view of one mode's topology (after the benchmark, when recorded). */
export interface TopologyView {
  mode: ResultMode;
  ok: boolean;
  failures: { code: string; message: string }[];
  shards: TopologyShard[];
  primariesPerZone: Record<string, number>;
  /** Every zone any node is in, sorted. */
  zones: string[];
  nodeCount: number;
  /** Free-text observations the verifier made that are not failures. */
  notes: string[];
}

/** The workload as recorded; fields a source does not record are null. */
export interface WorkloadView {
  name: string;
  tests: string[];
  clients: number | null;
  pipeline: number | null;
  dataSize: number | null;
  threads: number | null;
  keyspaceLength: number | null;
  /** Requests per test (`-n`) before any re-run. */
  requests: number | null;
  minDurationSeconds: number | null;
}

/** The machine the benchmark ran on (local runs record it in run.json). */
export type { MachineView };

export type SourceKind = "local-run" | "endpoint" | "stack" | "results-csv";

/** One source of results, shown side by side with the others. */
export interface ReportSource {
  /** Short, unique label used in tables, legends and series names. */
  label: string;
  kind: SourceKind;
  /** The path it was loaded from, as given. */
  path: string;
  rows: ResultRow[];
  /** Per mode present; empty when the source records no topology. */
  topology: TopologyView[];
  workload: WorkloadView;
  /** Ordered name → value pairs (server, client, image, Kubernetes, ...). */
  versions: [string, string][];
  machine: MachineView | null;
  /** Where it ran: "this machine (127.0.0.1, ...)", "EKS stack cluster in us-east-1a, ...". */
  environment: string;
  /** The run's topology descriptions, e.g. "cluster: 3 primaries × 1 replica(s), 6 nodes". */
  describe: string[];
  /** A shard-scaling sweep's rows (sweep.csv), when the source is a sweep. */
  sweep?: SweepRow[];
  /** The scale ladder's rungs (scale-ladder.json, `npm run bench:scale -- --json`), when the run dir holds one. */
  scaleLadder?: LadderFile;
  /** Failure drills (raw/drill-<mode>-<fault>.json), when the run had any. */
  drills?: DrillView[];
  /** Soaks (raw/soak-<mode>.json), when the run sampled one. */
  soak?: SoakFile[];
  /** Closed vs open loop at the same rate (raw/loop-comparison-<mode>.json), when a mix ran with a rate. */
  loops?: ModeLoops[];
  /** The open loop's latency per second (raw/latency-series-<mode>.json). */
  openLoop?: ModeOpenLoop[];
  /** Throughput at a latency target: the rate sweep per mode (raw/slo-sweep-<mode>.json), when run with `--slo`. */
  sloSweeps?: SloSweepRecord[];
  /** A deployed stack's cost estimate (stack report `cost`), when recorded. */
  cost?: CostView;
  /** Data transfer per mode (raw/transfer-<mode>.json; a stack report's `benchmark.transfer`), when measured. */
  transfer?: TransferFile[];
}

/** What the cost section shows of a stack's estimate (benchmarks/cost/cost-model.ts StackCost). */
export interface CostView {
  region: string;
  usdPerHour: number | null;
  priceSource: string;
  pricingApiError: string | null;
  valkeyInstanceType: string | null;
  clientInstanceType: string | null;
  lines: {
    item: string;
    quantity: number;
    unit: string;
    usdPerHour: number | null;
    source: string | null;
    missing?: string;
  }[];
  missing: string[];
}

export interface ReportInput {
  title: string;
  /** ISO 8601, when the page was rendered. */
  generatedAt: string;
  sources: ReportSource[];
}

/** A measured series: one source's rows of one mode. */
export interface Series {
  /** "cluster", or "<source> · cluster" when there is more than one source. */
  name: string;
  source: ReportSource;
  mode: ResultMode;
  rows: ResultRow[];
}

/** Every (source, mode) with rows, sources in order, replication before cluster. */
export function seriesOf(input: ReportInput): Series[] {
  const many = input.sources.length > 1;
  const out: Series[] = [];
  for (const source of input.sources) {
    for (const mode of REPORT_MODES) {
      const rows = source.rows.filter((r) => r.mode === mode);
      if (rows.length > 0) out.push({ name: many ? `${source.label} · ${mode}` : mode, source, mode, rows });
    }
  }
  return out;
}

/** Tests in first-seen order over all sources. */
export function testsOf(input: ReportInput): string[] {
  return [...new Set(input.sources.flatMap((s) => s.rows.map((r) => r.test)))];
}

/**
 * The last row of a series for a test (re-runs are folded into one row already; the read scale-out rows have their own
 * section).
 */
export function rowFor(series: Series, test: string): ResultRow | undefined {
  return series.rows.filter((r) => r.test === test && !isReadPathRow(r)).at(-1);
}

/** A cluster series and a replication series the speedup column compares. */
export interface SpeedupPair {
  label: string;
  cluster: Series;
  replication: Series;
}

/**
 * What "cluster speedup" compares: each source that has both modes against itself; when no
 * source has both but the sources hold exactly one cluster and one replication series (two
 * stacks, one per mode), those two.
 */
export function speedupPairs(series: readonly Series[]): SpeedupPair[] {
  const pairs: SpeedupPair[] = [];
  const bySource = new Map<ReportSource, Partial<Record<ResultMode, Series>>>();
  for (const s of series) bySource.set(s.source, { ...bySource.get(s.source), [s.mode]: s });
  const many = bySource.size > 1;
  for (const [source, m] of bySource) {
    if (m.cluster && m.replication)
      pairs.push({
        label: many ? source.label : "cluster vs replication",
        cluster: m.cluster,
        replication: m.replication,
      });
  }
  if (pairs.length > 0) return pairs;
  const clusters = series.filter((s) => s.mode === "cluster");
  const replications = series.filter((s) => s.mode === "replication");
  const [c] = clusters;
  const [r] = replications;
  if (clusters.length === 1 && replications.length === 1 && c && r) {
    pairs.push({ label: `${c.source.label} vs ${r.source.label}`, cluster: c, replication: r });
  }
  return pairs;
}
