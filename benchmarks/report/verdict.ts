/**
 * "When to use which", computed from a run's own measurements instead of the seed page's opinion
 * table. Pure: a source's rows, drills, cost and loop figures in; lines out, each naming the
 * measurement it comes from, or saying that it was not measured and how to measure it. Nothing is
 * guessed: a line without its measurement says so.
 *
 * Lines: the write ceiling of one primary against the cluster's; the read scale-out per replica;
 * the latency at a target rate (open loop); what a primary's failure cost in each mode (drills);
 * the cost per 1M ops/s; then the choice these numbers support for this workload and hardware.
 */
import { MIX_CLIENT } from "../run/mix-job.js";
import { readScaleOutPairs } from "../run/read-scale-out.js";
import { REPLICATION_PATH_NOTES } from "../run/replication-paths.js";
import type { ResultMode, ResultRow } from "../run/result-row.js";
import type { DrillView } from "./drill-files.js";
import { fmtMs, fmtRatio, fmtRps } from "./format.js";
import type { ModeLoops, ReportSource } from "./model.js";
import { withTransfer } from "./verdict-transfer.js";
import { sloLabel } from "../../vocabulary/slo.js";
import { formatSummary } from "../run/slo-figure.js";
import { sloSpeedupText } from "../run/slo-table.js";

export type VerdictTopic = "writes" | "reads" | "latency" | "slo" | "failover" | "cost" | "choice";

export interface VerdictLine {
  topic: VerdictTopic;
  /** The finding, or what is missing. */
  text: string;
  /** Where it comes from (rows, files); empty when not measured. */
  from: string[];
  measured: boolean;
}

/** The measurements of one comparison: the sources holding each mode (one source with both, or a stack per mode). */
export interface VerdictInput {
  replication: ReportSource | undefined;
  cluster: ReportSource | undefined;
}

const isCeilingRow = (r: ResultRow): boolean => r.client_version !== MIX_CLIENT && !/^path: reads /.test(r.notes);

/** One primary's SET ceiling: replication direct to the primary (else through the endpoint), valkey-benchmark rows only. */
function writeRow(s: ReportSource | undefined, mode: ResultMode): ResultRow | undefined {
  const set = (s?.rows ?? []).filter((r) => r.mode === mode && r.test === "SET" && isCeilingRow(r));
  if (mode === "cluster") return set.at(-1);
  return set.find((r) => r.notes.startsWith(REPLICATION_PATH_NOTES.direct)) ?? set.at(-1);
}

const primariesOf = (s: ReportSource | undefined): number | undefined => s?.topology.find((t) => t.mode === "cluster")?.shards.length;
const where = (s: ReportSource | undefined, what: string): string => `${s?.label ?? "?"}: ${what}`;
const local = (s: ReportSource | undefined): boolean => s?.kind === "local-run" || s?.kind === "endpoint";
const SHARED = " Local servers and the client share one machine's CPUs: this is the pipeline's ceiling here, not a scale-out figure.";

function writes(i: VerdictInput): VerdictLine {
  const r = writeRow(i.replication, "replication");
  const c = writeRow(i.cluster, "cluster");
  if (r === undefined || c === undefined) {
    const missing = [r === undefined ? "replication" : "", c === undefined ? "cluster" : ""].filter(Boolean).join(" and ");
    return {
      topic: "writes",
      text: `Write ceiling: not measured for ${missing} (a SET test of valkey-benchmark: \`--tests set,...\`; a mix's SET is a share of the mix, not a ceiling).`,
      from: [],
      measured: false,
    };
  }
  const p = primariesOf(i.cluster);
  const per = p === undefined ? "" : `, ${fmtRps(c.rps / p)} per primary over ${p}`;
  return {
    topic: "writes",
    text:
      `Write ceiling (SET): one primary ${fmtRps(r.rps)} ops/s (p99 ${fmtMs(r.p99_ms)} ms); the cluster ${fmtRps(c.rps)} ops/s (p99 ${fmtMs(c.p99_ms)} ms${per}), ${fmtRatio(c.rps / r.rps)} one primary.` +
      (local(i.replication) || local(i.cluster) ? SHARED : ""),
    from: [
      where(i.replication, `replication SET row (${Object.values(REPLICATION_PATH_NOTES).find((n) => r.notes.startsWith(n)) ?? "path not recorded"})`),
      where(i.cluster, "cluster SET row"),
    ],
    measured: true,
  };
}

function reads(i: VerdictInput): VerdictLine {
  const pairs = [i.replication, i.cluster].flatMap((s) => (s === undefined ? [] : readScaleOutPairs(s.rows).map((p) => ({ s, p }))));
  const best = pairs.filter(({ p }) => p.test === "GET" && Number.isFinite(p.perServerRatio));
  if (best.length === 0) {
    return {
      topic: "reads",
      text: "Read scale-out per replica: not measured (run with `--reads replicas`: GET on the replicas against GET on the primary).",
      from: [],
      measured: false,
    };
  }
  return {
    topic: "reads",
    text:
      "Read scale-out (GET): " +
      best
        .map(
          ({ p }) =>
            `${p.mode} ${p.path.label}: ${fmtRps(p.replica.rps)} ops/s on ${p.replicas} replica(s) against ${fmtRps(p.primary.rps)} on ${p.primaries} primar${p.primaries === 1 ? "y" : "ies"}, ${fmtRatio(p.perServerRatio)} per replica`,
        )
        .join("; ") +
      "." +
      (best.some(({ s }) => local(s)) ? SHARED : ""),
    from: best.map(({ s, p }) => where(s, `${p.mode} GET rows, ${p.path.label} and its primary baseline`)),
    measured: true,
  };
}

function latency(i: VerdictInput): VerdictLine {
  const bySide: [ResultMode, ReportSource | undefined][] = [
    ["replication", i.replication],
    ["cluster", i.cluster],
  ];
  const unique: { s: ReportSource; l: ModeLoops }[] = bySide.flatMap(([mode, s]) =>
    s === undefined ? [] : (s.loops ?? []).filter((l) => l.mode === mode).map((l) => ({ s, l })),
  );
  if (unique.length === 0) {
    return {
      topic: "latency",
      text: "Latency at a target rate: not measured (run a mix open loop: `--mix get:80,set:20 --rate N`; the closed loop paced to N runs beside it).",
      from: [],
      measured: false,
    };
  }
  return {
    topic: "latency",
    text:
      "Latency at a target rate (open loop, from each request's intended send time): " +
      unique
        .map(
          ({ l }) =>
            `${l.mode} at ${fmtRps(l.rate)}/s p99 ${fmtMs(l.open.p99_ms)} ms, p99.9 ${fmtMs(l.open.p999_ms)} ms, max ${fmtMs(l.open.max_ms)} ms (the closed loop at the same rate: p99 ${fmtMs(l.closed.p99_ms)} ms)`,
        )
        .join("; ") +
      ".",
    from: unique.map(({ s, l }) => where(s, `raw/loop-comparison-${l.mode}.json`)),
    measured: true,
  };
}

/** Throughput at a latency target (`--slo`): each mode's median and range, and whether they differ beyond run-to-run noise. */
function atTarget(i: VerdictInput): VerdictLine {
  const r = i.replication?.sloSweeps?.find((x) => x.mode === "replication");
  const c = i.cluster?.sloSweeps?.find((x) => x.mode === "cluster");
  const any = r ?? c;
  if (any === undefined)
    return {
      topic: "slo",
      text: "Throughput at a latency target: not measured (run with `--slo p99:2ms`: an open-loop rate sweep per topology; deployed: benchmark.slo with benchmark.mix).",
      from: [],
      measured: false,
    };
  const side = (mode: ResultMode, x: typeof r): string => `${mode} ${x === undefined ? "not measured" : formatSummary(x.summary)}`;
  const same = r !== undefined && c !== undefined && sloLabel(r.target) === sloLabel(c.target);
  const compare = same ? `; ${sloSpeedupText(c.summary, r.summary)}` : "";
  const label =
    r !== undefined && c !== undefined && !same ? `replication at ${sloLabel(r.target)}, cluster at ${sloLabel(c.target)}` : `at ${sloLabel(any.target)}`;
  const file = (s: ReportSource | undefined, mode: ResultMode) => where(s, s?.kind === "stack" ? "benchmark.mix.sloSweep" : `raw/slo-sweep-${mode}.json`);
  return {
    topic: "slo",
    text: `Throughput ${label}: ${side("replication", r)}, ${side("cluster", c)}${compare}.` + (local(i.replication) || local(i.cluster) ? SHARED : ""),
    from: [...(r === undefined ? [] : [file(i.replication, "replication")]), ...(c === undefined ? [] : [file(i.cluster, "cluster")])],
    measured: true,
  };
}

function drillOf(s: ReportSource | undefined, mode: ResultMode): DrillView | undefined {
  return s?.drills?.find((d) => d.mode === mode && d.fault === "primary");
}

function failover(i: VerdictInput): VerdictLine {
  const r = drillOf(i.replication, "replication");
  const c = drillOf(i.cluster, "cluster");
  if (r === undefined && c === undefined) {
    return { topic: "failover", text: "A primary's failure: not measured (run the drills: `--drills primary`).", from: [], measured: false };
  }
  const say = (mode: ResultMode, d: DrillView | undefined): string =>
    d === undefined
      ? `${mode}: not measured`
      : `${mode}: writes stopped ${(d.writeOutageMs / 1000).toFixed(1)} s, healed in ${d.recoveryMs === null ? "—" : `${(d.recoveryMs / 1000).toFixed(1)} s`}, ${d.lostAckedWrites} of ${d.ackedWrites} acknowledged and ${d.lostWaitedWrites} WAIT-confirmed writes lost${d.healed ? "" : " (NOT healed)"}`;
  return {
    topic: "failover",
    text: `A primary killed: ${say("replication", r)}; ${say("cluster", c)}.`,
    from: [
      ...(r === undefined ? [] : [where(i.replication, "raw/drill-replication-primary.json")]),
      ...(c === undefined ? [] : [where(i.cluster, "raw/drill-cluster-primary.json")]),
    ],
    measured: true,
  };
}

function costRow(s: ReportSource | undefined, mode: ResultMode, test: string): ResultRow | undefined {
  return (s?.rows ?? []).filter((r) => r.mode === mode && r.test === test && typeof r.usd_per_million_ops_per_s === "number").at(-1);
}

function cost(i: VerdictInput): VerdictLine {
  const lines = (["SET", "GET"] as const).flatMap((t) => {
    const r = costRow(i.replication, "replication", t);
    const c = costRow(i.cluster, "cluster", t);
    if (r === undefined || c === undefined) return [];
    const usd = (x: ResultRow): string => `$${(x.usd_per_million_ops_per_s as number).toFixed(2)}`;
    return [`${t} replication ${usd(r)}, cluster ${usd(c)}`];
  });
  if (lines.length === 0) {
    return {
      topic: "cost",
      text: "Cost per 1M ops/s: not measured (a priced stack's rows carry it: platform eks; local runs and byo stacks have no price).",
      from: [],
      measured: false,
    };
  }
  return {
    topic: "cost",
    text: `Cost per 1M ops/s for an hour (on-demand estimate): ${lines.join("; ")}.`,
    from: [where(i.replication, "usd_per_million_ops_per_s of the replication rows"), where(i.cluster, "usd_per_million_ops_per_s of the cluster rows")],
    measured: true,
  };
}

/** The choice the measured lines support; each clause only from a measured line. */
function choice(lines: readonly VerdictLine[], i: VerdictInput): VerdictLine {
  const clauses: string[] = [];
  const r = writeRow(i.replication, "replication");
  const c = writeRow(i.cluster, "cluster");
  if (r !== undefined && c !== undefined) {
    clauses.push(
      c.rps > r.rps
        ? `a peak write rate under ${fmtRps(r.rps)} ops/s fits one primary (replication mode); above it, only cluster mode went further here (${fmtRps(c.rps)} ops/s)`
        : `cluster mode did not write faster than one primary here (${fmtRps(c.rps)} against ${fmtRps(r.rps)} ops/s): on this hardware writes alone do not call for it`,
    );
  }
  const f = lines.find((l) => l.topic === "failover" && l.measured);
  const rd = drillOf(i.replication, "replication");
  const cd = drillOf(i.cluster, "cluster");
  if (f !== undefined && rd !== undefined && cd !== undefined) {
    const shorter = rd.writeOutageMs <= cd.writeOutageMs ? "replication" : "cluster";
    clauses.push(`a primary's failure stopped writes for less time in ${shorter} mode`);
  }
  const costLine = costRow(i.replication, "replication", "SET");
  const costCluster = costRow(i.cluster, "cluster", "SET");
  if (costLine !== undefined && costCluster !== undefined)
    clauses.push(
      `a million SET/s costs less in ${(costLine.usd_per_million_ops_per_s as number) <= (costCluster.usd_per_million_ops_per_s as number) ? "replication" : "cluster"} mode`,
    );
  const missing = lines.filter((l) => !l.measured).map((l) => l.topic);
  const gaps = missing.length === 0 ? "" : ` Not measured, so not weighed: ${missing.join(", ")}.`;
  return {
    topic: "choice",
    text:
      clauses.length === 0
        ? `No choice can be computed: neither the write ceilings, the drills nor the cost were measured for both modes.${gaps}`
        : `For this workload and hardware: ${clauses.join("; ")}. The working set against one node's memory is not measured by a run: past one node's maxmemory only cluster mode holds it.${gaps}`,
    from: lines.filter((l) => l.measured).flatMap((l) => l.from),
    measured: clauses.length > 0,
  };
}

export function verdict(i: VerdictInput): VerdictLine[] {
  const lines = [writes(i), reads(i), latency(i), atTarget(i), failover(i), withTransfer(cost(i), i)];
  return [...lines, choice(lines, i)];
}

/** The comparisons of a report: each source with both modes; else one replication and one cluster source together. */
export function verdictInputs(sources: readonly ReportSource[]): { label: string; input: VerdictInput }[] {
  const has = (s: ReportSource, m: ResultMode) => s.rows.some((r) => r.mode === m) || (s.drills ?? []).some((d) => d.mode === m);
  const both = sources.filter((s) => has(s, "replication") && has(s, "cluster"));
  if (both.length > 0) return both.map((s) => ({ label: s.label, input: { replication: s, cluster: s } }));
  const r = sources.filter((s) => has(s, "replication"));
  const c = sources.filter((s) => has(s, "cluster"));
  if (r.length === 1 && c.length === 1) return [{ label: `${c[0]?.label} vs ${r[0]?.label}`, input: { replication: r[0], cluster: c[0] } }];
  return [];
}

/** summary.md / terminal: a heading and one bullet per line with its source. */
export function renderVerdictMarkdown(label: string, lines: readonly VerdictLine[]): string[] {
  return [
    `## When to use which (computed${label === "" ? "" : `: ${label}`})`,
    "",
    ...lines.map((l) => `- ${l.text}${l.from.length === 0 ? "" : ` _From: ${l.from.join("; ")}._`}`),
    "",
  ];
}

/** Terminal text: the heading and one line per finding (sources left to summary.md and the report). */
export function renderVerdictText(label: string, lines: readonly VerdictLine[]): string {
  return [`when to use which (computed${label === "" ? "" : `: ${label}`})`, ...lines.map((l) => `  - ${l.text}`)].join("\n");
}
