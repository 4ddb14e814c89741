/**
 * The Sentinels' own account of a replication drill: every event each Sentinel publishes on its
 * pub/sub (`+sdown`, `+odown`, `+try-failover`, `+vote-for-leader`, `+elected-leader`,
 * `+failover-state-*`, `-failover-abort-*`, `+selected-slave`, `+promoted-slave`,
 * `+config-update-from`, `+switch-master`, `+failover-end`, ...), subscribed with PSUBSCRIBE `*`
 * (Sentinel's events are its channels: sentinel.c, sentinelEvent), with its time from the fault.
 * A slow failover shows where its time went: detection (`+sdown` → `+odown`), the election
 * (`+try-failover` → `+elected-leader`, or `-failover-abort-not-elected` and no new try until
 * 2 × failover-timeout), the replica selection (`-failover-abort-no-good-slave`), the promotion
 * confirmed at the leader's next INFO of the replica (`+failover-state-wait-promotion` →
 * `+promoted-slave`), the other Sentinels' switch (`+config-update-from`). Pure.
 */

/** One event as received: which Sentinel, when (Date.now()), its channel and payload. */
export interface SentinelEventAt {
  sentinel: string;
  at: number;
  channel: string;
  payload: string;
}

/** One event in a drill row: ms from the fault (negative: before it), the Sentinel, the event, its payload. */
export interface SentinelEventRow {
  t: number;
  sentinel: string;
  event: string;
  detail: string;
}

/**
 * The failover's steps as the Sentinels report them: the first time any Sentinel published each (ms from the fault),
 * null if none did.
 */
export interface FailoverSteps {
  sdownMs: number | null;
  odownMs: number | null;
  tryFailoverMs: number | null;
  electedMs: number | null;
  /** `+failover-state-wait-promotion`: REPLICAOF NO ONE (or FAILOVER TO) sent to the chosen replica. */
  promotionSentMs: number | null;
  /** `+promoted-slave`: the leader saw the replica answer role:master (its next INFO). */
  promotedMs: number | null;
  /** The first `+switch-master` or `+config-update-from`: a Sentinel switched its primary. */
  switchedMs: number | null;
  /** Every `-failover-abort-*` (e.g. `-failover-abort-no-good-slave`, `-failover-abort-not-elected`), in order. */
  aborts: string[];
}

/** Hello traffic and link noise, not failover steps. */
const NOISE = /^(__sentinel__:|[+-](cmd|pubsub)-link-reconnection$)/;

/** The events from `since` on (Date.now()), times relative to `faultAt`, in time order. */
export function sentinelEventRows(
  events: readonly SentinelEventAt[],
  faultAt: number,
  since = faultAt,
): SentinelEventRow[] {
  return events
    .filter((e) => e.at >= since && !NOISE.test(e.channel))
    .map((e) => ({ t: Math.round(e.at - faultAt), sentinel: e.sentinel, event: e.channel, detail: e.payload }))
    .sort((a, b) => a.t - b.t);
}

/** The first time of each failover step in `rows`. */
export function failoverSteps(rows: readonly SentinelEventRow[]): FailoverSteps {
  const first = (match: (event: string) => boolean): number | null => rows.find((r) => match(r.event))?.t ?? null;
  return {
    sdownMs: first((e) => e === "+sdown"),
    odownMs: first((e) => e === "+odown"),
    tryFailoverMs: first((e) => e === "+try-failover"),
    electedMs: first((e) => e === "+elected-leader"),
    promotionSentMs: first((e) => e === "+failover-state-wait-promotion"),
    promotedMs: first((e) => e === "+promoted-slave"),
    switchedMs: first((e) => e === "+switch-master" || e === "+config-update-from"),
    aborts: rows
      .filter((r) => r.event.startsWith("-failover-abort"))
      .map((r) => `${r.event} @${r.t} ms (${r.sentinel})`),
  };
}

/** One line for the drill's step log: `+sdown 4.1 s, +odown 4.2 s, ... ; aborts: ...`. */
export function renderFailoverSteps(s: FailoverSteps): string {
  const sec = (ms: number | null): string => (ms === null ? "—" : `${(ms / 1000).toFixed(2)} s`);
  const parts = [
    `+sdown ${sec(s.sdownMs)}`,
    `+odown ${sec(s.odownMs)}`,
    `+try-failover ${sec(s.tryFailoverMs)}`,
    `+elected-leader ${sec(s.electedMs)}`,
    `promotion sent ${sec(s.promotionSentMs)}`,
    `+promoted-slave ${sec(s.promotedMs)}`,
    `switch ${sec(s.switchedMs)}`,
  ];
  return `${parts.join(", ")}${s.aborts.length === 0 ? "" : `; aborts: ${s.aborts.join(", ")}`}`;
}
