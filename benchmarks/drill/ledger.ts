/**
 * A drill's write ledger and the figures computed from it: pure functions over the records the
 * load generator (load.ts) keeps, one per unique-key write: when it was sent, when it was
 * acknowledged (or failed), and whether `WAIT 1 <timeout>` then confirmed it reached a replica.
 * Two ledgers follow from the records: acknowledged writes, and acknowledged writes confirmed
 * by WAIT. After recovery every acknowledged key is read back; a missing or wrong value is a
 * lost write, a key that could not be read (its node did not answer) is unknown, never lost.
 * Lost acknowledged writes are checked against the fault's promised bound (bounds.ts).
 */
import type { DrillMode, Fault } from "../../vocabulary/faults.js";
import { inWindow, type AckedLossBound, type LossWindow } from "./bounds.js";

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
  /**
   * Confirmed: `WAIT 1` answered ≥ 1 in the same pipeline, on the same connection and by the same
   * node that acknowledged the SET, and that node still answered ROLE master after the WAIT.
   */
  waited: boolean;
  /** The node that acknowledged the write (address or cluster node id), when known. */
  node?: string;
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
  /** Acknowledged writes whose key could not be read back (no node answered for it): neither kept nor lost. */
  unknownWrites: number;
  /** Lost acknowledged writes acknowledged outside the fault's promised window (0 when no window is given). */
  lostAckedOutsideBound: number;
  /** Longest gap between two successful acknowledgements (or the last one and the load's stop). */
  writeOutageMs: number;
  /** Ack time of the last success before the longest gap and of the first after it (ms from the fault). */
  outageFromMs: number;
  outageToMs: number;
  before: LatencyStats;
  during: LatencyStats;
  /** The keys lost (first 20), for the report. */
  lostKeys: string[];
  /** When each of those was acknowledged, ms from the fault (where in time the loss is). */
  lostAckedAtMs: number[];
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
  /** key -> the value read back after recovery (undefined: missing; a key absent from the map: could not be read, unknown). */
  readBack: ReadonlyMap<string, string | undefined>;
  /** The fault's promised loss window (bounds.ts); absent: no bound is checked. */
  bound?: LossWindow;
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
  const unknown = acked.filter((r) => !i.readBack.has(r.key));
  const lost = acked.filter((r) => i.readBack.has(r.key) && i.readBack.get(r.key) !== r.value);
  const bound = i.bound;
  const outside = bound === undefined ? [] : lost.filter((r) => !inWindow(bound, r.doneAt, i.faultAt));
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
    unknownWrites: unknown.length,
    lostAckedOutsideBound: outside.length,
    writeOutageMs: gap.ms,
    outageFromMs: gap.from - i.faultAt,
    outageToMs: gap.to - i.faultAt,
    before: latencyStats(records, i.faultAt - (i.beforeMs ?? 10_000), i.faultAt),
    during: latencyStats(records, i.faultAt, duringEnd),
    lostKeys: lost.slice(0, 20).map((r) => r.key),
    lostAckedAtMs: lost.slice(0, 20).map((r) => Math.round(r.doneAt - i.faultAt)),
  };
}

/** The drill's one-line figures: sums over the streams, and the worst stream's outage and latencies. */
export type CombinedFigures = Omit<StreamFigures, "stream" | "lostKeys" | "lostAckedAtMs" | "outageFromMs" | "outageToMs" | "before" | "during"> & {
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
    unknownWrites: sum((s) => s.unknownWrites),
    lostAckedOutsideBound: sum((s) => s.lostAckedOutsideBound),
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
  /** The fault's promised acknowledged-loss bound and what it allows in this drill's writes; null: none checked. */
  ackedLossBound: AckedLossBound | null;
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
    unknownWrites: total.unknownWrites,
    lostAckedOutsideBound: total.lostAckedOutsideBound,
    ackedLossBound:
      i.bound === undefined
        ? null
        : { ...i.bound, writes: i.records.filter((r) => r.ok && streams.includes(r.stream) && inWindow(i.bound as LossWindow, r.doneAt, i.faultAt)).length },
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
  /** drillOk: healed, every key read back, no WAIT-confirmed write lost, acknowledged loss within the bound. */
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

/**
 * What `ok` (and the exit code) requires: healed; every acknowledged key read back (none unknown);
 * no WAIT-confirmed write lost; every lost acknowledged write inside the fault's promised window
 * (so at most `ackedLossBound.writes`); a bound must have been checked.
 */
export function drillOk(
  healed: boolean,
  f: Pick<LoadFigures, "unknownWrites" | "lostWaitedWrites" | "lostAckedOutsideBound" | "lostAckedWrites" | "ackedLossBound">,
): boolean {
  if (!healed || f.ackedLossBound === null) return false;
  return f.unknownWrites === 0 && f.lostWaitedWrites === 0 && f.lostAckedOutsideBound === 0 && f.lostAckedWrites <= f.ackedLossBound.writes;
}
