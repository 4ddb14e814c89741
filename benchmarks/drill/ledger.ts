/**
 * A drill's write ledger and the figures computed from it: pure functions over the records the
 * load generator (load.ts) keeps, one per unique-key write: when it was sent, when it was
 * acknowledged (or failed), and whether `WAIT 1 <timeout>` then confirmed it reached a replica.
 * Two ledgers follow from the records: acknowledged writes, and acknowledged writes confirmed
 * by WAIT. After recovery every acknowledged key is read back; a missing or wrong value is a
 * lost write.
 */

export type Fault = "primary" | "replica" | "zone" | "all" | "switchover" | "lost-volume";
export const FAULTS: readonly Fault[] = ["primary", "replica", "zone", "all", "switchover", "lost-volume"];
/** Faults only the local drills inject (the deployed FailureDrill refuses them by name). */
export const LOCAL_ONLY_FAULTS: readonly Fault[] = ["lost-volume"];
export type DrillMode = "cluster" | "replication";

export interface WriteRecord {
  /** Load stream (e.g. "cluster-client", "sentinel-client", "write-endpoint"). */
  stream: string;
  key: string;
  value: string;
  /** Date.now() when sent. */
  sentAt: number;
  /** Date.now() when the SET was acknowledged or failed. */
  doneAt: number;
  ok: boolean;
  error?: string;
  /** WAIT 1 answered ≥ 1 for this write (only asked for acknowledged writes). */
  waited: boolean;
}

export interface LatencyStats {
  /** Successful writes in the window. */
  count: number;
  /** Failed writes in the window. */
  failed: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

export interface StreamFigures {
  stream: string;
  writes: number;
  ackedWrites: number;
  lostAckedWrites: number;
  waitedWrites: number;
  lostWaitedWrites: number;
  /** Longest gap between two successful acknowledgements (or the last one and the load's stop). */
  writeOutageMs: number;
  /** Ack time of the last success before the longest gap and of the first after it (ms from the fault). */
  outageFromMs: number;
  outageToMs: number;
  before: LatencyStats;
  during: LatencyStats;
  /** The keys lost (first 20), for the report. */
  lostKeys: string[];
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] as number;
}

export function latencyStats(records: readonly WriteRecord[], from: number, to: number): LatencyStats {
  const inWindow = records.filter((r) => r.sentAt >= from && r.sentAt < to);
  const lat = inWindow
    .filter((r) => r.ok)
    .map((r) => r.doneAt - r.sentAt)
    .sort((a, b) => a - b);
  return {
    count: lat.length,
    failed: inWindow.length - lat.length,
    p50Ms: percentile(lat, 50),
    p99Ms: percentile(lat, 99),
    maxMs: lat.length === 0 ? null : (lat[lat.length - 1] as number),
  };
}

/**
 * The longest gap between successful acks, the load's stop counting as an edge (a load that
 * never writes again has its outage to the end). Measured from the first ack, so the client's
 * connection set-up is not an outage; with no ack at all, the whole load.
 */
export function longestGap(records: readonly WriteRecord[], loadStart: number, loadStop: number): { ms: number; from: number; to: number } {
  const acks = records
    .filter((r) => r.ok)
    .map((r) => r.doneAt)
    .sort((a, b) => a - b);
  const edges = acks.length === 0 ? [loadStart, loadStop] : [...acks, loadStop];
  let best = { ms: 0, from: loadStart, to: loadStart };
  for (let i = 1; i < edges.length; i++) {
    const gap = (edges[i] as number) - (edges[i - 1] as number);
    if (gap > best.ms) best = { ms: gap, from: edges[i - 1] as number, to: edges[i] as number };
  }
  return best;
}

export interface FigureInput {
  records: readonly WriteRecord[];
  /** key -> the value read back after recovery (undefined: missing). */
  readBack: ReadonlyMap<string, string | undefined>;
  faultAt: number;
  loadStart: number;
  loadStop: number;
  /** Length of the "before" window. @default 10000 */
  beforeMs?: number;
}

/**
 * Figures of one stream. "During the outage" is the window from the fault to the end of the
 * longest write gap that ends after the fault (at least 1 s): writes sent in it, succeeded or not.
 */
export function streamFigures(stream: string, i: FigureInput): StreamFigures {
  const records = i.records.filter((r) => r.stream === stream);
  const acked = records.filter((r) => r.ok);
  const waited = acked.filter((r) => r.waited);
  const lost = acked.filter((r) => i.readBack.get(r.key) !== r.value);
  const after = records.filter((r) => r.doneAt >= i.faultAt || r.sentAt >= i.faultAt);
  const gap = longestGap(records, i.loadStart, i.loadStop);
  const gapAfter = longestGap(after, i.faultAt, i.loadStop);
  const duringEnd = Math.max(gapAfter.to, i.faultAt + 1000);
  return {
    stream,
    writes: records.length,
    ackedWrites: acked.length,
    lostAckedWrites: lost.length,
    waitedWrites: waited.length,
    lostWaitedWrites: lost.filter((r) => r.waited).length,
    writeOutageMs: gap.ms,
    outageFromMs: gap.from - i.faultAt,
    outageToMs: gap.to - i.faultAt,
    before: latencyStats(records, i.faultAt - (i.beforeMs ?? 10_000), i.faultAt),
    during: latencyStats(records, i.faultAt, duringEnd),
    lostKeys: lost.slice(0, 20).map((r) => r.key),
  };
}

/** The drill's one-line figures: sums over the streams, and the worst stream's outage and latencies. */
export type CombinedFigures = Omit<StreamFigures, "stream" | "lostKeys" | "outageFromMs" | "outageToMs" | "before" | "during"> & {
  p50MsBefore: number | null;
  p99MsBefore: number | null;
  maxMsBefore: number | null;
  p50MsDuring: number | null;
  p99MsDuring: number | null;
  maxMsDuring: number | null;
};

/** Sums and worst cases over the streams: what the drill's one-line figures report. */
export function combineStreams(streams: readonly StreamFigures[]): CombinedFigures {
  const sum = (f: (s: StreamFigures) => number): number => streams.reduce((a, s) => a + f(s), 0);
  const worst = (f: (s: StreamFigures) => number | null): number | null => {
    const v = streams.map(f).filter((x): x is number => x !== null);
    return v.length === 0 ? null : Math.max(...v);
  };
  return {
    writes: sum((s) => s.writes),
    ackedWrites: sum((s) => s.ackedWrites),
    lostAckedWrites: sum((s) => s.lostAckedWrites),
    waitedWrites: sum((s) => s.waitedWrites),
    lostWaitedWrites: sum((s) => s.lostWaitedWrites),
    writeOutageMs: worst((s) => s.writeOutageMs) ?? 0,
    p50MsBefore: worst((s) => s.before.p50Ms),
    p99MsBefore: worst((s) => s.before.p99Ms),
    maxMsBefore: worst((s) => s.before.maxMs),
    p50MsDuring: worst((s) => s.during.p50Ms),
    p99MsDuring: worst((s) => s.during.p99Ms),
    maxMsDuring: worst((s) => s.during.maxMs),
  };
}

/** A latency in ms as a drill row reports it: to 0.01 ms. */
export const roundLatency = (v: number | null): number | null => (v === null ? null : Math.round(v * 100) / 100);

/** What every drill reports from its load (the local drills' run-drill.ts and the deployed FailureDrill step). */
export interface LoadFigures extends CombinedFigures {
  /** Load streams: cluster-client; replication: sentinel-client AND write-endpoint, concurrently. */
  streams: StreamFigures[];
  /** Writes failed (error or timeout), all streams; `writes` (sent) and the other figures: CombinedFigures. */
  failedWrites: number;
}

/** Each stream's figures and their combination (outage to the ms, latencies to 0.01 ms). */
export function loadFigures(streams: readonly string[], i: FigureInput): LoadFigures {
  const perStream = streams.map((s) => streamFigures(s, i));
  const total = combineStreams(perStream);
  return {
    streams: perStream,
    writeOutageMs: Math.round(total.writeOutageMs),
    writes: total.writes,
    failedWrites: total.writes - total.ackedWrites,
    ackedWrites: total.ackedWrites,
    lostAckedWrites: total.lostAckedWrites,
    waitedWrites: total.waitedWrites,
    lostWaitedWrites: total.lostWaitedWrites,
    p50MsBefore: roundLatency(total.p50MsBefore),
    p99MsBefore: roundLatency(total.p99MsBefore),
    maxMsBefore: roundLatency(total.maxMsBefore),
    p50MsDuring: roundLatency(total.p50MsDuring),
    p99MsDuring: roundLatency(total.p99MsDuring),
    maxMsDuring: roundLatency(total.maxMsDuring),
  };
}

/** One drill's row, local (run-drill.ts DrillResult) or deployed (the FailureDrill step's DeployedDrill): its load's figures plus what the drill measured. */
export interface DrillOutcome extends LoadFigures {
  mode: DrillMode;
  fault: Fault;
  /** Healed and no WAIT-confirmed write lost. */
  ok: boolean;
  healed: boolean;
  topology: string;
  faultDescription: string;
  /** Fault → the verifier passing; null when not healed. */
  recoveryMs: number | null;
  /** Fault → the first survivor marking a failed member (Sentinel +sdown / CLUSTER NODES fail?); null with a note when not seen. */
  detectionMs: number | null;
  detectionNote?: string;
  rate: number;
  waitTimeoutMs: number;
}

/** Parses `primary,zone` (or `all-faults`-free lists), naming an unknown fault. */
export function parseFaults(text: string): Fault[] {
  const names = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (names.length === 0) throw new Error("no fault named (known: primary, replica, zone, all, switchover)");
  const bad = names.filter((n) => !(FAULTS as readonly string[]).includes(n));
  if (bad.length > 0) throw new Error(`unknown fault(s) ${bad.join(", ")} (known: ${FAULTS.join(", ")})`);
  return [...new Set(names)] as Fault[];
}
