/**
 * The soak mode of a mix (`--sample-s N`): started around the load loop, it records every reply's
 * latency (the hook the loops call) into an HdrHistogram Recorder, and every `sampleSeconds`
 * cuts the window (an interval histogram: rps and p50/p99/p99.9/max of that window alone), reads
 * every member's INFO (soak-info.ts) and keeps one sample (soak-sample.ts). Stopping cuts the
 * last, partial window and finds the events in the series (soak-events.ts).
 *
 * Windows are cut on a fixed schedule (start + k × sampleSeconds, so hours of sampling do not
 * drift), by the time each reply arrived: in the open loop a reply delayed by a stall lands in
 * the window it came back in, with its latency from its intended send time. An INFO read that is
 * slow (a frozen member waits out the poller's timeout) delays only that sample's INFO, never the
 * window's cut; polls are serialised, so samples keep their order.
 *
 * No filesystem, no Pulumi: usable from a bundled in-pod script.
 */
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";
import { IntervalRecorder } from "./latency-histogram.js";
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
  /** A reply's latency, µs. */
  record: (us: number) => void;
  /** An error reply. */
  recordError: () => void;
  /** Cuts the last window, waits for the pending INFO reads, and returns the series with its events. */
  stop: () => Promise<SoakResult>;
}

export interface SoakResult {
  record: SoakRecord;
  /** The windows' interval histograms as HdrHistogram's interval log (`.hlog`). */
  hlog: string;
}

const ms = (us: number): number => Number((us / 1000).toFixed(3));
const round = (x: number, digits: number): number => Number(x.toFixed(digits));

/** Reads the baseline INFO (before the load), then samples on schedule until `stop()`. */
export async function startSoakSampler(o: SoakSamplerOptions): Promise<SoakSampler> {
  if (!Number.isFinite(o.sampleSeconds) || o.sampleSeconds <= 0) throw new RangeError(`soak: sampleSeconds must be > 0, got ${o.sampleSeconds}`);
  const baseline = await o.poller.poll();
  const startedAtMs = Date.now();
  const started = process.hrtime.bigint();
  const recorder = new IntervalRecorder(startedAtMs);
  const samples: SoakSample[] = [];
  let errors = 0;
  let lastCut = started;
  let polls: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let k = 0;

  const cut = (): void => {
    const now = process.hrtime.bigint();
    const fromMs = startedAtMs + Number(lastCut - started) / 1e6;
    const toMs = startedAtMs + Number(now - started) / 1e6;
    const window = recorder.interval(fromMs, toMs);
    const windowS = Number(now - lastCut) / 1e9;
    const errs = errors;
    errors = 0;
    lastCut = now;
    const load = {
      t_s: round(Number(now - started) / 1e9, 3),
      at: new Date(toMs).toISOString(),
      window_s: round(windowS, 3),
      requests: window.count,
      errors: errs,
      rps: round(window.count / windowS, 2),
      p50_ms: ms(window.quantile(0.5)),
      p99_ms: ms(window.quantile(0.99)),
      p999_ms: ms(window.quantile(0.999)),
      max_ms: ms(window.max),
    };
    polls = polls.then(async () => {
      const sample = { ...load, members: await o.poller.poll() };
      samples.push(sample);
      o.onSample?.(sample);
    });
  };
  const schedule = (): void => {
    k++;
    const dueNs = started + BigInt(Math.round(k * o.sampleSeconds * 1e9));
    const waitMs = Math.max(0, Number(dueNs - process.hrtime.bigint()) / 1e6);
    timer = setTimeout(() => {
      cut();
      schedule();
    }, waitMs);
  };
  schedule();

  return {
    record: (us) => recorder.record(us),
    recordError: () => {
      errors++;
    },
    stop: async () => {
      clearTimeout(timer);
      if (Number(process.hrtime.bigint() - lastCut) / 1e9 >= (o.minLastWindowShare ?? 0.2) * o.sampleSeconds) cut();
      await polls;
      const record = {
        sampleSeconds: o.sampleSeconds,
        startedAt: new Date(startedAtMs).toISOString(),
        baseline,
        samples,
        events: detectSoakEvents(baseline, samples),
      };
      return { record, hlog: recorder.log() };
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
  const poller = new InfoPoller({ members: o.members, password: o.password, timeoutMs: Math.min(2000, Math.max(200, 500 * o.sampleSeconds)) });
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
      record: sampler.record,
      recordError: sampler.recordError,
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
    lines.push(`### ${label}: ${record.samples.length} samples every ${record.sampleSeconds} s from ${record.startedAt}`, "");
    if (record.events.length === 0) lines.push("No event: no AOF rewrite, full resync, replica link down, role change or unreachable member was seen.");
    for (const e of record.events) lines.push(`- ${describeSoakEvent(e)}`);
    lines.push("");
  }
  return lines;
}
