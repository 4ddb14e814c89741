/**
 * Latencies in µs in logarithmic buckets 1 % wide (an HDR-style histogram: constant relative
 * precision over the whole range, 1 µs to ~6 h), with the exact count, min, max and sum. Used by
 * the mix runner (closed and open loop); `percentileDistribution` writes it in HdrHistogram's
 * text form (`.hgrm`), which HdrHistogram's plotters read.
 */

const LN_1_01 = Math.log(1.01);

/** Latencies in µs, in buckets 1 % wide (bucket i holds (1.01^(i-1), 1.01^i]); exact count, min, max, sum. */
export class LatencyHistogram {
  private readonly buckets = new Float64Array(2400);
  count = 0;
  sum = 0;
  min = Number.POSITIVE_INFINITY;
  max = 0;

  record(us: number): void {
    const v = Math.max(us, 1);
    const i = Math.min(this.buckets.length - 1, Math.ceil(Math.log(v) / LN_1_01));
    this.buckets[i] = (this.buckets[i] as number) + 1;
    this.count++;
    this.sum += v;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
  }

  /** The q-quantile (0..1) in µs: the upper edge of its bucket, capped at the maximum seen. */
  quantile(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      seen += this.buckets[i] as number;
      if (seen >= rank) return Math.min(1.01 ** i, this.max);
    }
    return this.max;
  }

  merge(other: LatencyHistogram): void {
    other.buckets.forEach((n, i) => (this.buckets[i] = (this.buckets[i] as number) + n));
    this.count += other.count;
    this.sum += other.sum;
    this.min = Math.min(this.min, other.min);
    this.max = Math.max(this.max, other.max);
  }
}

/**
 * HdrHistogram's percentile distribution text (`Value Percentile TotalCount 1/(1-Percentile)`, in
 * ms), at the percentiles HdrHistogram prints (halving the remainder: 50, 75, 87.5, ...), then the
 * maximum; the footer carries mean, max and count.
 */
export function percentileDistribution(h: LatencyHistogram): string {
  const lines = [`${"Value".padStart(12)} ${"Percentile".padStart(14)} ${"TotalCount".padStart(10)} 1/(1-Percentile)`, ""];
  const at = (q: number): string => {
    const v = (h.quantile(q) / 1000).toFixed(3);
    const total = Math.ceil(q * h.count);
    const inv = q >= 1 ? "" : (1 / (1 - q)).toFixed(2);
    return `${v.padStart(12)} ${q.toFixed(12).padStart(14)} ${String(total).padStart(10)} ${inv.padStart(14)}`;
  };
  for (let k = 0; k < 20 && h.count > 0; k++) {
    const q = 1 - 0.5 ** k;
    if (Math.ceil(q * h.count) >= h.count) break;
    lines.push(at(q));
  }
  if (h.count > 0) lines.push(at(1));
  const mean = h.count === 0 ? 0 : h.sum / h.count / 1000;
  lines.push(`#[Mean    = ${mean.toFixed(3)}, StdDeviation   = n/a]`, `#[Max     = ${(h.max / 1000).toFixed(3)}, Total count    = ${h.count}]`);
  return `${lines.join("\n")}\n`;
}
