/**
 * A report's measured numbers as Prometheus metrics (text exposition format 0.0.4): what
 * `vbench report --prometheus FILE` writes for node_exporter's textfile collector, so the figures a
 * run or a stack measured sit on the same dashboards as the live metrics. Every series is a gauge
 * labelled with its source and the row's own identity (mode, workload, test, clients, pipeline,
 * datasize, timestamp); a drill's with its mode, fault and run number. Latencies are in seconds
 * (Prometheus's base unit), never milliseconds.
 */
import type { ResultRow } from "../run/result-row.js";
import type { DrillView } from "./drill-files.js";
import type { ReportSource } from "./model.js";

interface Family {
  help: string;
  samples: Array<{ labels: Record<string, string>; value: number }>;
}

/** `\`, `"` and newlines escaped, as the exposition format wants label values. */
export function escapeLabelValue(v: string): string {
  return v.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}

function rowLabels(source: string, r: ResultRow): Record<string, string> {
  return {
    source,
    mode: r.mode,
    workload: r.workload,
    test: r.test,
    clients: String(r.clients),
    pipeline: String(r.pipeline),
    datasize: String(r.datasize),
    timestamp: r.timestamp,
  };
}

/** `percentile`, not `quantile`: a quantile label belongs to summaries (promtool check metrics says so). */
const PERCENTILES: Array<[string, keyof ResultRow]> = [
  ["50", "p50_ms"],
  ["95", "p95_ms"],
  ["99", "p99_ms"],
  ["99.9", "p999_ms"],
];

function rowSamples(add: Adder, source: string, r: ResultRow): void {
  const labels = rowLabels(source, r);
  add("vbench_throughput_ops_per_second", labels, r.rps);
  add("vbench_throughput_min_ops_per_second", labels, r.rps_min);
  add("vbench_throughput_max_ops_per_second", labels, r.rps_max);
  add("vbench_runs", labels, r.runs ?? 1);
  for (const [pct, key] of PERCENTILES) {
    const ms = r[key];
    if (typeof ms === "number") add("vbench_latency_seconds", { ...labels, percentile: pct }, ms / 1000);
  }
  add("vbench_cost_usd_per_hour", labels, r.usd_per_hour);
  add("vbench_cross_zone_bytes_per_second", labels, r.cross_zone_bytes_per_s);
  add("vbench_client_cpu_ratio", labels, r.client_cpu_pct === undefined ? undefined : r.client_cpu_pct / 100);
}

function drillSamples(add: Adder, source: string, d: DrillView, run: number): void {
  const labels = { source, mode: d.mode, fault: d.fault, run: String(run) };
  add("vbench_drill_ok", labels, d.ok ? 1 : 0);
  add("vbench_drill_write_outage_seconds", labels, d.writeOutageMs / 1000);
  add("vbench_drill_recovery_seconds", labels, d.recoveryMs === null ? undefined : d.recoveryMs / 1000);
  add("vbench_drill_detection_seconds", labels, d.detectionMs === null ? undefined : d.detectionMs / 1000);
  add("vbench_drill_acked_writes", labels, d.ackedWrites);
  add("vbench_drill_acked_writes_lost", labels, d.lostAckedWrites);
  add("vbench_drill_waited_writes_lost", labels, d.lostWaitedWrites);
  add("vbench_drill_unexpected_replies", labels, d.unexpectedReplies);
}

type Adder = (name: string, labels: Record<string, string>, value: number | null | undefined) => void;

/** Every metric the export writes, with its HELP text: what a dashboard may name (tests/core/dashboard.test.ts). */
export const VBENCH_METRIC_HELP: Readonly<Record<string, string>> = {
  vbench_throughput_ops_per_second: "Requests per second measured (the median of the row's runs).",
  vbench_throughput_min_ops_per_second: "The lowest run's requests per second.",
  vbench_throughput_max_ops_per_second: "The highest run's requests per second.",
  vbench_runs: "How many runs the row's figures are the medians of.",
  vbench_latency_seconds: "Latency at the percentile, as the load generator measured it.",
  vbench_cost_usd_per_hour: "The stack's estimated on-demand cost per hour when the row was measured.",
  vbench_cross_zone_bytes_per_second: "Bytes per second that crossed zones during the row (replication, client, bus).",
  vbench_client_cpu_ratio:
    "The load generator's CPU time over its wall time, of the cores it may use (near 1: client-bound).",
  vbench_drill_ok: "1 when the drill healed with its loss inside the stated bound.",
  vbench_drill_write_outage_seconds:
    "Longest write stop of the drill's load (per shard in cluster mode: the affected shard's).",
  vbench_drill_recovery_seconds: "Fault to the topology verifier passing again.",
  vbench_drill_detection_seconds: "Fault to the failure being detected (Sentinel +sdown, cluster fail flag).",
  vbench_drill_acked_writes: "Writes acknowledged (OK) to the writer without WAIT.",
  vbench_drill_acked_writes_lost: "Acknowledged writes (no WAIT) missing after the heal.",
  vbench_drill_waited_writes_lost: "WAIT-confirmed writes missing after the heal.",
  vbench_drill_unexpected_replies: "Replies to SET that were neither OK nor an error.",
};

/** The exposition text of every source's rows and drills; throws on two samples with the same series. */
export function prometheusExposition(sources: readonly ReportSource[]): string {
  const families = new Map<string, Family>();
  const add: Adder = (name, labels, value) => {
    if (value === null || value === undefined || !Number.isFinite(value)) return;
    const f = families.get(name) ?? { help: VBENCH_METRIC_HELP[name] ?? name, samples: [] };
    f.samples.push({ labels, value });
    families.set(name, f);
  };
  for (const s of sources) {
    for (const r of s.rows) rowSamples(add, s.label, r);
    const runs = new Map<string, number>();
    for (const d of s.drills ?? []) {
      const key = `${d.mode}/${d.fault}`;
      runs.set(key, (runs.get(key) ?? 0) + 1);
      drillSamples(add, s.label, d, runs.get(key) ?? 1);
    }
  }
  return [...families.entries()].map(([name, f]) => familyText(name, f)).join("");
}

function familyText(name: string, f: Family): string {
  const seen = new Set<string>();
  const lines = [`# HELP ${name} ${f.help}`, `# TYPE ${name} gauge`];
  for (const { labels, value } of f.samples) {
    const body = Object.entries(labels)
      .map(([k, v]) => `${k}="${escapeLabelValue(v)}"`)
      .join(",");
    if (seen.has(body)) throw new Error(`${name}{${body}} twice: two rows of one source with the same identity`);
    seen.add(body);
    lines.push(`${name}{${body}} ${value}`);
  }
  return `${lines.join("\n")}\n`;
}
