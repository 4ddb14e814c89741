/**
 * A mix with `rate` (open loop) also runs the closed loop at the same throughput first, so the two
 * stand side by side (the report's "Closed vs open loop" section, the verdict's latency line):
 * the same commands, connections and duration, the closed loop paced to the rate (closed-loop.ts).
 * Where the server never stalls the two agree; where it does, the closed loop's percentiles hide
 * the stall and the open loop's show it (coordinated omission, measured). The open run's rows are
 * the run's rows; the closed run contributes only its figures. A soak skips the closed run (it
 * would double hours of load).
 */
import { DEFAULT_MIX_DURATION_SECONDS } from "../../vocabulary/workload.js";
import { loopFigures } from "./loop-figures.js";
import { runMix, type MixResult, type RunMixOptions } from "./mix-runner.js";

export async function runMixComparingLoops(
  o: RunMixOptions,
  run: (o: RunMixOptions) => Promise<MixResult> = runMix,
): Promise<MixResult> {
  const w = o.workload;
  if (w.rate === undefined || w.soak !== undefined) return run(o);
  const { rate: _rate, ...closedWorkload } = w;
  o.onProgress?.(`closed loop paced to ${w.rate}/s first, then the open loop at ${w.rate}/s`);
  const closed = await run({ ...o, workload: closedWorkload, pace: w.rate });
  const open = await run(o);
  return {
    ...open,
    loops: {
      rate: w.rate,
      durationSeconds: w.durationSeconds ?? DEFAULT_MIX_DURATION_SECONDS,
      closed: loopFigures(closed.rows),
      open: loopFigures(open.rows),
    },
  };
}
