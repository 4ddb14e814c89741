/**
 * What a real Prometheus measured during a drill (`--metrics`): commands per second on each
 * member, from its exporter (`redis_commands_processed_total`), seconds from the fault. The second
 * reading of the drill's load: the writers count their own acknowledgements; this is the servers'.
 */

/** The range query the drill row carries (1 s steps; the exporters are scraped every second). */
export const LIVE_OPS_QUERY = 'sum by (pod) (rate(redis_commands_processed_total{component="valkey"}[3s]))';

export interface LiveMetrics {
  query: string;
  /** Per pod: [seconds from the fault, commands per second]. */
  series: { pod: string; points: [number, number][] }[];
}

/** A range query's matrix as the row keeps it: times relative to the fault, one decimal. */
export function liveMetricsOf(
  matrix: readonly { labels: Record<string, string>; values: readonly [number, number][] }[],
  faultAtMs: number,
): LiveMetrics {
  return {
    query: LIVE_OPS_QUERY,
    series: matrix
      .map((m) => ({
        pod: m.labels.pod ?? "?",
        points: m.values.map(([t, v]): [number, number] => [
          Math.round((t * 1000 - faultAtMs) / 100) / 10,
          Math.round(v * 10) / 10,
        ]),
      }))
      .sort((a, b) => a.pod.localeCompare(b.pod)),
  };
}
