/**
 * Which alerts a series of drills fired, read afterwards from a Prometheus's own history (its `ALERTS` series, one
 * per alert instance while pending or firing) instead of sampled while each drill ran (harness/drill/alert-watch.ts):
 * the deployed drills' `drills.alertsFrom` and the pods tier's Prometheus. The range query's steps become the
 * snapshots alerts-seen.ts reads; each drill is read from its own fault over the history from the previous drill's
 * fault (so an alert carried over reads as pending before the fault, not as new) to the next one's.
 */
import { parse } from "yaml";
import { sleep } from "../util/poll-until.js";
import { alertsSeen, type AlertSeen, type AlertSnapshot } from "./alerts-seen.js";

/** A range query's matrix, as `/api/v1/query_range` answers it (values: [seconds, value]). */
export type RangeMatrix = ReadonlyArray<{
  metric: Record<string, string>;
  values: ReadonlyArray<readonly [number, string]>;
}>;

/** One snapshot per step from startS to endS: the ALERTS series that have a point at it. */
export function alertSnapshots(series: RangeMatrix, startS: number, endS: number, stepS: number): AlertSnapshot[] {
  const out: AlertSnapshot[] = [];
  for (let t = startS; t <= endS; t += stepS)
    out.push({
      at: t * 1000,
      alerts: series
        .filter((x) => x.values.some(([at]) => at === t))
        .map((x) => ({
          name: x.metric.alertname ?? "",
          state: x.metric.alertstate === "firing" ? ("firing" as const) : ("pending" as const),
          labels: x.metric,
        })),
    });
  return out;
}

/** Each drill's alerts, from its fault (ms since the epoch), over the history between its neighbours' faults. */
export function alertsPerDrill(
  faultsAt: readonly number[],
  snapshots: readonly AlertSnapshot[],
  fromMs: number,
  toMs: number,
): AlertSeen[][] {
  return faultsAt.map((fault, i) =>
    alertsSeen(
      snapshots.filter((s) => s.at >= (faultsAt[i - 1] ?? fromMs) && s.at < (faultsAt[i + 1] ?? toMs)),
      fault,
    ),
  );
}

/** How many times a read is asked when it fails on the way (no answer in time, refused, reset, HTTP 5xx). */
export const API_ATTEMPTS = 3;

/**
 * The Prometheus HTTP API at `url` (`http(s)://host:port[/prefix]`): a GET's `data`, or an error naming the path.
 * A failure on the way (a port-forward that hangs or drops a connection, a server restarting) is asked again, 2 s
 * apart, up to API_ATTEMPTS times; an answer that says the request is wrong (HTTP 4xx, not Prometheus) is not.
 */
async function apiData<T>(url: string, path: string, timeoutMs: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const r = await apiOnce<T>(url, path, timeoutMs);
    if (r.ok) return r.data;
    if (!r.transient || attempt >= API_ATTEMPTS)
      throw new Error(`${r.message}${r.transient ? ` (asked ${attempt} times)` : ""}`, { cause: r.cause });
    await sleep(2000);
  }
}

type ApiAnswer<T> = { ok: true; data: T } | { ok: false; transient: boolean; message: string; cause?: unknown };

async function apiOnce<T>(url: string, path: string, timeoutMs: number): Promise<ApiAnswer<T>> {
  const at = `${url.replace(/\/+$/, "")}${path}`;
  const where = at.split("?")[0];
  let r: Response;
  try {
    r = await fetch(at, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    // fetch's own message is "fetch failed"; the reason (ECONNREFUSED, a timeout) is its cause.
    const e = err as Error & { cause?: { code?: string } };
    return { ok: false, transient: true, message: `${where}: ${e.cause?.code ?? e.message}`, cause: e };
  }
  const body = (await r.json().catch(() => ({}))) as { status?: string; data?: T; error?: string };
  if (r.ok && body.status === "success" && body.data !== undefined) return { ok: true, data: body.data };
  const message = `${where}: HTTP ${r.status}${body.error ? `: ${body.error}` : ""}`;
  return { ok: false, transient: r.status >= 500, message };
}

/** Prometheus's duration text ("15s", "1m", "1m30s", "500ms") in ms. */
export function durationMs(text: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text)
    throw new Error(`not a Prometheus duration: ${text}`);
  return parts.reduce((ms, p) => ms + Number(p[1]) * (units[p[2]!] ?? 0), 0);
}

/**
 * How often Prometheus's discovery manager hands a changed target set to its scrapers (fixed in Prometheus, not a
 * setting): a pod recreated on a new address is scraped up to this much after discovery saw it.
 */
export const DISCOVERY_UPDATE_MS = 5000;

/**
 * How long after a change an alert over it has surely been evaluated: a discovery update (a recreated pod's new
 * target), two of the server's scrape intervals (one to see it, one for a scrape that was under way) and two of its
 * evaluation intervals (global settings from `/api/v1/status/config`; Prometheus's defaults, 1 m each, when unset),
 * capped at `capMs`.
 */
export async function alertSettleMs(url: string, capMs = 120_000): Promise<number> {
  const { yaml } = await apiData<{ yaml: string }>(url, "/api/v1/status/config", 10_000);
  const global = (parse(yaml) as { global?: Record<string, string> } | null)?.global ?? {};
  const settle =
    DISCOVERY_UPDATE_MS +
    2 * durationMs(global.scrape_interval ?? "1m") +
    2 * durationMs(global.evaluation_interval ?? "1m");
  return Math.min(capMs, settle);
}

/** The ALERTS history from `fromMs` to `toMs` at `stepS`, as snapshots. */
export async function readAlertHistory(
  url: string,
  fromMs: number,
  toMs: number,
  stepS: number,
): Promise<AlertSnapshot[]> {
  const [startS, endS] = [Math.floor(fromMs / 1000), Math.ceil(toMs / 1000)];
  const q = `/api/v1/query_range?query=ALERTS&start=${startS}&end=${endS}&step=${stepS}`;
  const data = await apiData<{ resultType: string; result: RangeMatrix }>(url, q, 30_000);
  return alertSnapshots(data.result, startS, endS, stepS);
}
