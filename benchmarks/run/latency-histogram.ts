/**
 * Latency histograms: HdrHistogram, from the maintained npm package `hdr-histogram-js` (its
 * pure-JS build; this module is the project's only import of the library). Values are recorded
 * in whole microseconds with 3 significant digits (a recorded value is known to within 0.1 %),
 * auto-resizing (no upper bound to configure: a multi-second stall records as it is), with 64-bit
 * counts (an hours-long soak cannot overflow a bucket). Percentiles, merges and the `.hgrm` text
 * (HdrHistogram's `outputPercentileDistribution`, values in ms) all come from the library. The
 * load generator (loadgen/, Go's hdrhistogram-go) records with the same parameters and sends its
 * histograms in HdrHistogram's V2 compressed encoding, which `decode` reads; the soak's windows
 * are logged with the library's HistogramLogWriter (`.hlog`).
 */
import {
  build,
  decodeFromCompressedBase64,
  HistogramLogWriter,
  type BuildRequest,
  type Histogram,
} from "hdr-histogram-js";

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

  /**
   * A histogram in HdrHistogram's V2 compressed encoding, base64 (what the load generator sends:
   * loadgen.ts); a text that is not one throws, naming `what`.
   */
  static decode(base64: string, what: string): LatencyHistogram {
    try {
      return new LatencyHistogram(decodeFromCompressedBase64(base64, 64, false));
    } catch (err) {
      throw new RangeError(`${what}: not an HdrHistogram V2 compressed histogram (${(err as Error).message})`, {
        cause: err,
      });
    }
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
 * An HdrHistogram interval log (`.hlog`, read by HdrHistogram's log analyzers and plotters): the
 * soak's windows, each an interval histogram the load generator cut, tagged with its start and
 * end time.
 */
export class IntervalLog {
  private text = "";
  private readonly writer = new HistogramLogWriter((s) => (this.text += s));

  /** `startMs`: the wall clock at the start of the first interval (the log's base time). */
  constructor(startMs: number) {
    this.writer.outputLogFormatVersion();
    this.writer.outputStartTime(startMs);
    this.writer.baseTime = startMs;
    this.writer.outputLegend();
  }

  /** One interval's histogram with its wall-clock bounds (ms). */
  add(h: LatencyHistogram, fromMs: number, toMs: number): void {
    h.hdr.startTimeStampMsec = fromMs;
    h.hdr.endTimeStampMsec = toMs;
    this.writer.outputIntervalHistogram(h.hdr);
  }

  /** The interval log so far. */
  log(): string {
    return this.text;
  }
}
