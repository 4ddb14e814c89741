/**
 * Events in a soak's series, found by comparing each member's INFO from one sample to the next
 * (the baseline, read before the load, is the first). Pure: series in, events out.
 *
 * Times: a sample is stamped at its load window's end, and its members' INFO is read right after,
 * so an event can carry the end of the window just before the moment it began (by up to the INFO
 * read's delay), never an earlier one.
 * - aof-rewrite: `aof_rewrites` went up, or `aof_rewrite_in_progress` was seen at 1 where it was
 *   0 before. One event per rewrite, at the first sample that shows it; it lasts until a sample
 *   shows no rewrite in progress. Its fork time is
 *   `latest_fork_usec` once it is over; its latency spike is the highest window p99 from the
 *   window it was first seen in to the one it ended in, when that is at least twice the soak's
 *   median window p99.
 * - full-resync: `sync_full` went up on a member that is a primary in both samples (a replica
 *   asked it for a full copy: a new replica, or one whose PSYNC could not continue).
 * - link-down: a replica's `master_link_status` went from up to anything else (one event per
 *   down spell; the evidence says when it was up again, if it was).
 * - role-change: `role` differs from the previous sample's (a failover or a REPLICAOF).
 * - unreachable: a member that answered did not (one event per spell).
 *
 * What it cannot see: anything that starts and ends between two samples without moving a
 * counter (a link that drops and recovers within the interval; counters do catch every rewrite
 * and full sync), nor a member restarted between samples (its counters restart from 0: a count
 * that goes down is taken as a restart and the next rise counts from there).
 */
import type { MemberInfo, SoakEvent, SoakSample } from "./soak-sample.js";

/** A spike is a rewrite's highest window p99 at least this many times the soak's median window p99. */
export const SPIKE_FACTOR = 2;

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return 0;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

/** `name a→b` for the fields that changed. */
const changed = (prev: MemberInfo, cur: MemberInfo, keys: readonly (keyof MemberInfo)[]): string =>
  keys
    .filter((k) => prev[k] !== cur[k])
    .map((k) => `${k} ${String(prev[k])}→${String(cur[k])}`)
    .join(", ");

const rose = (prev: number | null, cur: number | null): boolean => prev !== null && cur !== null && cur > prev;

interface OpenRewrite {
  event: SoakEvent;
  /** Index of the sample it was first seen in. */
  from: number;
}

/** What every event of one member at one sample starts from. */
type EventBase = Omit<SoakEvent, "kind" | "evidence">;

/** One member's walk through the samples: the last INFO with figures, and the spells still open. */
interface MemberWalk {
  member: string;
  samples: readonly SoakSample[];
  medianP99: number;
  events: SoakEvent[];
  /** The last INFO that had figures (the baseline at first). */
  prev: MemberInfo | undefined;
  rewrite?: OpenRewrite;
  linkDown?: SoakEvent;
  unreachable?: SoakEvent;
}

export function detectSoakEvents(baseline: readonly MemberInfo[], samples: readonly SoakSample[]): SoakEvent[] {
  const events: SoakEvent[] = [];
  const medianP99 = median(samples.filter((s) => s.requests > 0).map((s) => s.p99_ms));
  const members = [
    ...new Set([...baseline.map((m) => m.member), ...samples.flatMap((s) => s.members.map((m) => m.member))]),
  ];
  for (const member of members) {
    const walk: MemberWalk = {
      member,
      samples,
      medianP99,
      events,
      prev: baseline.find((m) => m.member === member),
    };
    samples.forEach((sample, i) => compareSample(walk, sample, i));
    if (walk.rewrite !== undefined) walk.rewrite.event.evidence += "; still in progress at the last sample";
  }
  return events.sort((a, b) => a.t_s - b.t_s || a.member.localeCompare(b.member));
}

/** Sample i of the member against its last INFO with figures: each kind of event, in the order they are pushed. */
function compareSample(walk: MemberWalk, sample: SoakSample, i: number): void {
  const { member, events } = walk;
  const cur = sample.members.find((m) => m.member === member);
  if (cur === undefined) return;
  const base: EventBase = { member, t_s: sample.t_s, at: sample.at, fork_usec: null, latency_spike: null };
  // No figures: compare the next answer with the last one that had them.
  if (!trackReachable(walk, sample, cur, base)) return;
  const prev = walk.prev;
  if (prev === undefined || prev.error !== null) {
    walk.prev = cur;
    return;
  }
  if (prev.role !== cur.role)
    events.push({
      ...base,
      kind: "role-change",
      evidence: changed(prev, cur, ["role", "master_link_status", "connected_slaves"]),
    });
  trackRewrite(walk, prev, cur, i, base);
  // Full resyncs served by a primary.
  if (prev.role === "master" && cur.role === "master" && rose(prev.sync_full, cur.sync_full))
    events.push({
      ...base,
      kind: "full-resync",
      evidence: changed(prev, cur, [
        "sync_full",
        "sync_partial_ok",
        "sync_partial_err",
        "connected_slaves",
        "rdb_bgsave_in_progress",
        "latest_fork_usec",
      ]),
    });
  trackLink(walk, prev, cur, sample, base);
  walk.prev = cur;
}

/** Opens an unreachable spell when INFO failed (false: this sample has no figures), closes it when it answers again. */
function trackReachable(walk: MemberWalk, sample: SoakSample, cur: MemberInfo, base: EventBase): boolean {
  if (cur.error !== null) {
    if (walk.unreachable === undefined && (walk.prev === undefined || walk.prev.error === null)) {
      walk.unreachable = { ...base, kind: "unreachable", evidence: `INFO failed: ${cur.error}` };
      walk.events.push(walk.unreachable);
    }
    return false;
  }
  if (walk.unreachable !== undefined) {
    walk.unreachable.evidence += `; answered again at t=${sample.t_s} s`;
    walk.unreachable = undefined;
  }
  return true;
}

/**
 * AOF rewrites: opens one when the count rose (not a restart) or one is seen starting; closes it when none is in
 * progress.
 */
function trackRewrite(walk: MemberWalk, prev: MemberInfo, cur: MemberInfo, i: number, base: EventBase): void {
  const restarted = prev.aof_rewrites !== null && cur.aof_rewrites !== null && cur.aof_rewrites < prev.aof_rewrites;
  const counted = rose(prev.aof_rewrites, cur.aof_rewrites) && !restarted;
  const started = cur.aof_rewrite_in_progress === 1 && prev.aof_rewrite_in_progress !== 1;
  if (walk.rewrite === undefined && (counted || started)) {
    walk.rewrite = {
      event: {
        ...base,
        kind: "aof-rewrite",
        evidence: changed(prev, cur, ["aof_rewrite_in_progress", "aof_rewrites", "total_forks"]),
      },
      from: i,
    };
    walk.events.push(walk.rewrite.event);
  }
  if (walk.rewrite !== undefined && cur.aof_rewrite_in_progress !== 1) closeRewrite(walk, i, cur);
}

/** Ends the open rewrite at sample `upTo`: its fork time, its latency spike (if any), when it was over. */
function closeRewrite(walk: MemberWalk, upTo: number, cur: MemberInfo): void {
  const { rewrite, samples, medianP99 } = walk;
  if (rewrite === undefined) return;
  const p99 = Math.max(...samples.slice(rewrite.from, upTo + 1).map((s) => s.p99_ms));
  rewrite.event.fork_usec = cur.latest_fork_usec;
  rewrite.event.latency_spike =
    medianP99 > 0 && p99 >= SPIKE_FACTOR * medianP99 ? { p99_ms: p99, median_p99_ms: medianP99 } : null;
  rewrite.event.evidence += `; over by t=${(samples[upTo] as SoakSample).t_s} s (aof_last_bgrewrite_status ${String(cur.aof_last_bgrewrite_status)}, latest_fork_usec ${String(cur.latest_fork_usec)})`;
  walk.rewrite = undefined;
}

/** Replica link: a link-down spell from up to anything else, until a sample shows it up again. */
function trackLink(walk: MemberWalk, prev: MemberInfo, cur: MemberInfo, sample: SoakSample, base: EventBase): void {
  if (cur.role !== "slave" || prev.role !== "slave") return;
  if (prev.master_link_status === "up" && cur.master_link_status !== "up" && walk.linkDown === undefined) {
    walk.linkDown = {
      ...base,
      kind: "link-down",
      evidence: changed(prev, cur, ["master_link_status", "master_sync_in_progress"]),
    };
    walk.events.push(walk.linkDown);
  } else if (walk.linkDown !== undefined && cur.master_link_status === "up") {
    walk.linkDown.evidence += `; up again at t=${sample.t_s} s`;
    walk.linkDown = undefined;
  }
}

/** Human lines for the notes and summary.md: `t=12 s aof-rewrite on 127.0.0.1:7001: aof_rewrites 0→1 …`. */
export function describeSoakEvent(e: SoakEvent): string {
  const fork = e.fork_usec === null ? "" : `; fork ${e.fork_usec} µs`;
  const spike =
    e.latency_spike === null
      ? ""
      : `; window p99 ${e.latency_spike.p99_ms} ms vs median ${e.latency_spike.median_p99_ms} ms`;
  return `t=${e.t_s} s ${e.kind} on ${e.member}: ${e.evidence}${fork}${spike}`;
}
