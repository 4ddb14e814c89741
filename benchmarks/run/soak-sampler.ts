/**
 * The soak mode of a mix (`--sample-s N`): the load generator (loadgen.ts) cuts the load into
 * windows on a fixed schedule (start + k × sampleSeconds, so hours of sampling do not drift), each
 * reply in the window it arrived in (open loop: its latency still from its intended send time),
 * and hands over each window's interval histogram as it is cut; for each, this sampler reads
 * every member's INFO (soak-info.ts) and keeps one sample (soak-sample.ts): the window's rps and
 * p50/p99/p99.9/max with the members' state at its end. Stopping waits for the pending INFO reads
 * and finds the events in the series (soak-events.ts).
 *
 * An INFO read that is slow (a frozen member waits out the poller's timeout) delays only that
 * sample's INFO, never the window's cut; polls are serialised, so samples keep their order.
 *
 * No filesystem, no Pulumi: usable from a bundled in-pod script.
 */
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";
import { IntervalLog } from "./latency-histogram.js";
import type { LoadgenWindow } from "./loadgen.js";
import { InfoPoller } from "./soak-info.js";
import { detectSoakEvents, describeSoakEvent } from "./soak-events.js";
import type { MemberInfo, SoakRecord, SoakSample } from "./soak-sample.js";

/** Reads every member's INFO (InfoPoller, or a stand-in over the same servers). */
export interface MemberPoller {
  poll(): Promise<MemberInfo[]>;
}

export interface SoakSamplerOptions {
  sampleSeconds: number;
  poller: MemberPoller;
  /** Each sample as it is taken (progress lines). */
  onSample?: (s: SoakSample) => void;
  /** A last window shorter than this share of `sampleSeconds` is dropped. @default 0.2 */
  minLastWindowShare?: number;
}

export interface SoakSampler {
  /** One window of the load, as the generator cut it. */
  window: (w: LoadgenWindow) => void;
  /** Waits for the pending INFO reads and returns the series with its events. */
  stop: () => Promise<SoakResult>;
}

export interface SoakResult {
  record: SoakRecord;
  /** The windows' interval histograms as HdrHistogram's interval log (`.hlog`). */
  hlog: string;
}

const ms = (us: number): number => Number((us / 1000).toFixed(3));
const round = (x: number, digits: number): number => Number(x.toFixed(digits));

/** Reads the baseline INFO (before the load); then a sample per window handed over. */
export async function startSoakSampler(o: SoakSamplerOptions): Promise<SoakSampler> {
  if (!Number.isFinite(o.sampleSeconds) || o.sampleSeconds <= 0)
    throw new RangeError(`soak: sampleSeconds must be > 0, got ${o.sampleSeconds}`);
  const baseline = await o.poller.poll();
  const samples: SoakSample[] = [];
  const windows: LoadgenWindow[] = [];
  let startedAtMs: number | undefined;
  let polls: Promise<void> = Promise.resolve();
  let last: LoadgenWindow | undefined;
  let taken = 0;

  const take = (w: LoadgenWindow): void => {
    startedAtMs ??= w.fromMs;
    windows.push(w);
    const windowS = Math.max(1e-3, (w.toMs - w.fromMs) / 1000);
    const load = {
      t_s: round((w.toMs - startedAtMs) / 1000, 3),
      at: new Date(w.toMs).toISOString(),
      window_s: round(windowS, 3),
      requests: w.hist.count,
      errors: w.errors,
      rps: round(w.hist.count / windowS, 2),
      p50_ms: ms(w.hist.quantile(0.5)),
      p99_ms: ms(w.hist.quantile(0.99)),
      p999_ms: ms(w.hist.quantile(0.999)),
      max_ms: ms(w.hist.max),
    };
    const n = taken++;
    polls = polls.then(async () => {
      const sample = { ...load, members: await o.poller.poll() };
      samples[n] = sample;
      o.onSample?.(sample);
    });
  };

  return {
    window: (w) => {
      last = w;
      take(w);
    },
    // The last window (cut when the load ended) is dropped when it is too short to say anything.
    stop: async () => {
      await polls;
      if (last !== undefined && (last.toMs - last.fromMs) / 1000 < (o.minLastWindowShare ?? 0.2) * o.sampleSeconds) {
        samples.pop();
        windows.pop();
      }
      last = undefined;
      const log = new IntervalLog(startedAtMs ?? Date.now());
      for (const w of windows) log.add(w.hist, w.fromMs, w.toMs);
      const record = {
        sampleSeconds: o.sampleSeconds,
        startedAt: new Date(startedAtMs ?? Date.now()).toISOString(),
        baseline,
        samples,
        events: detectSoakEvents(baseline, samples),
      };
      return { record, hlog: windows.length === 0 ? "" : log.log() };
    },
  };
}

/**
 * A mix's soak: an InfoPoller over `members` (closed when the sampler stops) and a sampler that
 * reports each sample as a progress line. `stop()` may be called more than once (the runner
 * calls it again on its way out after a failure): the first call's result is returned.
 */
export async function startMixSoak(o: {
  sampleSeconds: number;
  members: readonly NodeEndpoint[];
  password?: string;
  onProgress?: (line: string) => void;
}): Promise<SoakSampler> {
  const poller = new InfoPoller({
    members: o.members,
    password: o.password,
    timeoutMs: Math.min(2000, Math.max(200, 500 * o.sampleSeconds)),
  });
  try {
    const sampler = await startSoakSampler({
      sampleSeconds: o.sampleSeconds,
      poller,
      onSample: (s) =>
        o.onProgress?.(
          `soak t=${Math.round(s.t_s)} s: ${Math.round(s.rps)} rps, p99 ${s.p99_ms} ms, max ${s.max_ms} ms` +
            `${s.members.some((m) => m.aof_rewrite_in_progress === 1) ? ", AOF rewrite in progress" : ""}${s.errors > 0 ? `, ${s.errors} errors` : ""}`,
        ),
    });
    let stopped: Promise<SoakResult> | undefined;
    return {
      window: sampler.window,
      stop: () => (stopped ??= sampler.stop().finally(() => poller.close())),
    };
  } catch (err) {
    poller.close();
    throw err;
  }
}

/** The rows' notes: `soak: 24 samples every 5 s, 3 event(s): aof-rewrite ×2, full-resync ×1 (in summary.md)`. */
export function soakNote(r: SoakRecord): string {
  const kinds = new Map<string, number>();
  for (const e of r.events) kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
  const listed = [...kinds].map(([k, n]) => `${k} ×${n}`).join(", ");
  return `soak: ${r.samples.length} samples every ${r.sampleSeconds} s, ${r.events.length} event(s)${listed === "" ? "" : `: ${listed} (in summary.md)`}`;
}

/** summary.md: the soak's events, one line each with its evidence. */
export function renderSoakMarkdown(soaks: readonly { label: string; record: SoakRecord }[]): string[] {
  if (soaks.length === 0) return [];
  const lines = ["## Soak events", ""];
  for (const { label, record } of soaks) {
    lines.push(
      `### ${label}: ${record.samples.length} samples every ${record.sampleSeconds} s from ${record.startedAt}`,
      "",
    );
    if (record.events.length === 0)
      lines.push(
        "No event: no AOF rewrite, full resync, replica link down, role change or unreachable member was seen.",
      );
    for (const e of record.events) lines.push(`- ${describeSoakEvent(e)}`);
    lines.push("");
  }
  return lines;
}
