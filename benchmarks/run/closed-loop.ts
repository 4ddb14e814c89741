/**
 * The closed loop of a mix (the default): `pipeline` lanes per connection, each sending its next
 * request the moment its previous one answered, until the deadline; latency from the call to the
 * reply. A stalled server delays the next sends instead of queueing them, so its percentiles hide
 * the wait of requests never sent (coordinated omission); open-loop.ts is the other way.
 *
 * `pace` (requests/s in total): the closed loop held to that throughput, to set it side by side
 * with the open loop at the same rate (loop-comparison.ts). Lane i of L sends its k-th request no
 * earlier than start + (i + k·L) / pace: without stalls it sends on the open loop's schedule; behind
 * schedule it sends at once, one at a time (never a burst: one request in flight per lane), and
 * still measures from its own send. That is exactly the closed loop's blind spot the comparison
 * shows.
 */
import type { BenchmarkTest } from "../../vocabulary/workload.js";
import { LatencyHistogram } from "./latency-histogram.js";
import type { OpenLoopClient } from "./open-loop.js";

export interface ClosedLoopOptions {
  clients: readonly OpenLoopClient[];
  /** Requests in flight per connection (lanes). */
  pipeline: number;
  /** The mix's command order (mixSchedule), one shared cursor over every lane. */
  schedule: readonly BenchmarkTest[];
  durationSeconds: number;
  /** The request of `test` on connection `conn`. */
  request: (test: BenchmarkTest, conn: number) => string[];
  /** Hold the loop to this many requests per second in total. @default unpaced */
  pace?: number;
  /** Each reply's latency (µs) and each error, as they come (a soak's sampler). */
  onReply?: (us: number) => void;
  onError?: () => void;
}

export interface ClosedLoopResult {
  hist: Map<BenchmarkTest, LatencyHistogram>;
  errors: Map<BenchmarkTest, { count: number; first: string }>;
  /** From the first send to the deadline (or the last reply after it), s. */
  windowS: number;
}

const sleepUntil = (ns: bigint): Promise<void> => {
  const waitMs = Number(ns - process.hrtime.bigint()) / 1e6;
  return waitMs <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, waitMs));
};

export async function runClosedLoop(o: ClosedLoopOptions): Promise<ClosedLoopResult> {
  if (o.pace !== undefined && (!Number.isFinite(o.pace) || o.pace <= 0)) throw new RangeError(`closed loop: pace must be > 0 requests/s, got ${o.pace}`);
  const hist = new Map<BenchmarkTest, LatencyHistogram>(o.schedule.map((t) => [t, new LatencyHistogram()]));
  const errors = new Map<BenchmarkTest, { count: number; first: string }>();
  const lanes = o.clients.length * o.pipeline;
  let next = 0;
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(o.durationSeconds * 1e9));
  const lane = async (conn: number, index: number): Promise<void> => {
    const c = o.clients[conn] as OpenLoopClient;
    for (let k = 0; ; k++) {
      if (o.pace !== undefined) {
        const due = started + BigInt(Math.round(((index + k * lanes) * 1e9) / o.pace));
        if (due >= deadline) return;
        await sleepUntil(due);
      }
      if (process.hrtime.bigint() >= deadline) return;
      const test = o.schedule[next++ % o.schedule.length] as BenchmarkTest;
      const [command, ...args] = o.request(test, conn);
      const t0 = process.hrtime.bigint();
      try {
        await c.call(command as string, ...args);
        const us = Number(process.hrtime.bigint() - t0) / 1000;
        (hist.get(test) as LatencyHistogram).record(us);
        o.onReply?.(us);
      } catch (err) {
        o.onError?.();
        const e = errors.get(test) ?? { count: 0, first: (err as Error).message };
        e.count++;
        errors.set(test, e);
      }
    }
  };
  await Promise.all(o.clients.flatMap((_, conn) => Array.from({ length: o.pipeline }, (_x, p) => lane(conn, conn * o.pipeline + p))));
  return { hist, errors, windowS: Number(process.hrtime.bigint() - started) / 1e9 };
}
