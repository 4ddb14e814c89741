/**
 * The open-loop mode of a mix (`--rate N`): requests leave at a fixed total rate whatever the
 * server does, and each request's latency is measured from its INTENDED send time
 * (start + k / rate), not from when it was actually written. A closed loop (the default: a new
 * request only when one answers) sends nothing while the server stalls, so the requests that
 * would have waited are never measured and the percentiles hide the stall (coordinated omission);
 * here they are sent on schedule, queue behind the stall, and each one's wait is counted.
 *
 * A dispatcher wakes about every millisecond, sends every request due by then (round-robin over
 * the connections; ioredis writes without waiting for earlier replies), and records each reply's
 * latency in a per-command histogram (latency-histogram.ts) and in the second of its intended
 * time (the latency-over-time series). When the generator itself falls behind (a busy client
 * host), the lateness is in the latencies too, as it would be for the application; its largest
 * value is reported so a reader can tell the two apart. After the last send, replies still out
 * are waited for up to `drainMs`; a request without a reply by then counts as an error.
 */
import type { BenchmarkTest } from "../../vocabulary/workload.js";
import { LatencyHistogram } from "./latency-histogram.js";

/** The client side of a connection: ioredis' `call`. */
export interface OpenLoopClient {
  call(command: string, ...args: string[]): Promise<unknown>;
}

export interface OpenLoopOptions {
  clients: readonly OpenLoopClient[];
  /** The mix's command order (mixSchedule), cycled. */
  schedule: readonly BenchmarkTest[];
  /** Requests per second, all connections together. */
  rate: number;
  durationSeconds: number;
  /** The request of the k-th send of `test` on connection `conn`. */
  request: (test: BenchmarkTest, conn: number) => string[];
  /** @default 30000 */
  drainMs?: number;
  /** Each reply's latency (µs, from its intended send time) and each error, as they come (a soak's sampler). */
  onReply?: (us: number) => void;
  onError?: () => void;
}

/** One second of intended send time: what was sent then and how long it took. */
export interface LatencySecond {
  second: number;
  requests: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

export interface OpenLoopResult {
  hist: Map<BenchmarkTest, LatencyHistogram>;
  series: LatencySecond[];
  errors: Map<BenchmarkTest, { count: number; first: string }>;
  /** From the first intended send to the last reply, s. */
  windowS: number;
  sent: number;
  /** The dispatcher's largest lateness (actual - intended send), ms: the generator's share of the latencies. */
  generatorLagMaxMs: number;
}

const ms = (us: number): number => Number((us / 1000).toFixed(3));

export async function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  if (!Number.isFinite(o.rate) || o.rate <= 0) throw new RangeError(`open loop: rate must be > 0 requests/s, got ${o.rate}`);
  if (o.clients.length === 0) throw new RangeError("open loop: no connection");
  const intervalNs = 1e9 / o.rate;
  const total = Math.floor(o.rate * o.durationSeconds);
  const hist = new Map<BenchmarkTest, LatencyHistogram>(o.schedule.map((t) => [t, new LatencyHistogram()]));
  const perSecond: LatencyHistogram[] = Array.from({ length: Math.ceil(o.durationSeconds) }, () => new LatencyHistogram());
  const errors = new Map<BenchmarkTest, { count: number; first: string }>();
  const out = new Set<Promise<void>>();
  let lagMaxNs = 0;
  let lastReply = 0n;
  const started = process.hrtime.bigint();
  let k = 0;
  while (k < total) {
    const now = process.hrtime.bigint();
    const due = Math.min(total - 1, Math.floor(Number(now - started) / intervalNs));
    for (; k <= due; k++) {
      const intendedNs = k * intervalNs;
      lagMaxNs = Math.max(lagMaxNs, Number(now - started) - intendedNs);
      const conn = k % o.clients.length;
      const test = o.schedule[k % o.schedule.length] as BenchmarkTest;
      const [command, ...args] = o.request(test, conn);
      const second = Math.floor(intendedNs / 1e9);
      const p = (o.clients[conn] as OpenLoopClient).call(command as string, ...args).then(
        () => {
          const end = process.hrtime.bigint();
          if (end > lastReply) lastReply = end;
          const us = (Number(end - started) - intendedNs) / 1000;
          (hist.get(test) as LatencyHistogram).record(us);
          perSecond[second]?.record(us);
          o.onReply?.(us);
        },
        (err: Error) => {
          o.onError?.();
          const e = errors.get(test) ?? { count: 0, first: err.message };
          e.count++;
          errors.set(test, e);
        },
      );
      out.add(p);
      void p.finally(() => out.delete(p));
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  const drain = Promise.all([...out]);
  const bound = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), o.drainMs ?? 30_000).unref());
  if ((await Promise.race([drain, bound])) === "timeout") {
    const e = errors.get(o.schedule[0] as BenchmarkTest) ?? { count: 0, first: `no reply within ${o.drainMs ?? 30_000} ms of the last send` };
    e.count += out.size;
    errors.set(o.schedule[0] as BenchmarkTest, e);
  }
  return {
    hist,
    series: perSecond.map((h, second) => ({ second, requests: h.count, p50_ms: ms(h.quantile(0.5)), p99_ms: ms(h.quantile(0.99)), max_ms: ms(h.max) })),
    errors,
    windowS: Number((lastReply > started ? lastReply : process.hrtime.bigint()) - started) / 1e9,
    sent: k,
    generatorLagMaxMs: Number((lagMaxNs / 1e6).toFixed(3)),
  };
}
