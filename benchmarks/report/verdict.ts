/**
 * "When to use which", computed from a run's own measurements instead of the seed page's opinion
 * table. Pure: a source's rows, drills, cost and loop figures in; lines out, each naming the
 * measurement it comes from, or saying that it was not measured and how to measure it. Nothing is
 * guessed: a line without its measurement says so.
 *
 * Lines: the write ceiling of one primary against the cluster's; the read scale-out per replica;
 * the latency at a target rate (open loop); what a primary's failure cost in each mode (drills);
 * the cost per 1M ops/s; then the choice these numbers support for this workload and hardware.
 *
 * Figures are medians with their min–max over the runs (`--repeat`, run-spread.ts). Two figures
 * whose ranges overlap are "no difference beyond run-to-run noise", said with both ranges, never
 * a winner (the choice too). A client-bound row (client-cpu.ts: its load generator used ≥ 90 % of
 * its cores) is never taken as a server's ceiling: the line says which rows it skipped and why.
 */
import { MIX_CLIENT } from "../run/mix-job.js";
import { clientCpuText, isClientBound } from "../run/client-cpu.js";
import { overlaps, rangeOf, rangeText, ratioRange, type Range } from "../run/run-spread.js";
import { ratioText } from "../run/figure-text.js";
import { readScaleOutPairs } from "../run/read-scale-out.js";
import { REPLICATION_PATH_NOTES } from "../run/replication-paths.js";
import type { ResultMode, ResultRow } from "../run/result-row.js";
import type { DrillView } from "./drill-files.js";
import { fmtMs, fmtRps } from "./format.js";
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

/** A mode's rows of a test that could be a server's ceiling, and those skipped because their client was the limit. */
interface Ceiling {
  row: ResultRow | undefined;
  skipped: ResultRow[];
}

/**
 * One primary's SET ceiling: replication direct to the primary (else through the endpoint), valkey-benchmark rows only,
 * never a client-bound one.
 */
function writeRow(s: ReportSource | undefined, mode: ResultMode): Ceiling {
  const set = (s?.rows ?? []).filter((r) => r.mode === mode && r.test === "SET" && isCeilingRow(r));
  const usable = set.filter((r) => !isClientBound(r));
  const row =
    mode === "cluster"
      ? usable.at(-1)
      : (usable.find((r) => r.notes.startsWith(REPLICATION_PATH_NOTES.direct)) ?? usable.at(-1));
  return { row, skipped: set.filter(isClientBound) };
}

const primariesOf = (s: ReportSource | undefined): number | undefined =>
  s?.topology.find((t) => t.mode === "cluster")?.shards.length;
const where = (s: ReportSource | undefined, what: string): string => `${s?.label ?? "?"}: ${what}`;
const local = (s: ReportSource | undefined): boolean => s?.kind === "local-run" || s?.kind === "endpoint";
const SHARED =
  " Local servers and the client share one machine's CPUs: this is the pipeline's ceiling here, not a scale-out figure.";
const pathName = (r: ResultRow): string =>
  Object.values(REPLICATION_PATH_NOTES).find((n) => r.notes.startsWith(n)) ?? "path not recorded";

/** "51,959 (45,002–60,117)": the median and min–max, or the figure alone for one run. */
const opsText = (r: Range): string => rangeText(r, fmtRps);

/** " (median and min–max of 3 runs each)", or "" when a side is one run. */
const runsText = (a: Range, b: Range): string =>
  a.runs > 1 && b.runs > 1
    ? ` (median and min–max of ${a.runs === b.runs ? `${a.runs} runs each` : `${a.runs} and ${b.runs} runs`})`
    : "";

/** Whether two figures are no difference beyond run-to-run noise: several runs each, and their ranges overlap. */
export function withinNoise(a: Range, b: Range): boolean {
  return a.runs > 1 && b.runs > 1 && overlaps(a, b);
}

/** " One run each: run-to-run noise not measured (`--repeat 3`)." when either side is one run. */
const singleRun = (a: Range, b: Range): string =>
  a.runs > 1 && b.runs > 1 ? "" : " One run: run-to-run noise not measured (`--repeat 3`).";

/**
 * "Skipped, client-bound (its load generator, not the server, was the limit): replication SET (…; CLIENT-BOUND: 96.0 %
 * of 2 cores)."
 */
function skippedText(skipped: readonly ResultRow[]): string {
  if (skipped.length === 0) return "";
  const each = skipped.map(
    (r) => `${r.mode} ${r.test} (${r.notes.startsWith("path: ") ? `${pathName(r)}; ` : ""}${clientCpuText(r)})`,
  );
  return ` Skipped as no server ceiling, client-bound (the load generator used ≥ 90 % of its cores, so it, not the server, was the limit): ${each.join("; ")}.`;
}

function writes(i: VerdictInput): VerdictLine {
  const rc = writeRow(i.replication, "replication");
  const cc = writeRow(i.cluster, "cluster");
  const [r, c] = [rc.row, cc.row];
  const skipped = skippedText([...rc.skipped, ...cc.skipped]);
  if (r === undefined || c === undefined) {
    const missing = [r === undefined ? "replication" : "", c === undefined ? "cluster" : ""]
      .filter(Boolean)
      .join(" and ");
    return {
      topic: "writes",
      text: `Write ceiling: not measured for ${missing} (a SET test of valkey-benchmark: \`--tests set,...\`; a mix's SET is a share of the mix, not a ceiling).${skipped}`,
      from: [],
      measured: false,
    };
  }
  const [rr, cr] = [rangeOf(r, "rps"), rangeOf(c, "rps")];
  const p = primariesOf(i.cluster);
  const per = p === undefined ? "" : `, ${fmtRps(c.rps / p)} per primary over ${p}`;
  const figures = `one primary ${opsText(rr)} ops/s (p99 ${fmtMs(r.p99_ms)} ms); the cluster ${opsText(cr)} ops/s (p99 ${fmtMs(c.p99_ms)} ms${per})`;
  const text = withinNoise(rr, cr)
    ? `Write ceiling (SET): no difference beyond run-to-run noise: ${figures}${runsText(rr, cr)}; the ranges overlap.`
    : `Write ceiling (SET): ${figures}, ${ratioText(ratioRange(cr, rr))} one primary${runsText(rr, cr)}.${singleRun(rr, cr)}`;
  return {
    topic: "writes",
    text: text + skipped + (local(i.replication) || local(i.cluster) ? SHARED : ""),
    from: [where(i.replication, `replication SET row (${pathName(r)})`), where(i.cluster, "cluster SET row")],
    measured: true,
  };
}

function reads(i: VerdictInput): VerdictLine {
  const pairs = [i.replication, i.cluster].flatMap((s) =>
    s === undefined ? [] : readScaleOutPairs(s.rows).map((p) => ({ s, p })),
  );
  const gets = pairs.filter(({ p }) => p.test === "GET" && Number.isFinite(p.perServerRatio));
  const bound = ({ p }: (typeof gets)[number]): boolean => isClientBound(p.replica) || isClientBound(p.primary);
  const best = gets.filter((x) => !bound(x));
  const skipped = skippedText(gets.filter(bound).flatMap(({ p }) => [p.replica, p.primary].filter(isClientBound)));
  if (best.length === 0) {
    return {
      topic: "reads",
      text: `Read scale-out per replica: not measured (run with \`--reads replicas\`: GET on the replicas against GET on the primary).${skipped}`,
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
            `${p.mode} ${p.path.label}: ${opsText(rangeOf(p.replica, "rps"))} ops/s on ${p.replicas} replica(s) against ${opsText(rangeOf(p.primary, "rps"))} on ${p.primaries} primar${p.primaries === 1 ? "y" : "ies"}, ${ratioText(p.perServerRange)} per replica${withinNoise(rangeOf(p.replica, "rps"), rangeOf(p.primary, "rps")) ? " (the replicas' and the primary's rps: no difference beyond run-to-run noise)" : ""}`,
        )
        .join("; ") +
      "." +
      skipped +
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

/**
 * Throughput at a latency target (`--slo`): each mode's median and range, and whether they differ beyond run-to-run
 * noise.
 */
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
  const side = (mode: ResultMode, x: typeof r): string =>
    `${mode} ${x === undefined ? "not measured" : formatSummary(x.summary)}`;
  const same = r !== undefined && c !== undefined && sloLabel(r.target) === sloLabel(c.target);
  const compare = same ? `; ${sloSpeedupText(c.summary, r.summary)}` : "";
  const label =
    r !== undefined && c !== undefined && !same
      ? `replication at ${sloLabel(r.target)}, cluster at ${sloLabel(c.target)}`
      : `at ${sloLabel(any.target)}`;
  const file = (s: ReportSource | undefined, mode: ResultMode) =>
    where(s, s?.kind === "stack" ? "benchmark.mix.sloSweep" : `raw/slo-sweep-${mode}.json`);
  return {
    topic: "slo",
    text:
      `Throughput ${label}: ${side("replication", r)}, ${side("cluster", c)}${compare}.` +
      (local(i.replication) || local(i.cluster) ? SHARED : ""),
    from: [
      ...(r === undefined ? [] : [file(i.replication, "replication")]),
      ...(c === undefined ? [] : [file(i.cluster, "cluster")]),
    ],
    measured: true,
  };
}

/** Seconds to 0.1. */
const sec = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
/** A drill's outage; "at least" when it ran to the load's end. */
const outageSec = (d: Pick<DrillView, "writeOutageMs" | "writeOutageOpen">): string =>
  `${d.writeOutageOpen === true ? "at least " : ""}${sec(d.writeOutageMs)}`;

/**
 * One primary drill as the verdict says it: the outage (cluster: the affected shard's, with the
 * share of the slots that stopped and the merged gap that hides it), the no-WAIT writer's loss
 * (as applications write) against its bound, the WAIT writer's apart, and unexpected replies.
 */
export function drillClause(d: DrillView): string {
  const perShard = d.shards !== undefined && d.shards.length > 0;
  const stop = d.keyspaceStopped;
  const share = stop == null || stop.slots === 0 ? "" : `, ${Math.round(stop.share * 100)}% of the slots`;
  const outage = perShard
    ? `the affected shard's writes stopped ${outageSec(d)}${share} (all shards merged: ${sec(d.aggregateOutageMs ?? 0)})`
    : `writes stopped ${outageSec(d)}`;
  const bound = d.ackedLossBound == null ? "" : ` (bound ≤ ${d.ackedLossBound.writes})`;
  const waitWriter =
    d.waitWriter == null
      ? ""
      : `; with WAIT after every write ${d.waitWriter.lostAckedWrites} of ${d.waitWriter.ackedWrites}`;
  const unexpected = (d.unexpectedReplies ?? 0) > 0 ? `; ${d.unexpectedReplies} UNEXPECTED replies (drill failed)` : "";
  return (
    `${outage}, healed in ${d.recoveryMs === null ? "—" : sec(d.recoveryMs)}, ${d.lostAckedWrites} of ${d.ackedWrites} acknowledged writes lost without WAIT${bound}` +
    `${waitWriter}, ${d.lostWaitedWrites} WAIT-confirmed writes lost${unexpected}${d.healed ? "" : " (NOT healed)"}`
  );
}

function drillOf(s: ReportSource | undefined, mode: ResultMode): DrillView | undefined {
  return s?.drills?.find((d) => d.mode === mode && d.fault === "primary");
}

function failover(i: VerdictInput): VerdictLine {
  const r = drillOf(i.replication, "replication");
  const c = drillOf(i.cluster, "cluster");
  if (r === undefined && c === undefined) {
    return {
      topic: "failover",
      text: "A primary's failure: not measured (run the drills: `--drills primary`).",
      from: [],
      measured: false,
    };
  }
  const say = (mode: ResultMode, d: DrillView | undefined): string =>
    d === undefined ? `${mode}: not measured` : `${mode}: ${drillClause(d)}`;
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
  return (s?.rows ?? [])
    .filter(
      (r) => r.mode === mode && r.test === test && typeof r.usd_per_million_ops_per_s === "number" && !isClientBound(r),
    )
    .at(-1);
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
    from: [
      where(i.replication, "usd_per_million_ops_per_s of the replication rows"),
      where(i.cluster, "usd_per_million_ops_per_s of the cluster rows"),
    ],
    measured: true,
  };
}

/** The choice's write clause: a winner only when the ranges do not overlap. */
function writeClause(r: Range, c: Range): string {
  if (withinNoise(r, c))
    return `one primary and the cluster wrote alike here (no difference beyond run-to-run noise: ${opsText(r)} against ${opsText(c)} ops/s), so writes alone do not call for cluster mode on this hardware`;
  return c.median > r.median
    ? `a peak write rate under ${fmtRps(r.median)} ops/s fits one primary (replication mode); above it, only cluster mode went further here (${fmtRps(c.median)} ops/s)`
    : `cluster mode did not write faster than one primary here (${fmtRps(c.median)} against ${fmtRps(r.median)} ops/s): on this hardware writes alone do not call for it`;
}

/** $ per 1M ops/s with the range the runs allow: the hour's price over the rps range. */
function usdRange(row: ResultRow): Range {
  const usd = row.usd_per_million_ops_per_s as number;
  const rps = rangeOf(row, "rps");
  const scale = (x: number): number => (x > 0 ? (usd * row.rps) / x : Number.NaN);
  return { median: usd, min: scale(rps.max), max: scale(rps.min), runs: rps.runs };
}

/** The choice's cost clause: a cheaper mode only when the cost ranges do not overlap. */
function costClause(r: ResultRow, c: ResultRow): string {
  const [ru, cu] = [usdRange(r), usdRange(c)];
  const usd = (x: Range): string => rangeText(x, (v) => `$${v.toFixed(2)}`);
  if (withinNoise(ru, cu))
    return `a million SET/s costs the same in both modes within run-to-run noise (${usd(ru)} against ${usd(cu)})`;
  return `a million SET/s costs less in ${ru.median <= cu.median ? "replication" : "cluster"} mode`;
}

/** The choice the measured lines support; each clause only from a measured line. */
function choice(lines: readonly VerdictLine[], i: VerdictInput): VerdictLine {
  const clauses: string[] = [];
  const r = writeRow(i.replication, "replication").row;
  const c = writeRow(i.cluster, "cluster").row;
  if (r !== undefined && c !== undefined) clauses.push(writeClause(rangeOf(r, "rps"), rangeOf(c, "rps")));
  const f = lines.find((l) => l.topic === "failover" && l.measured);
  const rd = drillOf(i.replication, "replication");
  const cd = drillOf(i.cluster, "cluster");
  if (f !== undefined && rd !== undefined && cd !== undefined) {
    // Cluster: the affected shard's outage (shard-outage.ts), never the merged gap the other shards hide.
    // An outage that ran to the load's end is a lower bound: it cannot be the shorter one.
    const less = rd.writeOutageMs <= cd.writeOutageMs ? rd : cd;
    const both = `replication ${outageSec(rd)}, cluster's affected shard ${outageSec(cd)}`;
    clauses.push(
      less.writeOutageOpen === true
        ? `which mode's writes stopped for less time after a primary's failure is not known (${both}: an outage still running when the load stopped is only a lower bound)`
        : `a primary's failure stopped writes for less time in ${less === rd ? "replication" : "cluster"} mode (${both})`,
    );
  }
  const costLine = costRow(i.replication, "replication", "SET");
  const costCluster = costRow(i.cluster, "cluster", "SET");
  if (costLine !== undefined && costCluster !== undefined) clauses.push(costClause(costLine, costCluster));
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
  const has = (s: ReportSource, m: ResultMode) =>
    s.rows.some((r) => r.mode === m) || (s.drills ?? []).some((d) => d.mode === m);
  const both = sources.filter((s) => has(s, "replication") && has(s, "cluster"));
  if (both.length > 0) return both.map((s) => ({ label: s.label, input: { replication: s, cluster: s } }));
  const r = sources.filter((s) => has(s, "replication"));
  const c = sources.filter((s) => has(s, "cluster"));
  if (r.length === 1 && c.length === 1)
    return [{ label: `${c[0]?.label} vs ${r[0]?.label}`, input: { replication: r[0], cluster: c[0] } }];
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
  return [`when to use which (computed${label === "" ? "" : `: ${label}`})`, ...lines.map((l) => `  - ${l.text}`)].join(
    "\n",
  );
}
