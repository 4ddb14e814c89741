/**
 * Load from many clients: N benchmark processes (locally) or N pods (the in-cluster Job) run the
 * same test against the same target at the same time, and their results are combined into one
 * row. Pure.
 *
 * How the numbers combine:
 * - rps: the sum of the clients' rps. Each client's rps is its requests over its own window;
 *   the windows overlap because the clients start together (same instant locally; a shared start
 *   time in the Job), so the sum is the aggregate rate while all ran. A client that finishes early
 *   makes the sum a slight over-estimate of the rate over the longest window.
 * - p50/p95/p99: the WORST client's (the maximum). The combined distribution is the mixture of
 *   the clients' distributions, and a mixture's q-quantile lies between the smallest and the
 *   largest of its components' q-quantiles, so the worst client's value is an upper bound on the
 *   true combined percentile (and the best client's a lower bound). The exact combined percentile
 *   needs every client's full latency histogram, which valkey-benchmark's CSV does not print:
 *   that is what combining loses. Each client's percentiles stay in the row's notes.
 * - avg: the request-weighted mean of the clients' averages (exact). min/max: min and max.
 * - requests and clients (connections): summed over the clients; duration: the longest client's.
 * - the client's CPU (client pods, each on its own node): the busiest pod's; client-bound when any
 *   pod was.
 */
import type { BenchmarkLine } from "./benchmark-csv.js";
import type { ResultRow } from "./result-row.js";
import { withoutSpread } from "./run-spread.js";

export interface ClientMeasurement {
  line: BenchmarkLine;
  requests: number;
  wallSeconds: number;
}

export interface CombinedMeasurement extends ClientMeasurement {
  /** One entry per client, in client order: what the notes report. */
  perClient: ClientMeasurement[];
}

const round = (x: number, digits: number): number => Number(x.toFixed(digits));

/** Combines the clients' measurements of one test (see the module comment for the rules). */
export function combineClients(clients: readonly ClientMeasurement[]): CombinedMeasurement {
  const [first] = clients;
  if (first === undefined) throw new RangeError("combineClients: no client measurements");
  const tests = new Set(clients.map((c) => c.line.test));
  if (tests.size !== 1)
    throw new RangeError(`combineClients: the clients measured different tests (${[...tests].join(", ")})`);
  const requests = clients.reduce((n, c) => n + c.requests, 0);
  const worst = (k: "p50Ms" | "p95Ms" | "p99Ms") => Math.max(...clients.map((c) => c.line[k]));
  const line: BenchmarkLine = {
    test: first.line.test,
    rps: round(
      clients.reduce((n, c) => n + c.line.rps, 0),
      2,
    ),
    avgMs: round(clients.reduce((n, c) => n + c.line.avgMs * c.requests, 0) / requests, 3),
    minMs: Math.min(...clients.map((c) => c.line.minMs)),
    p50Ms: worst("p50Ms"),
    p95Ms: worst("p95Ms"),
    p99Ms: worst("p99Ms"),
    maxMs: Math.max(...clients.map((c) => c.line.maxMs)),
  };
  return { line, requests, wallSeconds: Math.max(...clients.map((c) => c.wallSeconds)), perClient: [...clients] };
}

/** The notes a combined row carries: how many clients, and each one's rps, p50 and p99. */
export function perClientNote(perClient: readonly ClientMeasurement[], unit = "client processes"): string {
  const list = (f: (c: ClientMeasurement) => number) => perClient.map(f).join("|");
  return (
    `${perClient.length} ${unit}: rps summed, p50/p95/p99 are the worst client's; ` +
    `per client rps ${list((c) => c.line.rps)}, p50 ${list((c) => c.line.p50Ms)} ms, p99 ${list((c) => c.line.p99Ms)} ms`
  );
}

/** The client CPU of the busiest client (each client has its own cores: bound when any client was). */
function busiestClient(rows: readonly ResultRow[]): Partial<ResultRow> {
  const measured = rows.filter((r) => r.client_cpu_pct !== undefined);
  if (measured.length === 0) return {};
  const top = measured.reduce((a, r) => ((r.client_cpu_pct as number) > (a.client_cpu_pct as number) ? r : a));
  return {
    client_cpu_pct: top.client_cpu_pct,
    client_cores: top.client_cores,
    client_bound: rows.some((r) => r.client_bound === true),
  };
}

/**
 * The rows of several clients (one list per client, same tests in the same order, e.g. the
 * parsed logs of the Job's pods) as one list: per test, combineClients over the clients' rows;
 * `clients` and `requests` summed, duration the longest; notes: the per-client note, then each
 * client's own notes (re-runs) prefixed with its number.
 */
export function combineClientRows(perClient: readonly (readonly ResultRow[])[], unit = "client pods"): ResultRow[] {
  const [first] = perClient;
  if (first === undefined) throw new RangeError("combineClientRows: no clients");
  if (perClient.length === 1) return [...first];
  const tests = first.map((r) => r.test);
  perClient.forEach((rows, i) => {
    if (rows.map((r) => r.test).join(",") !== tests.join(",")) {
      throw new RangeError(
        `combineClientRows: client ${i + 1} measured ${rows.map((r) => r.test).join(",") || "nothing"}, client 1 ${tests.join(",")}`,
      );
    }
  });
  return first.map((first, t) => {
    // The combined figures are new: one run's, whatever spread the clients' rows had.
    const base = withoutSpread(first);
    const rows = perClient.map((c) => c[t] as ResultRow);
    const m = combineClients(
      rows.map((r) => ({
        line: {
          test: r.test,
          rps: r.rps,
          avgMs: r.avg_ms,
          minMs: r.min_ms,
          p50Ms: r.p50_ms,
          p95Ms: r.p95_ms,
          p99Ms: r.p99_ms,
          maxMs: r.max_ms,
        },
        requests: r.requests,
        wallSeconds: r.duration_s,
      })),
    );
    const own = rows.flatMap((r, i) => (r.notes === "" ? [] : [`client ${i + 1}: ${r.notes}`]));
    return {
      ...base,
      rps: m.line.rps,
      p50_ms: m.line.p50Ms,
      p95_ms: m.line.p95Ms,
      p99_ms: m.line.p99Ms,
      avg_ms: m.line.avgMs,
      min_ms: m.line.minMs,
      max_ms: m.line.maxMs,
      requests: m.requests,
      duration_s: m.wallSeconds,
      clients: rows.reduce((n, r) => n + r.clients, 0),
      notes: [perClientNote(m.perClient, unit), ...own].join("; "),
      ...busiestClient(rows),
    };
  });
}
