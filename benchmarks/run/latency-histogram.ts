/**
 * Latency histograms: HdrHistogram, from the maintained npm package `hdr-histogram-js` (its
 * pure-JS build; this module is the project's only import of the library). Values are recorded
 * in whole microseconds with 3 significant digits (a recorded value is known to within 0.1 %),
 * auto-resizing (no upper bound to configure: a multi-second stall records as it is), with 64-bit
 * counts (an hours-long soak cannot overflow a bucket). Percentiles, merges and the `.hgrm` text
 * (HdrHistogram's `outputPercentileDistribution`, values in ms) all come from the library; the
 * soak's per-window histograms come from its Recorder (interval histograms) and are logged with
 * its HistogramLogWriter (`.hlog`, read by HdrHistogram's log analyzers and plotters).
 */
import { build, HistogramLogWriter, Recorder, type BuildRequest, type Histogram } from "hdr-histogram-js";

/** µs, 3 significant digits, auto-resizing, 64-bit counts, the pure-JS implementation. */
const BUILD: BuildRequest = {
  bitBucketSize: 64,
  autoResize: true,
  lowestDiscernibleValue: 1,
  highestTrackableValue: 2,
  numberOfSignificantValueDigits: 3,
  useWebAssembly: false,
};

/** Whole µs, at least 1 (a sub-µs reply still took time). */
const toUs = (us: number): number => Math.max(1, Math.round(us));

/** One HdrHistogram of latencies in µs, with the figures the rows need. */
export class LatencyHistogram {
  constructor(readonly hdr: Histogram = build(BUILD)) {}

  record(us: number): void {
    this.hdr.recordValue(toUs(us));
  }

  get count(): number {
    return this.hdr.totalCount;
  }

  /** µs; 0 when empty. */
  get max(): number {
    return this.count === 0 ? 0 : this.hdr.maxValue;
  }

  /** µs; 0 when empty. */
  get min(): number {
    return this.count === 0 ? 0 : this.hdr.minNonZeroValue;
  }

  /** µs; 0 when empty. */
  get mean(): number {
    return this.count === 0 ? 0 : this.hdr.mean;
  }

  /** The q-quantile (0..1) in µs (HdrHistogram's value at percentile 100·q, never above the maximum); 0 when empty. */
  quantile(q: number): number {
    if (this.count === 0) return 0;
    return Math.min(this.hdr.getValueAtPercentile(100 * q), this.hdr.maxValue);
  }

  /** Adds the other histogram's counts to this one (HdrHistogram `add`). */
  merge(other: LatencyHistogram): void {
    this.hdr.add(other.hdr);
  }
}

/** HdrHistogram's percentile distribution text (`.hgrm`), values in ms, 5 ticks per half distance. */
export function percentileDistribution(h: LatencyHistogram): string {
  return h.hdr.outputPercentileDistribution(5, 1000);
}

/**
 * Interval histograms, as HdrHistogram takes them: record into a Recorder, and `interval()`
 * returns everything recorded since the previous call (a fresh histogram each time). The
 * intervals are also appended to an HdrHistogram interval log (`log()`), each tagged with its
 * start and end time.
 */
export class IntervalRecorder {
  private readonly recorder = new Recorder(BUILD);
  private text = "";
  private readonly writer = new HistogramLogWriter((s) => (this.text += s));

  /** `startMs`: the wall clock at the start of the first interval (the log's base time). */
  constructor(startMs: number) {
    this.writer.outputLogFormatVersion();
    this.writer.outputStartTime(startMs);
    this.writer.baseTime = startMs;
    this.writer.outputLegend();
  }

  record(us: number): void {
    this.recorder.recordValue(toUs(us));
  }

  /** What was recorded since the previous call, logged with its wall-clock bounds (ms). */
  interval(fromMs: number, toMs: number): LatencyHistogram {
    const h = this.recorder.getIntervalHistogram();
    h.startTimeStampMsec = fromMs;
    h.endTimeStampMsec = toMs;
    this.writer.outputIntervalHistogram(h);
    return new LatencyHistogram(h);
  }

  /** The interval log so far (HdrHistogram's `.hlog` text: compressed interval histograms, one a line). */
  log(): string {
    return this.text;
  }
}
