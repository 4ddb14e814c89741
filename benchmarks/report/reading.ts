/**
 * "How to read this": what the numbers in this particular report can and cannot say. Each
 * paragraph is chosen from the sources' data (a local run gets the shared-machine caveat, a
 * stack the one-client-pod caveat, mixed workloads a warning), so the text never claims more
 * than was measured.
 */
import { html, type SafeHtml } from "./html.js";
import type { ReportInput, ReportSource } from "./model.js";

function distinct<T>(values: T[]): T[] {
  return [...new Set(values)];
}

/** A source with benchmark figures (rows or a sweep), not only a scale ladder. */
const benchmarked = (s: ReportSource): boolean => s.rows.length > 0 || (s.sweep?.length ?? 0) > 0;

function localCaveat(sources: ReportSource[]): SafeHtml | null {
  const local = sources.filter((s) => s.kind === "local-run" && benchmarked(s));
  if (local.length === 0) return null;
  const cpus = distinct(
    local.map((s) =>
      s.machine ? `${s.machine.cpus} CPU${s.machine.cpus === 1 ? "" : "s"}` : "an unrecorded number of CPUs",
    ),
  );
  return html`<li><strong>Local runs share one machine.</strong> Every valkey-server and the benchmark client of ${local
    .map((s) => s.label)
    .join(
      ", ",
    )} ran on the same machine (${cpus.join(", ")}), on 127.0.0.1. The cluster's primaries, its replicas and the client all compete
for the same cores, so cluster mode cannot show the per-node scale-out it has when each primary has its own EKS node: a
cluster speedup here only says how much spreading requests over several server processes helped on these few cores. And
the "zones" are names assigned round-robin, so no cross-zone latency is in these numbers. A local run proves the pipeline
(start, verify, benchmark, verify again) and gives numbers comparable between runs on the same machine; it is not a capacity
figure for either topology.</li>`;
}

function stackCaveat(sources: ReportSource[]): SafeHtml | null {
  const stacks = sources.filter((s) => s.kind === "stack");
  if (stacks.length === 0) return null;
  return html`<li><strong>Deployed stacks are measured by one client pod.</strong> The benchmark of ${stacks
    .map((s) => s.label)
    .join(", ")} ran as one Job inside the cluster; a single client can saturate before a large cluster does, so a low
cluster speedup there may be the client's limit, not the servers'.</li>`;
}

function endpointCaveat(sources: ReportSource[]): SafeHtml | null {
  const endpoints = sources.filter((s) => s.kind === "endpoint");
  if (endpoints.length === 0) return null;
  return html`<li><strong>Endpoint benchmarks include the path to the endpoint.</strong> ${endpoints
    .map((s) => s.label)
    .join(
      ", ",
    )} ran one benchmark client on this machine against an existing endpoint: the latencies include the network between
them, and a single client machine may saturate before the endpoint does. No zone map is known for a foreign endpoint, so
its zone checks were skipped.</li>`;
}

function mixedCaveat(input: ReportInput): SafeHtml | null {
  if (input.sources.length < 2) return null;
  const shape = (s: ReportSource) =>
    `${s.workload.clients ?? "?"}×P${s.workload.pipeline ?? "?"}, ${s.workload.dataSize ?? "?"} B`;
  const shapes = distinct(input.sources.map(shape));
  const kinds = distinct(input.sources.map((s) => s.kind));
  const parts: string[] = [];
  if (shapes.length > 1) parts.push(`the workloads differ (${shapes.join(" vs ")} connections × pipeline, value size)`);
  if (kinds.length > 1) parts.push("they ran in different environments (see Workload, versions and machine)");
  if (parts.length === 0) return null;
  return html`<li><strong>Compare sources with care:</strong> ${parts.join("; ")}.</li>`;
}

function rerunNote(input: ReportInput): SafeHtml | null {
  const rows = input.sources.flatMap((s) => s.rows);
  const reruns = rows.filter((r) => r.notes.includes("rerun")).length;
  const short = rows.filter((r) => r.duration_s < 1).length;
  if (reruns === 0 && short === 0) return null;
  return html`<li>${reruns > 0 ? `${reruns} of ${rows.length} tests ran too briefly at first and were re-run with more requests (see Notes in All rows). ` : ""}${
    short > 0 ? `${short} test(s) still ran under one second: their rps is coarse.` : ""
  }</li>`;
}

function spreadNote(input: ReportInput): SafeHtml | null {
  const rows = input.sources.flatMap((s) => s.rows);
  if (rows.length === 0) return null;
  const runs = distinct(rows.map((r) => r.runs ?? 1));
  const bound = rows.filter((r) => r.client_bound === true).length;
  const measured = rows.some((r) => r.client_cpu_pct !== undefined);
  const spread = runs.some((n) => n > 1)
    ? `Every measurement ran ${runs.join(" or ")} times, interleaved with the others (run 1 of every one, then run 2, …): each figure is the median of its runs, the small numbers under it the lowest and highest run, and two figures whose ranges overlap differ by no more than run-to-run noise. `
    : "Each figure is one run (no --repeat), so its run-to-run noise was not measured: a difference of a few tens of percent between two rows may be noise. ";
  const client = !measured
    ? "The load generator's CPU use was not measured for these rows."
    : bound > 0
      ? `${bound} row(s) are marked client-bound: their load generator used ≥ 90 % of the cores it may use, so their rps is the client's limit, not the server's, and the verdict does not take them as a ceiling.`
      : "No row's load generator reached 90 % of the cores it may use (Client CPU in All rows).";
  return html`<li><strong>Spread and client:</strong> ${spread}${client}</li>`;
}

function sweepNote(input: ReportInput): SafeHtml | null {
  const rows = input.sources.flatMap((s) => s.sweep ?? []);
  if (rows.length === 0) return null;
  const saturated = rows.filter((r) => r.client_saturated === true).length;
  const unpinned = rows.some((r) => !r.pinned && r.client_cpus !== null);
  const unmeasured = rows.some((r) => r.client_saturated === null);
  return html`<li><strong>Sweep:</strong> scale is rps ÷ rps at the first step, and the exponent p = ln(scale) ÷ ln(shards ÷ first
shards): 1.0 is linear scaling, 0 is none. ${unpinned ? "Without --pin every shard, the client and the OS share all CPUs, so on a small machine the exponent mostly shows the CPU count, not Valkey. " : ""}${
    saturated > 0
      ? `${saturated} step(s) are flagged client-saturated (client CPU ≥ 90% of what it could use): their rps is the client's limit.`
      : unmeasured
        ? ""
        : "No step had a saturated client."
  }${
    unmeasured
      ? " Steps of a deployed stack were measured by the stack's benchmark Job inside the cluster, whose CPU is not sampled: a flat exponent there may be the client pods' limit (raise benchmark.clientPods), not the servers'."
      : ""
  }</li>`;
}

function ladderNote(input: ReportInput): SafeHtml | null {
  if (!input.sources.some((s) => s.scaleLadder !== undefined)) return null;
  return html`<li><strong>Cost as the cluster grows:</strong> every member of every size ran on this one machine, so a step
whose work is done by every member at once (start, heal: each member's own script) shares these few cores and grows faster
here than on EKS, where each member has its own node; a step this tool drives from one place (bootstrap, verify) or that
Valkey's own timers set (failover: cluster-node-timeout and the bus's ping interval) carries over. The exponent k compares
sizes on the same machine; the absolute seconds are this machine's.</li>`;
}

/** The whole "How to read this" list. */
export function howToRead(input: ReportInput): SafeHtml {
  const replicationMeasured = input.sources.some((s) => s.rows.some((r) => r.mode === "replication"));
  const figures = input.sources.some(benchmarked);
  return html`<ul class="reading">
${figures ? rpsNotes() : ""}
${replicationMeasured ? html`<li><strong>Replication mode</strong> numbers are one primary's: the benchmark sends every request to the primary, the replicas only replicate.</li>` : ""}
${localCaveat(input.sources)}
${stackCaveat(input.sources)}
${endpointCaveat(input.sources)}
${mixedCaveat(input)}
${rerunNote(input)}
${spreadNote(input)}
${sweepNote(input)}
${ladderNote(input)}
</ul>`;
}

/** What rps and the latency percentiles are (for sources with benchmark figures). */
function rpsNotes(): SafeHtml {
  return html`<li><strong>rps</strong> is what the benchmark client reports: requests divided by the test's elapsed time in whole
milliseconds. A test shorter than its minimum duration is re-run with more requests, because a sub-second run gives a
coarse, quantised figure (that quantisation, not a limit of the client, is what looks like a "1,000,000 rps cap").</li>
<li><strong>p50 / p95 / p99</strong> are the client's per-request latencies, measured with the workload's pipeline depth: with
pipelining a request also waits for the ones ahead of it in its batch, so these are not single-request round trips.</li>`;
}
