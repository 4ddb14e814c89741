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
 */
import type { BenchmarkLine } from "./benchmark-csv.js";

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
  if (tests.size !== 1) throw new RangeError(`combineClients: the clients measured different tests (${[...tests].join(", ")})`);
  const requests = clients.reduce((n, c) => n + c.requests, 0);
  const worst = (k: "p50Ms" | "p95Ms" | "p99Ms") => Math.max(...clients.map((c) => c.line[k]));
  const line: BenchmarkLine = {
    test: first.line.test,
    rps: round(clients.reduce((n, c) => n + c.line.rps, 0), 2),
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
