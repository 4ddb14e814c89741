/**
 * Which alerts a drill fired, and when: from samples of Prometheus's `/api/v1/alerts` taken while
 * the drill ran (harness/drill/alert-watch.ts), one row per alert and pod, with the times it was
 * first pending, first firing and gone again, in ms from the fault. Pure.
 */

/** One alert as `/api/v1/alerts` lists it. */
export interface AlertSample {
  name: string;
  state: "pending" | "firing";
  labels: Record<string, string>;
}

/** What the alerts endpoint answered at `at` (Date.now()). */
export interface AlertSnapshot {
  at: number;
  alerts: readonly AlertSample[];
}

/** One alert (per pod) the drill saw, times in ms from the fault (negative: before it). */
export interface AlertSeen {
  alert: string;
  /** The pod it fired on; absent for alerts over a whole release. */
  pod?: string;
  severity: string;
  pendingMs: number;
  /** null: pending only, it never fired. */
  firingMs: number | null;
  /** null: still pending or firing at the last sample. */
  resolvedMs: number | null;
  /**
   * Already pending or firing at the first sample read: it began before the window, which is all `pendingMs` (and
   * `firingMs`, when it was firing then) can say. Absent otherwise.
   */
  activeAtStart?: true;
}

const keyOf = (a: AlertSample): string => `${a.name}\u0000${a.labels.pod ?? ""}`;

/**
 * The rows, ordered by when each was first seen: one per episode, so an alert gone from a sample and
 * back in a later one is a second row (merged, a brief pending before the fault would read as
 * pending all along).
 */
export function alertsSeen(snapshots: readonly AlertSnapshot[], faultAt: number): AlertSeen[] {
  const open = new Map<string, AlertSeen>();
  const rows: AlertSeen[] = [];
  const ordered = [...snapshots].sort((a, b) => a.at - b.at);
  for (const s of ordered) {
    const first = s === ordered[0];
    const t = Math.round(s.at - faultAt);
    const present = new Set<string>();
    for (const a of s.alerts) {
      const key = keyOf(a);
      present.add(key);
      let row = open.get(key);
      if (row === undefined) {
        row = {
          alert: a.name,
          ...(a.labels.pod === undefined ? {} : { pod: a.labels.pod }),
          severity: a.labels.severity ?? "none",
          pendingMs: t,
          firingMs: null,
          resolvedMs: null,
          ...(first ? { activeAtStart: true as const } : {}),
        };
        open.set(key, row);
        rows.push(row);
      }
      if (a.state === "firing" && row.firingMs === null) row.firingMs = t;
    }
    for (const [key, row] of open)
      if (!present.has(key)) {
        row.resolvedMs = t;
        open.delete(key);
      }
  }
  return rows.sort((a, b) => a.pendingMs - b.pendingMs || a.alert.localeCompare(b.alert));
}

/** "ValkeyPrimaryChanged (valkey-1) firing +3.2 s, resolved +9.0 s" lines for the drill's log and table. */
export function renderAlertsSeen(rows: readonly AlertSeen[]): string {
  if (rows.length === 0) return "no alert pending or firing";
  const s = (ms: number): string => `${ms < 0 ? "−" : "+"}${(Math.abs(ms) / 1000).toFixed(1)} s`;
  return rows
    .map(
      (r) =>
        `${r.alert}${r.pod === undefined ? "" : ` (${r.pod})`} ${r.severity}: ` +
        `${r.activeAtStart ? `already active at the first sample ${s(r.pendingMs)}` : `pending ${s(r.pendingMs)}`}, ` +
        `${r.firingMs === null ? "never fired" : `firing ${r.activeAtStart && r.firingMs === r.pendingMs ? "by " : ""}${s(r.firingMs)}`}, ` +
        `${r.resolvedMs === null ? "still active at the end" : `resolved ${s(r.resolvedMs)}`}`,
    )
    .join("; ");
}
